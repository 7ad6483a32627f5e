package voice_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// Turn-taking with the default end of turn (issue 30): a pause inside a sentence is not an end,
// an end that was false is taken back, and a question that ends is answered as soon as its end
// silence has passed.

const (
	halfQuestion  = "hey banter, what's the weather like?"
	continuation  = "in Paris tomorrow?"
	wholeQuestion = halfQuestion + " " + continuation // the two utterances' transcripts merged
	halfAnswer    = "Let me tell you all about the weather. In the morning there is fog over the hills. " +
		"By noon the sun comes out and it gets quite warm. In the evening clouds roll in from the west."
	wholeAnswer = "Sunny in Paris tomorrow."
)

// defaultTurns configures the world with the default end of turn, false end and speculation,
// speculating or not, with the words at pauses transcribed in a session or uploaded.
func defaultTurns(speculate bool, transcription string) func(*config.Config) {
	return func(c *config.Config) {
		def := config.Default().Voice
		c.Voice.Endpointing = def.Endpointing
		c.Voice.Speculation = def.Speculation
		c.Voice.Speculation.Enabled, c.Voice.Speculation.Transcription = speculate, transcription
	}
}

// turnCases are the ways a turn is found and transcribed: speculation on (the default) and off,
// the words at pauses in a transcription session (the default) and uploaded.
var turnCases = []struct {
	name          string
	speculate     bool
	transcription string
}{
	{"speculative/session", true, "session"},
	{"speculative/upload", true, "upload"},
	{"serial/session", false, "session"},
	{"serial/upload", false, "upload"},
}

// answerRules answer the first half of the question with half, anything about Paris with
// wholeAnswer, and "can you hear me?" with "Loud and clear.".
func answerRules(half string) []openaisim.Rule {
	gen := func(pattern string) openaisim.Match {
		return openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(true), InputPattern: pattern}
	}
	return []openaisim.Rule{
		{Name: "gen-half", Match: gen(`like\?$`), Reply: openaisim.Reply{Text: half}},
		{Name: "gen-whole", Match: gen("Paris"), Reply: openaisim.Reply{Text: wholeAnswer}},
		{Name: "gen-hear", Match: gen("hear me"), Reply: openaisim.Reply{Text: "Loud and clear."}},
	}
}

// TestPauseIsNotAnEnd: with the defaults, alice asks a question, pauses 600 ms and goes on. The
// pause does not end her turn: the bot says nothing while she talks, and answers once, to the
// whole, without a false end to take anything back.
func TestPauseIsNotAnEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range turnCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first, second := trimSpeech(speech(t, "hey-banter-weather")), trimSpeech(speech(t, "mike-hear-me"))
			stt := sttRules("stt", func(d time.Duration) string {
				if d < audioLen(first)+600*time.Millisecond { // the first half, with pre- and post-roll
					return halfQuestion
				}
				return "hey banter, what's the weather like in Paris tomorrow?"
			})
			w := newWorld(t, defaultTurns(tc.speculate, tc.transcription), append(stt, answerRules(halfAnswer)...)...)
			alice := w.member("alice")
			w.join()
			if _, err := say(w.ctx, alice, talk{parts: [][]int16{first, second}, pauses: []time.Duration{600 * time.Millisecond}}); err != nil {
				t.Fatal(err)
			}
			if n := len(alice.Heard(w.botID)); n != 0 {
				t.Errorf("alice heard %d frames from the bot while she was talking", n)
			}
			ev := w.waitEvent("stt_pipeline_reply_spoken")
			if !strings.Contains(ev["transcript"].(string), "Paris") || ev["spoken"] != wholeAnswer {
				t.Errorf("spoken %v: want the whole question answered", ev)
			}
			// The one answer is the last turn's: nothing else was said, and nothing taken back.
			if n, fe := len(w.logs.Events("stt_pipeline_reply_spoken")), len(w.logs.Events("voice_false_end")); n != 1 || fe != 0 {
				t.Errorf("%d answers and %d false ends, want 1 and 0", n, fe)
			}
		})
	}
}

