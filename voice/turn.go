package voice

import (
	"context"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/decision"
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

// turn is one utterance on its way through the stages of runTurn. Each stage
// reads what the stages before it left here:
//
//	hear, endpoint → Turn (speaker, audio, speech end) and chunks
//	transcribe     → Turn.Transcript
//	admit          ← steps: Stage A's input from the session loop, then the reply it opened
//	generate, speak ← the replyRun the session loop sent on steps
type turn struct {
	Turn
	// chunks are the transcripts of the utterance's chunks, in order: each
	// chunk is transcribed as soon as the endpointer cuts it.
	chunks []chan sttResult
	// steps carries the session loop's answers while the turn is admitted:
	// Stage A to run, or the reply to give. Capacity 1: the loop sends one
	// step per request, and never blocks.
	steps chan step
}

func newTurn(t Turn, chunks []chan sttResult) *turn {
	t.marks = &marks{}
	return &turn{Turn: t, chunks: chunks, steps: make(chan step, 1)}
}

// step is the session loop's answer to a turn waiting in admit: run Stage A
// on decide, or give reply. Neither: the turn ends here (denied, or dropped).
type step struct {
	decide *decision.VoiceTurn
	reply  *replyRun
}

// replyRun is one reply the session loop opened (the bot's turn): what the
// generate and speak stages need. It runs on the turn's goroutine, or on its
// own for the join greeting.
type replyRun struct {
	ar       *activeReply
	ctx      context.Context // ends on barge-in, when the session ends, or when the reply is done
	turn     *Turn           // nil for the greeting
	d        decision.Decision
	greeting int // attempt number for the greeting, else 0
	prompt   promptInput
	marks    *marks
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
