package voice_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// testPrices price every unit of the voice models differently, so a unit counted in the wrong
// place shows.
var testPrices = map[string]llm.Price{
	"gpt-4o-mini-transcribe": {InputPerMTok: 2, AudioInputPerMTok: 30, OutputPerMTok: 50, AudioInPerMinute: 7},
	"gpt-5-mini":             {InputPerMTok: 1, CachedPerMTok: 0.1, OutputPerMTok: 8},
	"gpt-5-nano":             {InputPerMTok: 0.5, OutputPerMTok: 4},
	"gpt-4o-mini-tts":        {PerMCharacters: 15, AudioOutPerMinute: 12},
}

// TestTurnCostIsTheSimulatorsUsage: a voice turn, its words transcribed in a session or
// uploaded, costs what the simulator reported it used (speech: the text sent, the audio
// returned) times the prices, on banter_provider_cost_usd_total; the spoken reply's event
// carries the whole turn's cost (transcription, decision, generation and speech) but for the
// replies speculation threw away, each on its discard line.
func TestTurnCostIsTheSimulatorsUsage(t *testing.T) {
	t.Parallel()
	for _, transcription := range []string{"session", "upload"} {
		t.Run(transcription, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, func(c *config.Config) {
				c.Voice.Speculation = config.Speculation{Enabled: true, PauseMs: 200, Transcription: transcription}
			}, append(sttRules("stt", func(time.Duration) string { return "banter, can you hear me?" }),
				genRule("Loud and clear."))...)
			alice := w.member("alice")
			w.join()
			w.play(alice, "mike-hear-me")
			w.waitEvent("stt_pipeline_reply_spoken")
			// The one turn made every call: its transcription (speculative ones included), its
			// decision, its generation and speech are all in the spoken reply's cost_usd, but for
			// the replies speculation made and threw away, each on its discard line.
			//
			// A speech request of a thrown-away reply (when the speculation got as far as its
			// speech before the member went on) is billed by the simulator the audio it wrote,
			// while the bot meters what it read of it (the connection's buffers hold the rest
			// back), or nothing when it gave up before the answer reached it: its cost lies
			// between nothing and its text and all the audio written. The played reply's speech,
			// the last one, is metered exactly, as every other call.
			var lo, hi, logged, got float64
			for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				lo, hi = 0, 0
				reqs := w.osim.Requests()
				played := -1
				for i, r := range reqs {
					if r.Endpoint == openaisim.EndpointSpeech {
						played = i
					}
				}
				for i, r := range reqs {
					cost := testPrices[r.Model].Cost(recordedUsage(r))
					hi += cost
					if r.Endpoint != openaisim.EndpointSpeech || i == played {
						lo += cost
					}
				}
				got = metricValue(t, w.reg, "banter_provider_cost_usd_total", string(w.guild))
				logged = loggedCost(w.logs.String(), "stt_pipeline_reply_spoken", "voice_speculation_discarded")
				if played >= 0 && got >= lo-1e-12 && got <= hi+1e-12 && math.Abs(logged-got) <= 1e-12 {
					return
				}
			}
			t.Errorf("banter_provider_cost_usd_total = %v and the turn's logged cost_usd %v, want both the same and within [%v, %v]", got, logged, lo, hi)
		})
	}
}

// loggedCost sums the cost_usd of the log lines named one of msgs.
func loggedCost(logs string, msgs ...string) float64 {
	var usd float64
	for _, line := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && slices.Contains(msgs, fmt.Sprint(m["msg"])) {
			c, _ := m["cost_usd"].(float64)
			usd += c
		}
	}
	return usd
}

// recordedUsage is the usage the simulator recorded it reported; speech reports none: the text
// sent and the audio returned.
func recordedUsage(r openaisim.Recorded) llm.Usage {
	if r.Endpoint == openaisim.EndpointSpeech {
		return llm.Usage{Characters: utf8.RuneCountInString(r.LastUserText),
			AudioSecondsOut: float64(r.AudioBytes) / (llm.SpeechSampleRate * llm.SpeechChannels * 2)}
	}
	u := r.Usage
	return llm.Usage{InputTokens: u.InputTokens, CachedTokens: u.CachedTokens, AudioInputTokens: u.AudioInputTokens,
		OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens, AudioOutputTokens: u.AudioOutputTokens,
		AudioSecondsIn: u.Seconds}
}
