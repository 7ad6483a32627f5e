package llm

import (
	"context"
	"io"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// testPrices prices every unit differently, so a unit counted in the wrong place shows.
var testPrices = map[string]Price{
	"gpt-5-mini":             {InputPerMTok: 1, CachedPerMTok: 0.1, OutputPerMTok: 8},
	"gpt-4o-mini-transcribe": {InputPerMTok: 2, AudioInputPerMTok: 30, OutputPerMTok: 50, AudioInPerMinute: 7},
	"whisper-1":              {AudioInPerMinute: 6},
	"gpt-4o-mini-tts":        {PerMCharacters: 15, AudioOutPerMinute: 12},
}

// simUsage converts what the simulator recorded it reported (for speech, which reports none:
// the text sent and the audio returned) into Usage.
func simUsage(r openaisim.Recorded) Usage {
	if r.Endpoint == openaisim.EndpointSpeech {
		return Usage{Characters: utf8.RuneCountInString(r.LastUserText),
			AudioSecondsOut: float64(r.AudioBytes) / (SpeechSampleRate * SpeechChannels * 2)}
	}
	u := r.Usage
	return Usage{InputTokens: u.InputTokens, CachedTokens: u.CachedTokens, AudioInputTokens: u.AudioInputTokens,
		OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens, AudioOutputTokens: u.AudioOutputTokens,
		AudioSecondsIn: u.Seconds}
}

// TestMeterCostsWhatTheSimulatorReported: every operation's answer is metered (usage by unit,
// cost by guild, slot and model) and the cost metric equals the simulator's reported usage
// times the prices; an unknown model costs 0.
func TestMeterCostsWhatTheSimulatorReported(t *testing.T) {
	wav := wavBytes(16000, 1, 16, 16000*2*3/2) // 1.5 s
	cases := []struct {
		name  string
		api   API
		model string
		run   func(ctx context.Context, c *Client, model string) (float64, error)
	}{
		{"generate responses", APIResponses, "gpt-5-mini", generateCost},
		{"generate chat", APIChatCompletions, "gpt-5-mini", generateCost},
		{"classify", APIResponses, "gpt-5-mini", func(ctx context.Context, c *Client, model string) (float64, error) {
			_, err := c.Classify(ctx, model, "Answer YES or NO.", "is this addressed to you?")
			return AccountFrom(ctx).Tally.USD(), err
		}},
		{"stream responses", APIResponses, "gpt-5-mini", streamCost},
		{"stream chat", APIChatCompletions, "gpt-5-mini", streamCost}, // stream_options include_usage
		{"transcribe tokens", APIResponses, "gpt-4o-mini-transcribe", func(ctx context.Context, c *Client, model string) (float64, error) {
			tr, err := c.Transcribe(ctx, model, wav, TranscribeOptions{Prompt: "banter"})
			return tr.Cost, err
		}},
		{"transcribe stream", APIResponses, "gpt-4o-mini-transcribe", func(ctx context.Context, c *Client, model string) (float64, error) {
			tr, err := c.Transcribe(ctx, model, wav, TranscribeOptions{Stream: true})
			return tr.Cost, err
		}},
		{"transcribe duration", APIResponses, "whisper-1", func(ctx context.Context, c *Client, model string) (float64, error) {
			tr, err := c.Transcribe(ctx, model, wav, TranscribeOptions{})
			return tr.Cost, err
		}},
		{"speak", APIResponses, "gpt-4o-mini-tts", func(ctx context.Context, c *Client, model string) (float64, error) {
			s, err := c.SpeakStream(ctx, model, "alloy", "Hello there, how is everyone doing tonight?")
			if err != nil {
				return 0, err
			}
			if _, err := io.Copy(io.Discard, s); err != nil {
				return 0, err
			}
			return s.Cost(), s.Close()
		}},
		{"unknown model", APIResponses, "gpt-unpriced", generateCost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			env := newEnv(t, Options{API: tc.api, Meter: NewMeter(testPrices, nil, reg)},
				openaisim.Rule{Name: "stt", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
					Reply: openaisim.Reply{Transcript: "banter, what time is it?"}})
			env.reg = reg
			ctx := WithAccount(context.Background(), Account{Guild: "g1", Slot: "slot", Tally: &Tally{}})
			got, err := tc.run(ctx, env.client, tc.model)
			if err != nil {
				t.Fatal(err)
			}
			var want float64
			var units Usage
			for _, r := range env.sim.Requests() {
				u := simUsage(r)
				units = units.Add(u)
				want += testPrices[tc.model].Cost(u)
			}
			if units == (Usage{}) {
				t.Fatal("the simulator reported no usage")
			}
			if tc.model == "gpt-unpriced" && want != 0 {
				t.Fatalf("unknown model priced at %v", want)
			}
			labels := map[string]string{"guild": "g1", "slot": "slot", "model": tc.model}
			if m := env.counter(t, "banter_provider_cost_usd_total", labels); !near(m, want) || !near(got, want) {
				t.Errorf("cost metric %v, returned %v; want %v (usage %+v)", m, got, want, units)
			}
			for _, x := range units.units() {
				labels["unit"] = x.name
				if m := env.counter(t, "banter_provider_usage_total", labels); !near(m, x.v) {
					t.Errorf("usage %s = %v, want %v", x.name, m, x.v)
				}
			}
		})
	}
}

