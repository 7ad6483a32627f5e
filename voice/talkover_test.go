package voice_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// talkOver has asker say the question fixture, waits until asker has heard frames frames of the
// bot's answer, then has talker say pcm over it (another member: a barge-in or music; the asker
// again: they went on, a false end) in the background. The returned function waits for talker
// to finish: defer it.
func (w *world) talkOver(asker *voicesim.Member, question string, frames int, talker *voicesim.Member, pcm []int16) (wait func()) {
	w.t.Helper()
	w.play(asker, question)
	if err := asker.WaitHeard(w.ctx, w.botID, frames); err != nil {
		w.t.Fatalf("%s heard no %d frames of an answer: %v", asker.UserID(), frames, err)
	}
	var played sync.WaitGroup
	played.Go(func() { _ = talker.PlayPCM(w.ctx, pcm) })
	return played.Wait
}

// cutWithin checks how much of an answer went out after it was stopped: cut is the event that
// stopped it (voice_barge_in, voice_false_end: played_ms at the cut), end the answer's own
// event (played_ms when it ended: frames sent, less those dropped unsent). At most limit more,
// and something had played before the cut.
func cutWithin(t testing.TB, cut, end map[string]any, limit time.Duration) {
	t.Helper()
	atCut, _ := cut["played_ms"].(float64)
	atEnd, _ := end["played_ms"].(float64)
	if atCut <= 0 || atEnd < atCut || time.Duration(atEnd-atCut)*time.Millisecond > limit {
		t.Errorf("played %v ms at the cut (%v), %v ms when the answer ended (%v): want at most %v more",
			atCut, cut["msg"], atEnd, end["msg"], limit)
	}
}

// generations returns the streamed generation requests (the answers, not the classifier's) whose
// last user message contains s, in order.
func (w *world) generations(s string) []openaisim.Recorded {
	var out []openaisim.Recorded
	for _, r := range w.osim.RequestsFor(openaisim.EndpointResponses) {
		if r.Stream && strings.Contains(r.LastUserText, s) {
			out = append(out, r)
		}
	}
	return out
}

// promptFor returns the prompt of the last answer generated for a turn containing s ("" if none).
func (w *world) promptFor(s string) string {
	gens := w.generations(s)
	if len(gens) == 0 {
		return ""
	}
	return gens[len(gens)-1].Prompt
}
