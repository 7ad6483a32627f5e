package voice

import (
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// Turn is one member's utterance, transcribed, as the session hands it to
// Stage A and to a Responder.
type Turn struct {
	// ID is unique per session ("u<speaker>-<n>").
	ID                 string
	GuildID, ChannelID string
	SpeakerID          string
	SpeakerName        string
	// Transcript is the merged, checked transcript.
	Transcript string
	// Audio is the utterance's mono PCM in Format (all chunks, pre-roll
	// included): 16 kHz for speech to text. A realtime responder resamples it.
	Audio  []int16
	Format pcm.Format
	// Duration is the audio length.
	Duration time.Duration
	// SpeechEnd is the wall time endpointing closed the utterance: the end of
	// the end-of-speech silence, where every phase is measured from.
	SpeechEnd time.Time
	// Addressed: the voice name matcher found the bot addressed (such a turn
	// is not held for room-aware coalescing).
	Addressed bool

	marks *marks
}

// marks are the phase times of one turn. Safe for concurrent use; the first
// mark of a phase wins.
type marks struct {
	mu sync.Mutex // guards at
	at [PhaseFirstPacket + 1]time.Time
}

func (m *marks) mark(p Phase, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at[p].IsZero() {
		m.at[p] = at
	}
}

func (m *marks) get(p Phase) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at[p]
}
