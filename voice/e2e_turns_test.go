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

// transcriptByLength answers transcriptions by clip length: the short
// "mike-hear-me" clip and the longer "hey-banter-weather" clip.
func transcriptByLength(short, long string) []openaisim.Rule {
	return []openaisim.Rule{
		{Name: "stt-short", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions, MaxAudio: 2500 * time.Millisecond},
			Reply: openaisim.Reply{Transcript: short}},
		{Name: "stt-long", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions, MinAudio: 2501 * time.Millisecond},
			Reply: openaisim.Reply{Transcript: long}},
	}
}

func playBoth(w *world, a *voicesim.Member, an string, b *voicesim.Member, bn string) {
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.PlayPCM(w.ctx, speech(w.t, an)) })
	wg.Go(func() { _ = b.PlayPCM(w.ctx, speech(w.t, bn)) })
	wg.Wait()
}

// TestTwoMembersOverEachOther: two members address the bot at the same
// time; both are answered, one after the other, and the second answer's
// prompt knows about both turns.
func TestTwoMembersOverEachOther(t *testing.T) {
	t.Parallel()
	rules := append(transcriptByLength("banter, can you hear me?", "hey banter, what's the weather like today?"),
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "hear me"}, Reply: openaisim.Reply{Text: "Loud and clear."}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "weather"}, Reply: openaisim.Reply{Text: "Sunny all day."}})
	// Only the member answered may interrupt: whether the answer to bob's short
	// question starts before alice's long one ends depends on timing, and alice
	// talking over it must not count as a barge-in here.
	w := newWorld(t, func(c *config.Config) { c.Voice.BargeIn.Policy = "reply_target" }, rules...)
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	playBoth(w, alice, "hey-banter-weather", bob, "mike-hear-me")
	w.waitLogs(2, `"msg":"stt_pipeline_reply_spoken"`)
	var gens []openaisim.Recorded
	for _, r := range w.osim.RequestsFor(openaisim.EndpointResponses) {
		if r.Stream {
			gens = append(gens, r)
		}
	}
	if len(gens) != 2 {
		t.Fatalf("%d generations, want 2", len(gens))
	}
	last := gens[1].Prompt
	if !strings.Contains(last, "alice: hey banter") || !strings.Contains(last, "bob: banter, can you hear me") {
		t.Errorf("second prompt lacks one of the turns:\n%s", last)
	}
	for _, m := range []*voicesim.Member{alice, bob} {
		if len(m.Heard(w.botID)) < 20 {
			t.Errorf("%s heard %d frames", m.UserID(), len(m.Heard(w.botID)))
		}
	}
}

// TestDeferredTurnAnsweredAfter: with barge-in off, a turn that arrives while
// the bot speaks is deferred (bot_turn_open) and answered after the reply.
func TestDeferredTurnAnsweredAfter(t *testing.T) {
	t.Parallel()
	rules := append(transcriptByLength("banter, can you hear me?", "hey banter, what's the weather like today?"),
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "weather"},
			Reply: openaisim.Reply{Text: "It is sunny and warm today, with a light breeze in the afternoon and clear skies tonight."}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "hear me"}, Reply: openaisim.Reply{Text: "Yes, I hear you."}})
	w := newWorld(t, func(c *config.Config) { c.Voice.BargeIn.Policy = "none" }, rules...)
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	w.play(alice, "hey-banter-weather")
	if err := alice.WaitHeard(w.ctx, w.botID, 10); err != nil {
		t.Fatal(err)
	}
	w.play(bob, "mike-hear-me") // while the bot is still talking
	w.waitLog(`"reason":"bot_turn_open"`)
	w.waitLogs(2, `"msg":"stt_pipeline_reply_spoken"`)
	lines := strings.Split(w.logs.String(), "\n")
	var order []string
	for _, l := range lines {
		if strings.Contains(l, `"msg":"stt_pipeline_reply_spoken"`) {
			order = append(order, l)
		}
	}
	if len(order) != 2 || !strings.Contains(order[0], "weather") || !strings.Contains(order[1], "hear me") {
		t.Fatalf("spoken replies: %q", order)
	}
	if w.logs.Count(`"msg":"stt_pipeline_reply_interrupted"`) != 0 {
		t.Error("a reply was interrupted with barge-in off")
	}
}

