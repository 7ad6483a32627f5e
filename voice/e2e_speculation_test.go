package voice_test

import (
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// audioLen is the length of 48 kHz stereo audio.
func audioLen(s []int16) time.Duration { return time.Duration(len(s)/2) * time.Second / 48000 }

// sttRules answers speech to text the way a transcriber that hears upTo(d) in the first d of
// an utterance would: an upload of length d gets upTo(d); a span of a transcription session
// from off to off+d gets the words upTo gives its end beyond those it gives its start.
func sttRules(name string, upTo func(d time.Duration) string) []openaisim.Rule {
	return []openaisim.Rule{
		{Name: name, Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
			Respond: func(r openaisim.Request) openaisim.Reply { return openaisim.Reply{Transcript: upTo(r.Audio)} }},
		{Name: name + "-span", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeTranscription},
			Respond: func(r openaisim.Request) openaisim.Reply {
				w := spanWords(upTo, r.AudioOffset, r.Audio)
				return openaisim.Reply{Transcript: w, NoSpeech: w == ""}
			}},
	}
}

// spanWords is what a span of a transcription session from off to off+d hears (sttRules).
func spanWords(upTo func(time.Duration) string, off, d time.Duration) string {
	all := strings.Fields(upTo(off + d))
	if off == 0 {
		return strings.Join(all, " ")
	}
	return strings.Join(all[min(len(strings.Fields(upTo(off))), len(all)):], " ")
}

// TestPauseMidUtterance: alice pauses after a complete question and goes on. The speculation
// started at the pause is discarded — its held reply to the first half is never heard and
// neither half of it enters the conversation — and the whole utterance is answered once;
// with the words at pauses transcribed in a session (spans), and uploaded.
func TestPauseMidUtterance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ transcription, whole string }{
		// A transcription session hears the second half on its own, after the first.
		{"session", "hey banter, what's the weather like? in Paris tomorrow?"},
		{"upload", "hey banter, what's the weather like in Paris tomorrow?"},
	} {
		t.Run(tc.transcription, func(t *testing.T) {
			t.Parallel()
			pauseMidUtterance(t, tc.transcription, tc.whole)
		})
	}
}

func pauseMidUtterance(t *testing.T, transcription, whole string) {
	first, second := trimSpeech(speech(t, "hey-banter-weather")), trimSpeech(speech(t, "mike-hear-me"))
	const half = "hey banter, what's the weather like?"
	stt := sttRules("stt", func(d time.Duration) string {
		if d < audioLen(first)+600*time.Millisecond { // the first half, with pre- and post-roll
			return half
		}
		return "hey banter, what's the weather like in Paris tomorrow?"
	})
	w := newWorld(t, func(c *config.Config) {
		// A long end of turn: the pause below may wait for the held reply without ending it.
		c.Voice.Endpointing.SilenceMs, c.Voice.Endpointing.CompleteSilenceMs = 5000, 4000
		c.Voice.Endpointing.TrailingSilenceMs = 0
		c.Voice.Speculation = config.Speculation{Enabled: true, PauseMs: 200, Transcription: transcription}
	}, append(stt,
		openaisim.Rule{Name: "gen-half", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: `like\?$`},
			Reply: openaisim.Reply{Text: "It is raining here."}},
		openaisim.Rule{Name: "gen-whole", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "Paris"},
			Reply: openaisim.Reply{Text: "Sunny in Paris tomorrow."}})...)
	alice := w.member("alice")
	w.join()
	// The pause lasts 400 ms, or until the held reply to the first half has its speech
	// requested (at most 3 s more): alice goes on while that reply waits for her turn's end.
	held := func(int) bool {
		for _, r := range w.osim.RequestsFor(openaisim.EndpointSpeech) {
			if strings.Contains(r.LastUserText, "raining") {
				return true
			}
		}
		return false
	}
	if _, err := say(w.ctx, alice, talk{parts: [][]int16{first, second}, pauses: []time.Duration{400 * time.Millisecond},
		hold: held, maxHold: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if n := len(alice.Heard(w.botID)); n != 0 {
		t.Errorf("alice heard %d frames from the bot while she was talking", n)
	}
	ev := w.waitEvent("stt_pipeline_reply_spoken")
	if ev["transcript"] != whole || ev["spoken"] != "Sunny in Paris tomorrow." || ev["speculative"] != true {
		t.Errorf("spoken event %v: want the whole utterance answered, from a speculation", ev)
	}
	// The first half's speculation was discarded (so may others, at the short pauses inside
	// the second half).
	var discard map[string]any
	discards := w.logs.Events("voice_speculation_discarded")
	for _, d := range discards {
		if d["transcript"] == half {
			discard = d
		}
	}
	if discard == nil || discard["reason"] != "speech_resumed" {
		t.Fatalf("discarded speculations %v: want the first half's, speech_resumed", discards)
	}
	if held(0) && (discard["stage"] != "reply" || discard["reply"] != "It is raining here.") {
		t.Errorf("discard %v: its held reply was synthesised, want stage reply and the reply's text", discard)
	}
	t.Logf("the speculation on the first half was discarded at stage %v", discard["stage"])

	// The next turn's prompt holds the whole utterance and its answer, nothing of the first half.
	w.osim.ResetRules()
	for _, r := range append(sttRules("stt-next", func(time.Duration) string { return "banter, can you hear me?" }),
		genRule("Loud and clear.")) {
		if err := w.osim.AddRule(r); err != nil {
			t.Fatal(err)
		}
	}
	w.play(alice, "mike-hear-me")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, "hear me")
	if prompt := w.promptFor("hear me"); !strings.Contains(prompt, "alice: "+whole) || !strings.Contains(prompt, "Sunny in Paris tomorrow.") ||
		strings.Contains(prompt, half+"\n") || strings.Contains(prompt, "raining") {
		t.Errorf("next prompt:\n%s\nwant the whole utterance and its answer, nothing of the discarded speculation", prompt)
	}
	// Every discard so far (the next utterance may have had one at its own short pause) is
	// counted once.
	discards = w.logs.Events("voice_speculation_discarded")
	if got := metricValue(t, w.reg, "banter_voice_speculations_total", "discarded"); int(got) != len(discards) {
		t.Errorf("banter_voice_speculations_total{outcome=discarded} = %v, want %d (one a discard logged)", got, len(discards))
	}
	// Each utterance's speech went to speech to text once: one session per utterance, and its
	// spans together no longer than the utterance; or uploads only.
	sessions := len(w.osim.RequestsFor(openaisim.EndpointRealtime))
	uploads := len(w.osim.RequestsFor(openaisim.EndpointTranscriptions))
	if transcription == "session" && (sessions != 2 || uploads != 0 || metricValue(t, w.reg, "banter_voice_span_sessions_total", "opened") != 2) {
		t.Errorf("session: %d transcription sessions and %d uploads for two utterances, want 2 and 0", sessions, uploads)
	}
	if transcription == "upload" && sessions != 0 {
		t.Errorf("upload: %d transcription sessions opened", sessions)
	}
}

