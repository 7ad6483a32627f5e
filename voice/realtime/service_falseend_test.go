package realtime

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// A false end in voice.mode realtime (issue 30): the member's pause ended their turn, the
// realtime model began to answer the first half, and the member went on. The answer stops, and
// the provider's own conversation loses the first half and the cut answer, as the session's
// timeline does: the whole is answered once, from a conversation that holds it once.

const (
	feHalf       = "hey banter, what's the weather like?"
	feGoOn       = "in Paris tomorrow?"
	feHalfAnswer = "Let me tell you all about the weather. In the morning there is fog over the hills. " +
		"By noon the sun comes out and it gets quite warm. In the evening clouds roll in from the west."
	feWholeAnswer = "Sunny in Paris tomorrow."
)

// falseEndWorld is a service world whose member's words are feHalf until goneOn, then feGoOn;
// the widest false-end window, so a loaded machine's late answer still counts.
func falseEndWorld(t *testing.T, p Provider, strategy string, rules ...openaisim.Rule) (*serviceWorld, *atomic.Bool) {
	t.Helper()
	goneOn := &atomic.Bool{}
	words := func(openaisim.Request) openaisim.Reply {
		if goneOn.Load() {
			return openaisim.Reply{Transcript: feGoOn}
		}
		return openaisim.Reply{Transcript: feHalf}
	}
	stt := []openaisim.Rule{ // the session hears through speech to text, or Gemini's own transcription
		{Name: "stt", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions}, Respond: words},
		{Name: "stt-gemini", Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiTranscription}, Respond: words},
	}
	w := newServiceWorldWith(t, p, strategy, 0, func(c *config.Config) {
		c.Voice.Endpointing.FalseEndMs = 10000
		c.Voice.Speculation.Transcription = "upload" // one transcription per utterance: stt above
	}, append(stt, rules...)...)
	return w, goneOn
}

// goOn has alice say the first half, waits until she hears the answer start, and has her go
// on; it returns the false end's log record and waits for her going on to have been played.
func (w *serviceWorld) goOn(goneOn *atomic.Bool) map[string]any {
	w.t.Helper()
	alice := w.member("alice")
	if err := w.svc.Join(w.ctx, string(w.guild), string(w.vc)); err != nil {
		w.t.Fatal(err)
	}
	if err := alice.PlayPCM(w.ctx, loadSpeech(w.t, "hey-banter-weather.wav")); err != nil {
		w.t.Fatal(err)
	}
	if err := alice.WaitHeard(w.ctx, w.botID, 5); err != nil {
		w.t.Fatalf("alice heard no answer: %v", err)
	}
	goneOn.Store(true)
	var played sync.WaitGroup
	played.Go(func() { _ = alice.PlayPCM(w.ctx, loadSpeech(w.t, "two-questions.wav")) })
	w.t.Cleanup(played.Wait)
	fe := w.waitLog("voice_false_end")
	if fe["reason"] != "during_reply" || fe["stopped"] != true {
		w.t.Errorf("voice_false_end %v: want the answer stopped while it played", fe)
	}
	// The realtime answer stops as the STT pipeline's does: at most 200 ms of its audio after
	// her confirmed speech (the session's own count of the frames that went out).
	cut := w.waitLog("stt_pipeline_reply_interrupted")
	atCut, _ := fe["played_ms"].(float64)
	atEnd, _ := cut["played_ms"].(float64)
	if cut["false_end"] != true || atCut <= 0 || atEnd < atCut || atEnd-atCut > 200 {
		w.t.Errorf("played %v ms at the false end, %v ms when the answer ended (%v): want it stopped within 200 ms",
			atCut, atEnd, cut)
	}
	return fe
}

// spokenWhole waits for the answer to the whole and checks that it was the only one.
func (w *serviceWorld) spokenWhole(fe map[string]any) {
	w.t.Helper()
	spoken := w.waitLog("realtime_reply_spoken")
	if spoken["spoken"] != feWholeAnswer || spoken["continues_turn_id"] != fe["turn_id"] {
		w.t.Errorf("realtime_reply_spoken %v: want the whole answered, continuing %v", spoken, fe["turn_id"])
	}
	if n := len(w.logs.Events("realtime_reply_spoken")); n != 1 {
		w.t.Errorf("%d answers spoken, want 1", n)
	}
	cut, back := w.logs.Events("realtime_interrupted"), w.logs.Events("realtime_taken_back")
	if len(cut) != 1 || len(back) != 1 || back[0]["turn_id"] != fe["turn_id"] {
		w.t.Errorf("realtime_interrupted %v, realtime_taken_back %v: want the half-answer cut and its turn taken back", cut, back)
	}
}

// conversationLines returns the lines of a realtime response's prompt that start with role.
func conversationLines(prompt, role string) []string {
	var out []string
	for _, l := range strings.Split(prompt, "\n") {
		if strings.HasPrefix(l, role+":") {
			out = append(out, l)
		}
	}
	return out
}