// TestBargeInStopsPlayback: a member talking over the bot stops it within a
// frame or so; the next turn's prompt holds only what was actually said.
func TestBargeInStopsPlayback(t *testing.T) {
	t.Parallel()
	w, alice, wait := talkOverWeather(t, "Sorry, go ahead.")
	defer wait()
	w.waitLog(`"msg":"voice_barge_in"`)
	// From the cut on, the bot sends at most the frame in flight (its reply's count at the cut,
	// logged with the barge-in, against its count when the reply ended), then the five silence
	// frames that close its talk spurt.
	w.checkBargeIn(alice, w.waitEvent("stt_pipeline_reply_interrupted"))
}

// TestFailuresEndTurnCleanly: an STT, LLM or TTS failure ends the turn with
// a log line, and the next turn is answered normally.
func TestFailuresEndTurnCleanly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		endpoint openaisim.Endpoint
		stage    string
	}{
		{"stt", openaisim.EndpointTranscriptions, "stt"},
		{"llm", openaisim.EndpointResponses, "generation"},
		{"tts", openaisim.EndpointSpeech, "tts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, nil,
				openaisim.Rule{Name: "fault", Match: openaisim.Match{Endpoint: c.endpoint}, Fault: openaisim.Fault{Status: 500}, Times: 1},
				openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
					Reply: openaisim.Reply{Transcript: "hey banter, are you there?"}},
				genRule("Still here."))
			alice := w.member("alice")
			w.join()
			w.play(alice, "hey-banter-weather")
			w.waitLog(`"msg":"voice_turn_failed"`, `"stage":"`+c.stage+`"`)
			w.play(alice, "hey-banter-weather")
			if err := alice.WaitHeard(w.ctx, w.botID, 15); err != nil {
				t.Fatalf("no answer after the failure: %v", err)
			}
			w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
		})
	}
}

// TestVoiceTurnAddressingContext: voice_turn_addressing carries the classifier's provider and
// the conversation context: the speaker the bot is focused on, whom it last answered and how
// long ago that reply ended.
func TestVoiceTurnAddressingContext(t *testing.T) {
	t.Parallel()
	rules := append(transcriptByLength("banter, can you hear me?", "hey banter, what's the weather like today?"),
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "weather"}, Reply: openaisim.Reply{Text: "Sunny."}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "hear me"}, Reply: openaisim.Reply{Text: "Yes, I hear you."}})
	w := newWorld(t, nil, rules...)
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	w.play(alice, "hey-banter-weather")
	w.waitLogs(1, `"msg":"stt_pipeline_reply_spoken"`)
	w.play(bob, "mike-hear-me")
	w.waitLogs(2, `"msg":"stt_pipeline_reply_spoken"`)
	events := w.logs.Events("voice_turn_addressing")
	if len(events) < 2 {
		t.Fatalf("%d voice_turn_addressing events, want one per turn at least", len(events))
	}
	first := events[0]
	aliceID := first["userId"]
	if first["classifier_provider"] != "openai" || first["last_reply_to_id"] != "" || first["since_bot_reply_ms"] != nil {
		t.Errorf("first turn: %v, want provider openai and no earlier reply", first)
	}
	last := events[len(events)-1]
	if last["userId"] == aliceID {
		t.Fatalf("the last decision is alice's again: %v", last)
	}
	if last["focused_speaker_id"] != aliceID || last["last_reply_to_id"] != aliceID || last["speaker_focused"] != false {
		t.Errorf("bob's turn: %v, want focus and last reply on alice (%v)", last, aliceID)
	}
	if ms, ok := last["since_bot_reply_ms"].(float64); !ok || ms < 0 {
		t.Errorf("bob's turn: since_bot_reply_ms = %v, want the time since the bot's reply ended", last["since_bot_reply_ms"])
	}
	if _, ok := last["participants"].(float64); !ok {
		t.Errorf("bob's turn lacks participants: %v", last)
	}
}
