package realtime

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestRealtimeCostIsTheSimulatorsUsage: every response.done is metered, charged to the
// session's guild and the realtime slot, and costs what the simulator reported times the
// prices (text and audio tokens priced apart).
func TestRealtimeCostIsTheSimulatorsUsage(t *testing.T) {
	t.Parallel()
	price := llm.Price{InputPerMTok: 4, CachedPerMTok: 0.4, AudioInputPerMTok: 32, OutputPerMTok: 16, AudioOutputPerMTok: 64}
	reg := prometheus.NewRegistry()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, bridge: func(c *Config) {
		c.Meter = llm.NewMeter(map[string]llm.Price{"gpt-realtime": price}, nil, reg)
	}})
	for i := range 2 {
		if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
			t.Fatalf("turn %d: Stage A denied an addressed turn: %v", i, d)
		}
		if o := h.reply(); o.err != nil || o.res.Spoken == "" {
			t.Fatalf("turn %d: Respond = %+v, %v", i, o.res, o.err)
		}
	}
	var want float64
	var audioIn, audioOut int
	for _, r := range h.oa.RequestsFor(openaisim.EndpointRealtimeResponse) {
		u := r.Usage
		audioIn, audioOut = audioIn+u.AudioInputTokens, audioOut+u.AudioOutputTokens
		want += price.Cost(llm.Usage{InputTokens: u.InputTokens, CachedTokens: u.CachedTokens, AudioInputTokens: u.AudioInputTokens,
			OutputTokens: u.OutputTokens, AudioOutputTokens: u.AudioOutputTokens})
	}
	if audioIn == 0 || audioOut == 0 {
		t.Fatalf("the simulator reported %d audio input and %d audio output tokens: want both", audioIn, audioOut)
	}
	if got := gatherSum(t, reg, "banter_provider_cost_usd_total"); math.Abs(got-want) > 1e-12 {
		t.Errorf("banter_provider_cost_usd_total = %v, want %v", got, want)
	}
	if got := gatherSum(t, reg, "banter_provider_usage_total"); got == 0 {
		t.Error("no usage counted")
	}
}

// TestGeminiCostIsTheSimulatorsUsage: on the Gemini Live API, each turn's usageMetadata (sent
// with turnComplete) is metered: the cost metric equals the usage the simulator's Gemini face
// reported times the price, charged to voice.geminiRealtime.
func TestGeminiCostIsTheSimulatorsUsage(t *testing.T) {
	t.Parallel()
	price := llm.Price{InputPerMTok: 3, OutputPerMTok: 12}
	reg := prometheus.NewRegistry()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true, bridge: func(c *Config) {
		c.Meter = llm.NewMeter(map[string]llm.Price{"gemini-3.8-live": price}, nil, reg)
	}})
	for i := range 2 {
		if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
			t.Fatalf("turn %d: Stage A denied an addressed turn: %v", i, d)
		}
		if o := h.reply(); o.err != nil || o.res.Spoken == "" {
			t.Fatalf("turn %d: Respond = %+v, %v", i, o.res, o.err)
		}
	}
	var want float64
	for _, r := range h.oa.RequestsFor(openaisim.EndpointGeminiResponse) {
		want += price.Cost(llm.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens})
	}
	if want == 0 {
		t.Fatal("the simulator reported no Gemini usage")
	}
	if got := gatherSum(t, reg, "banter_provider_cost_usd_total"); math.Abs(got-want) > 1e-12 {
		t.Errorf("banter_provider_cost_usd_total = %v, want %v", got, want)
	}
}
