package voice_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
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

// longWeather is an answer long enough to be talked over well before its end.
const longWeather = "Let me tell you all about the weather. In the morning there is fog over the hills. " +
	"By noon the sun comes out and it gets quite warm. In the evening clouds roll in from the west. " +
	"Tomorrow looks much the same, with a chance of rain at night."

// weatherRules answers the weather question with weather and bob's "can you hear me" with
// hearMe.
func weatherRules(weather, hearMe string) []openaisim.Rule {
	return []openaisim.Rule{
		{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "weather"}, Reply: openaisim.Reply{Text: weather}},
		{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "hear me"}, Reply: openaisim.Reply{Text: hearMe}},
	}
}

// checkBargeIn checks an answer of longWeather that a barge-in stopped (end: the answer's own
// event): at most the frame in flight went out after the cut, listener heard under half of it,
// and the next turn (bob's "can you hear me") is answered with a prompt that holds only what
// was said, marked [interrupted].
func (w *world) checkBargeIn(listener *voicesim.Member, end map[string]any) {
	w.t.Helper()
	cutWithin(w.t, w.logs.Events("voice_barge_in")[0], end, 20*time.Millisecond)
	full := int(openaisim.SpeechDuration(longWeather, 1) / (20 * time.Millisecond))
	if after := len(listener.Heard(w.botID)); after > full/2 {
		w.t.Errorf("%s heard %d of ~%d frames: playback did not stop early", listener.UserID(), after, full)
	}
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, "hear me")
	if next := w.promptFor("hear me"); !strings.Contains(next, "[interrupted]") || strings.Contains(next, "chance of rain") {
		w.t.Errorf("next prompt does not reflect the cut:\n%s", next)
	}
}

// talkOverWeather starts a world in which alice asks about the weather (answered with
// longWeather) and bob, once she has heard 25 frames of it, says "can you hear me" over it
// (answered with hearMe), with barge-in policy anyone. wait waits for bob to finish: defer it.
func talkOverWeather(t *testing.T, hearMe string) (w *world, alice *voicesim.Member, wait func()) {
	t.Helper()
	rules := append(transcriptByLength("banter, can you hear me?", "hey banter, what's the weather like today?"),
		weatherRules(longWeather, hearMe)...)
	w = newWorld(t, func(c *config.Config) { c.Voice.BargeIn.Policy = "anyone" }, rules...)
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	return w, alice, w.talkOver(alice, "hey-banter-weather", 25, bob, speech(t, "mike-hear-me"))
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