// TestFalseEnd: alice asks a question and stops; the default end silence passes and the bot
// answers; 100 ms into its answer she goes on. The answer stops within 200 ms of audio of her
// confirmed speech, is dropped from the conversation, and her question is answered once, as a
// whole: one answer generated (besides the held replies of speculations her going on
// discarded), from a prompt with her whole question and nothing of the half-answer.
//
// Her words come by what she is saying, not by the order of the transcription requests: a
// short dip between her words can be a pause to speculate on (the fixtures have dips of about
// 160 ms; on a loaded machine a stall of her packets longer than the jitter window is heard as
// silence and makes them 200 ms, voice.speculation.pauseMs), and each speculation transcribes
// the words so far once more.
func TestFalseEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range turnCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Her question until she has heard the answer start, then what she goes on with.
			var goneOn atomic.Bool
			stt := sttRules("stt", func(time.Duration) string {
				if goneOn.Load() {
					return continuation
				}
				return halfQuestion
			})
			w := newWorld(t, func(c *config.Config) {
				defaultTurns(tc.speculate, tc.transcription)(c)
				// The widest window: on a loaded machine the serial answer may start late, and
				// alice with it; the window itself is TestFalseEndRejected's.
				c.Voice.Endpointing.FalseEndMs = 10000
			}, append(stt, answerRules(halfAnswer)...)...)
			alice := w.member("alice")
			w.join()
			w.play(alice, "hey-banter-weather")
			if err := alice.WaitHeard(w.ctx, w.botID, 5); err != nil {
				t.Fatalf("alice heard no answer: %v", err)
			}
			goneOn.Store(true) // her question was transcribed: its answer is playing
			var played sync.WaitGroup
			played.Go(func() { _ = alice.PlayPCM(w.ctx, speech(t, "mike-hear-me")) })
			defer played.Wait()
			fe := w.waitEvent("voice_false_end")
			cut := w.waitEvent("stt_pipeline_reply_interrupted")
			if fe["reason"] != "during_reply" || fe["stopped"] != true || cut["false_end"] != true || cut["turn_id"] != fe["turn_id"] {
				t.Errorf("false end %v, answer %v: want the half-answer stopped by the false end", fe, cut)
			}
			cutWithin(t, fe, cut, 200*time.Millisecond)
			t.Logf("alice went on %v ms after the end of her turn; the answer had played %v ms when her speech was confirmed, %v ms when it ended",
				fe["gap_ms"], fe["played_ms"], cut["played_ms"])
			ev := w.waitEvent("stt_pipeline_reply_spoken")
			if ev["transcript"] != wholeQuestion || ev["spoken"] != wholeAnswer || ev["continues_turn_id"] != fe["turn_id"] {
				t.Errorf("spoken %v: want the whole question answered, continuing %v", ev, fe["turn_id"])
			}
			if n := len(w.logs.Events("stt_pipeline_reply_spoken")); n != 1 {
				t.Errorf("%d answers spoken, want 1", n)
			}
			// One generation for the answer, and at most one more for each held reply to the whole
			// question that a speculation at a dip inside her going on started and discarded.
			held := 0
			for _, d := range w.logs.Events("voice_speculation_discarded") {
				if d["stage"] == "reply" && strings.Contains(fmt.Sprint(d["transcript"]), continuation) {
					held++
				}
			}
			gens := w.generations(continuation)
			if len(gens) < 1 || len(gens) > 1+held {
				t.Fatalf("%d generations for the whole question, want 1 (and %d discarded held replies)", len(gens), held)
			}
			for _, g := range gens {
				if p := g.Prompt; !strings.Contains(p, "alice: "+wholeQuestion) || strings.Contains(p, halfQuestion+"\n") ||
					strings.Contains(p, "fog over the hills") || strings.Contains(p, "[interrupted]") {
					t.Errorf("the whole question's prompt:\n%s\nwant the whole question, nothing of the half or its answer", p)
				}
			}
			if got := metricValue(t, w.reg, "banter_voice_false_ends_total", "during_reply"); got != 1 {
				t.Errorf("banter_voice_false_ends_total{reason=during_reply} = %v, want 1", got)
			}
		})
	}
}