func streamCost(ctx context.Context, c *Client, model string) (float64, error) {
	s, err := c.Stream(ctx, GenerateRequest{Model: model, Messages: []Message{{Role: RoleUser, Content: "tell me a story"}}})
	if err != nil {
		return 0, err
	}
	for s.Next() {
	}
	return s.Cost(), s.Err()
}

func generateCost(ctx context.Context, c *Client, model string) (float64, error) {
	res, err := c.Generate(ctx, GenerateRequest{Model: model, Instructions: "Be brief.",
		Messages: []Message{{Role: RoleUser, Content: "what is the capital of France?"}}})
	if err != nil {
		return 0, err
	}
	return res.Cost, nil
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

// TestPriceCost: cached and audio tokens replace the text price, reasoning tokens are output.
func TestPriceCost(t *testing.T) {
	p := Price{InputPerMTok: 1, CachedPerMTok: 0.5, AudioInputPerMTok: 10, OutputPerMTok: 2, AudioOutputPerMTok: 20,
		AudioInPerMinute: 0.6, AudioOutPerMinute: 1.2, PerMCharacters: 3}
	cases := []struct {
		name string
		u    Usage
		want float64
	}{
		{"text", Usage{InputTokens: 1e6, OutputTokens: 1e6, ReasoningTokens: 5e5}, 3},
		{"cached", Usage{InputTokens: 1e6, CachedTokens: 4e5}, 0.6 + 0.2},
		{"audio tokens", Usage{InputTokens: 1e6, AudioInputTokens: 1e6, OutputTokens: 2e6, AudioOutputTokens: 1e6}, 10 + 2 + 20},
		{"durations", Usage{AudioSecondsIn: 30, AudioSecondsOut: 60}, 0.3 + 1.2},
		{"characters", Usage{Characters: 2e6}, 6},
	}
	for _, tc := range cases {
		if got := p.Cost(tc.u); !near(got, tc.want) {
			t.Errorf("%s: cost %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMeterSetPrices: a reloaded price table prices the calls after it; a model dropped from
// it costs 0 from then on.
func TestMeterSetPrices(t *testing.T) {
	m := NewMeter(map[string]Price{"m": {InputPerMTok: 1}}, nil, nil)
	u := Usage{InputTokens: 1e6}
	if got := m.Record(context.Background(), Account{Guild: "g"}, "m", u); !near(got, 1) {
		t.Fatalf("before the reload: %v, want 1", got)
	}
	m.SetPrices(map[string]Price{"m": {InputPerMTok: 3}})
	if got := m.Record(context.Background(), Account{Guild: "g"}, "m", u); !near(got, 3) {
		t.Errorf("after the reload: %v, want 3", got)
	}
	m.SetPrices(map[string]Price{})
	if got := m.Record(context.Background(), Account{Guild: "g"}, "m", u); got != 0 {
		t.Errorf("dropped from the table: %v, want 0", got)
	}
}
