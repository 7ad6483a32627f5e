package voice_test

import (
	"math"
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
// carries the whole turn's cost: transcription, decision, generation and speech.
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
			ev := w.waitEvent("stt_pipeline_reply_spoken")
			var want float64
			for _, r := range w.osim.Requests() {
				want += testPrices[r.Model].Cost(recordedUsage(r))
			}
			got := metricValue(t, w.reg, "banter_provider_cost_usd_total", string(w.guild))
			if want == 0 || math.Abs(got-want) > 1e-12 {
				t.Errorf("banter_provider_cost_usd_total = %v, want %v", got, want)
			}
			// The one turn made every call: its transcription (speculative ones included), its
			// decision, its generation and speech are all in its cost_usd.
			if c, _ := ev["cost_usd"].(float64); math.Abs(c-want) > 1e-12 {
				t.Errorf("spoken event's cost_usd %v, want the turn's every call: %v", ev["cost_usd"], want)
			}
		})
	}
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