// TestQuestionEnds: a question that ends is answered at the speed of the adaptive end of turn:
// its turn ends once the silence after it reaches voice.endpointing.completeSilenceMs, as the
// endpointer hears it (never later), on the transcript of the speculation started at its last
// pause. How far that speculation got by the end (on a quiet machine the answer itself, released
// at once) depends on the machine's speed and is logged, not asserted.
func TestQuestionEnds(t *testing.T) {
	t.Parallel()
	for _, speculate := range []bool{true, false} {
		t.Run(map[bool]string{true: "speculative", false: "serial"}[speculate], func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, defaultTurns(speculate, "session"), answerRules(halfAnswer)...)
			alice := w.member("alice")
			w.join()
			w.osim.QueueTranscripts("hey banter, what's the weather like in Paris?")
			w.play(alice, "hey-banter-weather")
			ev := w.waitEvent("stt_pipeline_reply_spoken")
			complete := float64(config.Default().Voice.Endpointing.CompleteSilenceMs)
			if ev["silence_ms"] != complete || ev["speculative"] != true || ev["spoken"] != wholeAnswer {
				t.Errorf("spoken %v: want the question's turn ended after %v ms of silence, from its speculation", ev, complete)
			}
			t.Logf("first packet %v ms after the end of the turn (speculation stage %v, shape %v)",
				ev["first_packet_ms"], ev["speculation_stage"], ev["turn_shape"])
		})
	}
}

// TestFalseEndRejected: alice going on after her turn is a turn of her own when it is not a
// false end: after voice.endpointing.falseEndMs (late: talking over the answer is then a
// barge-in), once the answer to her turn was heard (answered), once her turn was let go without
// an answer (unanswered: denied at eagerness 0), or once another member's turn came in between
// (other_member). Each decision is logged with its reason and counted.
func TestFalseEndRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reason   string
		windowMs int
		half     string // the answer to her first half
		outcome  string // how her going on is answered
	}{
		{"late", 100, halfAnswer, "stt_pipeline_reply_spoken"},
		{"answered", 10000, "It is raining.", "stt_pipeline_reply_spoken"},
		{"unanswered", 10000, halfAnswer, "stt_pipeline_reply_denied"},
		{"other_member", 10000, halfAnswer, "stt_pipeline_reply_spoken"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, func(c *config.Config) {
				defaultTurns(true, "session")(c)
				c.Voice.Endpointing.FalseEndMs = tc.windowMs
				if tc.reason == "unanswered" {
					c.Voice.ReplyEagerness = 0 // her first words, not addressed, are only heard
				}
			}, append(answerRules(tc.half), classifierRule("YES"))...)
			alice, bob := w.member("alice"), w.member("bob")
			w.join()
			if tc.reason == "unanswered" {
				w.osim.QueueTranscripts("what's the weather like?")
				w.play(alice, "hey-banter-weather")
				w.waitLog(`"msg":"stt_pipeline_reply_denied"`)
			} else {
				w.osim.QueueTranscripts(halfQuestion)
				w.play(alice, "hey-banter-weather")
				if err := alice.WaitHeard(w.ctx, w.botID, 5); err != nil {
					t.Fatal(err)
				}
			}
			switch tc.reason {
			case "answered":
				w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
			case "other_member": // bob talks over the answer; his turn is answered
				w.osim.QueueTranscripts("banter, can you hear me?")
				w.play(bob, "mike-hear-me")
				w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, "Loud and clear.")
			}
			w.osim.QueueTranscripts(continuation)
			w.play(alice, "mike-hear-me")
			rej := w.waitEvent("voice_false_end_rejected")
			ev := w.waitEventWith(tc.outcome, "transcript", continuation) // a turn of its own
			if rej["reason"] != tc.reason || ev["continues_turn_id"] != nil || len(w.logs.Events("voice_false_end")) != 0 {
				t.Errorf("rejected %v, answered %v: want reason %s and a turn of its own", rej, ev, tc.reason)
			}
			if got := metricValue(t, w.reg, "banter_voice_false_ends_total", tc.reason); got != 1 {
				t.Errorf("banter_voice_false_ends_total{reason=%s} = %v, want 1", tc.reason, got)
			}
			if tc.reason == "late" && w.logs.Count(`"msg":"voice_barge_in"`) != 1 {
				t.Error("late: her talking over the answer was no barge-in")
			}
		})
	}
}
