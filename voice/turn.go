package voice

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
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
//
// A speculative turn (spec set) starts at a pause, before the end of the
// utterance is confirmed; its SpeechEnd is set by the session loop when the
// end comes (speculation.go).
type turn struct {
	Turn
	// chunks are the transcripts of the utterance's chunks, in order: each
	// chunk is transcribed as soon as the endpointer cuts it.
	chunks []*sttFuture
	// heard adds up what hearing the utterance (its transcriptions, speculative ones
	// included) and deciding on the turn cost: part of its reply's cost_usd (turncost.go).
	heard *llm.Tally
	// steps carries the session loop's answers while the turn is admitted:
	// Stage A to run, or the reply to give. Capacity 1: the loop sends one
	// step per request, and never blocks.
	steps chan step
	// spec is the turn's speculation; nil for a turn whose end was confirmed
	// before any work on it.
	spec *speculation
	// A speculative turn's transcript check, which the session loop applies
	// once its end is confirmed: the reason to drop it (with the merged
	// text), or the speech-to-text failure.
	drop   DropReason
	merged string
	sttErr error
	// endSilence is the silence that ended the utterance as the endpointer heard it (audio
	// time: the end event's position less its last speech frame's end), set by the hearing
	// clock before the loop sees the turn's end.
	endSilence time.Duration
	// continues is the turn of the same member that this one completes after a false end
	// (falseend.go): its words and audio come first in this turn's (transcribe adds them, and
	// clears it when that turn had nothing to keep). Set at creation.
	continues *turn
	// words is the turn's checked transcript once transcribe has it ("" when it was dropped or
	// its speech to text failed): a turn that continues this one waits for it.
	words *sttFuture
	// resume is the turn's standing for a false end: resumeOpen while its member may still
	// go on with it, then claimed by their resumption (the hearing clock) or closed by the
	// loop once its answer was heard to the end.
	resume atomic.Uint32
	// recovered: the turn is an utterance an earlier process was answering (openturns.go),
	// heard at heardAt; contextOnly: it only enters the timeline (its member has left).
	recovered, contextOnly bool
	heardAt                time.Time
}

func newTurn(t Turn, chunks []*sttFuture) *turn {
	t.marks = &marks{}
	return &turn{Turn: t, chunks: chunks, steps: make(chan step, 1), words: newSTTFuture(), heard: &llm.Tally{}}
}

// sttFuture is one chunk's transcript on its way: any number of turns may
// wait for it (a speculative turn and the turn that replaces it share the
// chunks before the pause).
type sttFuture struct {
	done chan struct{}
	res  sttResult
}

func newSTTFuture() *sttFuture { return &sttFuture{done: make(chan struct{})} }

// set delivers the result; once.
func (f *sttFuture) set(r sttResult) {
	f.res = r
	close(f.done)
}

// wait returns the result, or false when ctx ends first.
func (f *sttFuture) wait(ctx context.Context) (sttResult, bool) {
	select {
	case <-f.done:
		return f.res, true
	case <-ctx.Done():
		return sttResult{}, false
	}
}

// step is the session loop's answer to a turn waiting in admit: run Stage A
// on decide (speculative: before the turn's end is confirmed), or give
// reply. Neither: the turn ends here (denied, dropped, discarded).
type step struct {
	decide      *decision.VoiceTurn
	speculative bool
	reply       *replyRun
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
	// owner is the answered turn (nil for the greeting); spec its
	// speculation, if it had one.
	owner *turn
	spec  *speculation
	// hold gates a speculative reply's audio: the session loop closes it when
	// the turn's end is confirmed (after setting released and beginning the
	// Playback). Nil: the reply plays at once.
	hold     chan struct{}
	released atomic.Bool
	// cost adds up what the reply's model calls cost (its log line's cost_usd).
	cost *llm.Tally
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
