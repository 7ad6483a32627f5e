package voice_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// Faults in the middle of a spoken reply (issue 15, item 8): each ends in a defined state —
// the reply cut cleanly, logged and counted, the conversation holding only what was played —
// and the next turn is answered: nothing hangs.

// nextPrompt has alice ask again once the cut reply is recorded, waits for the answer and
// returns its generation prompt.
func nextPrompt(t *testing.T, w *world, alice *voicesim.Member) string {
	t.Helper()
	w.osim.QueueTranscripts("hey banter, are you still there?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, "still there")
	gens := w.streamed()
	return gens[len(gens)-1].Prompt
}

// TestGenerationCutMidReply: the generation stream breaks after the first sentence went to
// speech: that sentence is spoken, the unfinished rest is not; the turn ends voice_turn_failed
// (stage generation) and the timeline holds the spoken sentence, marked cut off.
func TestGenerationCutMidReply(t *testing.T) {
	t.Parallel()
	const reply = "It is sunny today. Tomorrow brings heavy rain and strong winds from the west."
	// 4 events before the text, then a delta per token: "It", " is", " sunny", " today",
	// ".", " Tomorrow", " brings" — the stream breaks in the middle of the second sentence.
	w := newWorld(t, func(c *config.Config) { c.Voice.BargeIn.Policy = "none" },
		openaisim.Rule{Name: "cut", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(true)},
			Reply: openaisim.Reply{Text: reply}, Fault: openaisim.Fault{TruncateAfterEvents: 11}, Times: 1},
		genRule("Still here."))
	alice := w.member("alice")
	w.join()
	w.osim.QueueTranscripts("hey banter, what's the weather like?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"voice_turn_failed"`, `"stage":"generation"`, `"spoken":"It is sunny today."`)
	if err := alice.WaitHeard(w.ctx, w.botID, 25); err != nil {
		t.Fatalf("the first sentence was not heard: %v", err)
	}
	for _, r := range w.osim.RequestsFor(openaisim.EndpointSpeech) {
		if strings.Contains(r.LastUserText, "Tomorrow") {
			t.Errorf("the unfinished sentence went to speech: %q", r.LastUserText)
		}
	}
	p := nextPrompt(t, w, alice)
	if !strings.Contains(p, "It is sunny today. [cut off]") || strings.Contains(p, "Tomorrow") {
		t.Errorf("next prompt does not hold exactly what was said:\n%s", p)
	}
	if n := metricValue(t, w.reg, "banter_voice_failures_total", "generation"); n != 1 {
		t.Errorf("generation failures = %v, want 1", n)
	}
	if n := metricValue(t, w.reg, "banter_voice_turns_total", "failed"); n != 1 {
		t.Errorf("failed turns = %v, want 1", n)
	}
}

// TestTTSCutMidReply: the speech stream of the first sentence breaks after a second of audio
// while the bot is saying it: the bot stops there (the later sentence, already synthesized, is
// not played), the turn ends voice_turn_failed (stage tts), and the timeline holds only the
// words that second can have carried.
func TestTTSCutMidReply(t *testing.T) {
	t.Parallel()
	const reply = "Let me tell you all about the weather in the hills today. Later on it rains."
	w := newWorld(t, func(c *config.Config) { c.Voice.BargeIn.Policy = "none" },
		openaisim.Rule{Name: "tts-cut", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech, InputPattern: "hills today"},
			Fault: openaisim.Fault{TruncateAfterEvents: 10}, Times: 1}, // 10 chunks of 100 ms
		openaisim.Rule{Name: "gen", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "weather"},
			Reply: openaisim.Reply{Text: reply}},
		genRule("Still here."))
	alice := w.member("alice")
	w.join()
	w.osim.QueueTranscripts("hey banter, what's the weather like?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"voice_turn_failed"`, `"stage":"tts"`)
	ev := w.logs.Events("voice_turn_failed")
	spoken, _ := ev[0]["spoken"].(string)
	played, _ := ev[0]["played_ms"].(float64)
	if spoken == "" || !strings.HasPrefix(reply, strings.TrimSuffix(spoken, " —")) || strings.Contains(spoken, "hills") {
		t.Errorf("spoken %q: want the first words of the cut sentence", spoken)
	}
	if played <= 0 || played > 1100 {
		t.Errorf("played %v ms: want the second of audio that arrived, no more", played)
	}
	p := nextPrompt(t, w, alice)
	if !strings.Contains(p, spoken+" [cut off]") || strings.Contains(p, "hills") || strings.Contains(p, "Later on") {
		t.Errorf("next prompt does not hold exactly what was said (%q):\n%s", spoken, p)
	}
	if n := metricValue(t, w.reg, "banter_voice_failures_total", "tts"); n != 1 {
		t.Errorf("tts failures = %v, want 1", n)
	}
}

// TestVoiceCloseWhileSpeaking: the voice server closes the bot's connection while it speaks.
// 4006 (session no longer valid): the reply is cut (voice_turn_failed, stage send), the
// connection is replaced and the next turn is answered, its prompt holding only what was
// played. 4015 (server crashed): the connection resumes; the reply ends spoken or cut, and the
// next turn is answered. 4014 (disconnected): the session ends, counted by reason.
func TestVoiceCloseWhileSpeaking(t *testing.T) {
	t.Parallel()
	long := "Let me tell you all about the weather. In the morning there is fog over the hills. " +
		"By noon the sun comes out and it gets quite warm. In the evening clouds roll in from the west. " +
		"Tomorrow looks much the same, with a chance of rain at night."
	for _, c := range []struct {
		code int
		ends bool // the session ends
	}{{4006, false}, {4015, false}, {4014, true}} {
		t.Run(fmt.Sprint(c.code), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, func(cfg *config.Config) { cfg.Voice.BargeIn.Policy = "none" },
				openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "weather"}, Reply: openaisim.Reply{Text: long}},
				genRule("Still here."))
			alice := w.member("alice")
			w.join()
			w.osim.QueueTranscripts("hey banter, what's the weather like?")
			w.play(alice, "hey-banter-weather")
			if err := alice.WaitHeard(w.ctx, w.botID, 25); err != nil {
				t.Fatal(err)
			}
			if err := w.vsim.CloseVoice(w.botID, c.code); err != nil {
				t.Fatal(err)
			}
			if c.ends {
				w.waitLog(`"msg":"voice_session_end"`, `"reason":"disconnected"`)
				// The reply fails on the dead connection, or is cut by the session's end.
				if ev := w.waitEvent("voice_turn_failed"); ev["stage"] != "send" && ev["stage"] != "session_end" {
					t.Errorf("the reply ended %v", ev)
				}
				if n := metricValue(t, w.reg, "banter_voice_session_ends_total", "disconnected"); n != 1 {
					t.Errorf("session ends (disconnected) = %v", n)
				}
				return
			}
			ended := w.waitEvent("voice_turn_failed", "stt_pipeline_reply_spoken")
			if c.code == 4006 {
				if ended["msg"] != "voice_turn_failed" || ended["stage"] != "send" {
					t.Fatalf("the reply over a dead connection ended %v", ended)
				}
				w.waitLog(`"msg":"voice_connection_restored"`)
			}
			p := nextPrompt(t, w, alice)
			if ended["msg"] == "voice_turn_failed" && (!strings.Contains(p, "[cut off]") || strings.Contains(p, "chance of rain")) {
				t.Errorf("next prompt does not hold exactly what was said:\n%s", p)
			}
			if n := w.logs.Count(`"msg":"voice_session_end"`); n != 0 {
				t.Errorf("the session ended after a %d close", c.code)
			}
		})
	}
}