// TestServiceRealtimeFalseEnd: OpenAI Realtime, both strategies. After the false end the session
// takes the turn back (voice.TakeBacker): the cut answer's item (and, native, the item of the
// first half's audio) are deleted from the conversation before the whole is forwarded, so the
// response to the whole sees one user turn (native: audio of both halves) and no assistant line.
func TestServiceRealtimeFalseEnd(t *testing.T) {
	t.Parallel()
	half := openaisim.Latency{PerToken: 40 * time.Millisecond} // the answer streams while it plays
	for _, tc := range []struct {
		strategy string
		rules    []openaisim.Rule
		deletes  int // items deleted: the answer, and native's forwarded first half
	}{
		{"native", []openaisim.Rule{
			{Name: "half", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
				Reply: openaisim.Reply{Text: feHalfAnswer}, Latency: half, Times: 1},
			{Name: "whole", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
				Reply: openaisim.Reply{Text: feWholeAnswer}},
		}, 2},
		{"brain", []openaisim.Rule{
			{Name: "gen-half", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: `like\?$`},
				Reply: openaisim.Reply{Text: feHalfAnswer}},
			{Name: "gen-whole", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "Paris"},
				Reply: openaisim.Reply{Text: feWholeAnswer}},
			{Name: "half", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse, PromptPattern: "fog over"},
				Reply: openaisim.Reply{Text: feHalfAnswer}, Latency: half},
			{Name: "whole", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse, PromptPattern: "Sunny in"},
				Reply: openaisim.Reply{Text: feWholeAnswer}},
		}, 1},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			t.Parallel()
			w, goneOn := falseEndWorld(t, ProviderOpenAI, tc.strategy, tc.rules...)
			fe := w.goOn(goneOn)
			w.spokenWhole(fe)
			var deleted []string
			for _, e := range w.osim.RealtimeEvents() {
				if e.Type == "conversation.item.delete" {
					deleted = append(deleted, string(e.Raw))
				}
			}
			if len(deleted) != tc.deletes {
				t.Errorf("conversation.item.delete sent %d times, want %d: %v", len(deleted), tc.deletes, deleted)
			}
			if d := w.logs.Events("realtime_items_deleted"); len(d) != 1 || d[0]["sent"] != float64(tc.deletes) {
				t.Errorf("realtime_items_deleted %v: want %d sent", d, tc.deletes)
			}
			if n := len(w.logs.Events("realtime_server_error")); n != 0 {
				t.Errorf("%d server errors: %v", n, w.logs.Events("realtime_server_error"))
			}
			rec := w.osim.RequestsFor(openaisim.EndpointRealtimeResponse)
			if len(rec) != 2 || rec[1].Rule != "whole" {
				t.Fatalf("realtime responses %+v: want the half-answer's and the whole's", rec)
			}
			p := rec[1].Prompt
			if a := conversationLines(p, "assistant"); len(a) != 0 || strings.Contains(p, "fog over") {
				t.Errorf("the whole's response sees assistant lines %q: want the cut answer deleted\n%s", a, p)
			}
			if tc.strategy == "native" {
				if u := conversationLines(p, "user"); len(u) != 1 {
					t.Errorf("the whole's response sees %d user turns %q: want one, the whole", len(u), u)
				}
				if first := time.Duration(len(loadSpeech(t, "hey-banter-weather.wav"))/2) * time.Second / 48000; rec[1].AudioDuration <= first {
					t.Errorf("the whole's audio is %v: want both halves (the first alone is %v)", rec[1].AudioDuration, first)
				}
			}
		})
	}
}

// TestServiceRealtimeFalseEndGemini: the Live API cannot delete a turn, so after the false end
// the Responder starts a fresh Gemini session from banter's summary, which has lost the first
// half and the cut answer; the whole is answered there, once, from a conversation that holds
// it once and nothing of the cut answer.
func TestServiceRealtimeFalseEndGemini(t *testing.T) {
	t.Parallel()
	// The Responder's turns (the session hears on a connection of its own, told to listen).
	answers := openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: "^You are banter"}
	w, goneOn := falseEndWorld(t, ProviderGemini, "native",
		openaisim.Rule{Name: "half", Match: answers, Reply: openaisim.Reply{Text: feHalfAnswer},
			Latency: openaisim.Latency{PerToken: 40 * time.Millisecond}, Times: 1},
		openaisim.Rule{Name: "whole", Match: answers, Reply: openaisim.Reply{Text: feWholeAnswer}})
	fe := w.goOn(goneOn)
	w.spokenWhole(fe)
	re := w.logs.Events("realtime_reconnected")
	if len(re) != 1 || re[0]["cause"] != "false_end" || re[0]["resumed"] != false {
		t.Errorf("realtime_reconnected %v: want one fresh session after the false end", re)
	}
	var rec []openaisim.Recorded
	for _, r := range w.osim.RequestsFor(openaisim.EndpointGeminiResponse) {
		if r.Rule == "half" || r.Rule == "whole" {
			rec = append(rec, r)
		}
	}
	if len(rec) != 2 || rec[1].Rule != "whole" {
		t.Fatalf("%d Gemini turns: want the half-answer's and the whole's", len(rec))
	}
	p := rec[1].Prompt
	// The fresh session's instructions hold banter's summary, which lost both: nothing before.
	if strings.Contains(p, "fog over") || strings.Contains(p, "(interrupted)") || strings.Contains(p, "Summary of the voice") {
		t.Errorf("the whole's turn sees the cut answer:\n%s", p)
	}
	var said []string // the member's turns, not the turn context banter puts before them
	for _, l := range conversationLines(p, "user") {
		if !strings.HasPrefix(l, "user: "+contextPrefix[:20]) {
			said = append(said, l)
		}
	}
	if len(said) != 1 {
		t.Errorf("the whole's turn sees %d turns of the member %q: want one, the whole", len(said), said)
	}
}
