package realtime

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
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

// TestRealtimeReplyRefusedAtCap: with the daily budget spent, a reply is refused before its
// response.create: Respond fails with the spending cap and the model is asked nothing.
func TestRealtimeReplyRefusedAtCap(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Budget.DailyUSD = 0.5
	g := cappedGuard(t, cfg, "")
	h := newHarness(t, harnessOptions{strategy: StrategyNative, bridge: func(c *Config) { c.Gate = g }})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied an addressed turn: %v", d)
	}
	if o := h.reply(); !errors.Is(o.err, llm.ErrSpendCap) || o.res.Spoken != "" {
		t.Errorf("Respond at the cap = %+v, %v; want the spending cap's error, nothing spoken", o.res, o.err)
	}
	if n := len(h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)); n != 0 {
		t.Errorf("%d realtime responses asked for at the cap", n)
	}
}

// cappedGuard returns a Guard on a fresh ledger, reading cfg (which the test may change), with
// $1 already spent in guild on the llm slot: past any cap of cfg below that.
func cappedGuard(t *testing.T, cfg *config.Config, guild string) *budget.Guard {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "spend.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ledger, _ := store.NewSpendLedger(st)
	g := budget.New(budget.Options{Config: func() *config.Config { return cfg }, Ledger: ledger})
	g.Spent(context.Background(), llm.Account{Guild: guild, Slot: "llm"}, "gpt-5-mini", 1)
	return g
}