// TestBargeInDuringSpeculativeReply: the reply released from a speculation is interrupted as
// any reply is: playback stops at the cut, the next prompt knows only what was played.
func TestBargeInDuringSpeculativeReply(t *testing.T) {
	t.Parallel()
	rules := weatherRules(longWeather, "Sorry, go ahead.")
	w := newWorld(t, func(c *config.Config) {
		c.Voice.BargeIn.Policy = "anyone"
		// The end of turn comes long after the pause: the held reply is ready by then.
		c.Voice.Endpointing.SilenceMs, c.Voice.Endpointing.CompleteSilenceMs = 3000, 2500
		c.Voice.Endpointing.TrailingSilenceMs = 0
		c.Voice.Speculation = config.Default().Voice.Speculation
	}, rules...)
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	// Alice's utterance, then bob's: each transcription session's first span hears it all.
	w.osim.QueueTranscripts("hey banter, what's the weather like today?", "banter, can you hear me?")
	wait := w.talkOver(alice, "hey-banter-weather", 25, bob, speech(t, "mike-hear-me"))
	defer wait()
	w.waitLog(`"msg":"voice_barge_in"`)
	end := w.waitEvent("stt_pipeline_reply_interrupted")
	if end["speculative"] != true || end["speculation_stage"] != "reply" {
		t.Errorf("interrupted reply %v: want the released speculative reply", end)
	}
	w.checkBargeIn(alice, end)
}

// TestSpanTranscriptionFallsBack: when the transcription provider refuses a transcription
// session, or a span's transcription fails, the words are uploaded instead and the member is
// answered all the same; a refused session is not asked for again at the next utterance.
func TestSpanTranscriptionFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		fault    openaisim.Rule
		outcome  string // banter_voice_span_sessions_total
		sessions int    // handshakes over two utterances
	}{
		{"session refused", openaisim.Rule{Name: "no realtime", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
			Fault: openaisim.Fault{Status: 404, Message: "no realtime here"}}, "refused", 1},
		{"span failed", openaisim.Rule{Name: "span down", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeTranscription},
			Fault: openaisim.Fault{Status: 500, Message: "transcriber down"}}, "fell_back", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, func(c *config.Config) {
				c.Voice.Speculation = config.Default().Voice.Speculation
			}, tc.fault,
				openaisim.Rule{Name: "upload", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
					Reply: openaisim.Reply{Transcript: "banter, can you hear me?"}},
				genRule("Loud and clear."))
			alice := w.member("alice")
			w.join()
			for i := range 2 {
				w.play(alice, "mike-hear-me")
				w.waitLogs(i+1, `"msg":"stt_pipeline_reply_spoken"`)
			}
			for _, ev := range w.logs.Events("stt_pipeline_reply_spoken") {
				if ev["transcript"] != "banter, can you hear me?" {
					t.Errorf("answered %v, want the uploaded transcript", ev["transcript"])
				}
			}
			if n := len(w.osim.RequestsFor(openaisim.EndpointRealtime)); n != tc.sessions {
				t.Errorf("%d transcription sessions asked for over two utterances, want %d", n, tc.sessions)
			}
			if got := metricValue(t, w.reg, "banter_voice_span_sessions_total", tc.outcome); got < 1 {
				t.Errorf("banter_voice_span_sessions_total{outcome=%q} = %v", tc.outcome, got)
			}
			if tc.outcome == "refused" && metricValue(t, w.reg, "banter_voice_span_sessions_total", "fell_back") != 0 {
				t.Error("a refused session's spans were counted as fell_back too")
			}
		})
	}
}
