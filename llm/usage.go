package llm

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/prometheus/client_golang/prometheus"
)

// Usage is what one provider answer reports it consumed (0 when absent). Token counts follow
// the APIs: InputTokens includes CachedTokens and AudioInputTokens, OutputTokens includes
// ReasoningTokens and AudioOutputTokens.
type Usage struct {
	InputTokens       int
	CachedTokens      int
	AudioInputTokens  int
	OutputTokens      int
	ReasoningTokens   int
	AudioOutputTokens int
	// AudioSecondsIn is audio billed by duration (transcription), AudioSecondsOut the audio
	// synthesized (speech).
	AudioSecondsIn  float64
	AudioSecondsOut float64
	// Characters is the text sent to speech synthesis.
	Characters int
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens: u.InputTokens + v.InputTokens, CachedTokens: u.CachedTokens + v.CachedTokens,
		AudioInputTokens: u.AudioInputTokens + v.AudioInputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens, AudioOutputTokens: u.AudioOutputTokens + v.AudioOutputTokens,
		AudioSecondsIn: u.AudioSecondsIn + v.AudioSecondsIn, AudioSecondsOut: u.AudioSecondsOut + v.AudioSecondsOut,
		Characters: u.Characters + v.Characters,
	}
}

// units lists the usage by the unit label of banter_provider_usage_total.
func (u Usage) units() []struct {
	name string
	v    float64
} {
	return []struct {
		name string
		v    float64
	}{
		{"input_tokens", float64(u.InputTokens)}, {"cached_tokens", float64(u.CachedTokens)},
		{"audio_input_tokens", float64(u.AudioInputTokens)}, {"output_tokens", float64(u.OutputTokens)},
		{"reasoning_tokens", float64(u.ReasoningTokens)}, {"audio_output_tokens", float64(u.AudioOutputTokens)},
		{"audio_seconds_in", u.AudioSecondsIn}, {"audio_seconds_out", u.AudioSecondsOut},
		{"characters", float64(u.Characters)},
	}
}

// Price is what a model costs, in US dollars: tokens and characters per million, audio per
// minute. Cached and audio tokens are priced instead of (not on top of) the text input or
// output price; reasoning tokens are output tokens.
type Price struct {
	InputPerMTok       float64
	CachedPerMTok      float64
	AudioInputPerMTok  float64
	OutputPerMTok      float64
	AudioOutputPerMTok float64
	AudioInPerMinute   float64
	AudioOutPerMinute  float64
	PerMCharacters     float64
}

// Cost returns what usage costs at p, in US dollars.
func (p Price) Cost(u Usage) float64 {
	const m = 1e6
	textIn := max(u.InputTokens-u.CachedTokens-u.AudioInputTokens, 0)
	textOut := max(u.OutputTokens-u.AudioOutputTokens, 0)
	return float64(textIn)*p.InputPerMTok/m + float64(u.CachedTokens)*p.CachedPerMTok/m +
		float64(u.AudioInputTokens)*p.AudioInputPerMTok/m + float64(textOut)*p.OutputPerMTok/m +
		float64(u.AudioOutputTokens)*p.AudioOutputPerMTok/m +
		u.AudioSecondsIn/60*p.AudioInPerMinute + u.AudioSecondsOut/60*p.AudioOutPerMinute +
		float64(u.Characters)*p.PerMCharacters/m
}

// Account names whom a provider call is spent for: the guild and the model slot (the config
// section naming the model, e.g. "llm" or "voice.sttPipeline.transcription").
type Account struct {
	Guild string
	Slot  string
	// Tally, when set, adds up the cost of the calls charged to the account (a turn's cost).
	Tally *Tally
}

// Tally adds up costs; safe for concurrent use. The zero value is ready.
type Tally struct {
	mu  sync.Mutex
	usd float64
}

// Add adds usd to the tally; nil is a no-op.
func (t *Tally) Add(usd float64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.usd += usd
	t.mu.Unlock()
}

// USD returns the sum so far (0 for nil).
func (t *Tally) USD() float64 {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usd
}

type accountKey struct{}

// WithAccount returns ctx carrying a: the calls made with it are charged to a.
func WithAccount(ctx context.Context, a Account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// AccountFrom returns the Account ctx carries (zero when none).
func AccountFrom(ctx context.Context) Account {
	a, _ := ctx.Value(accountKey{}).(Account)
	return a
}

// Meter turns usage into the usage and cost metrics with a price table. Unknown models cost
// 0 and are warned about once. A nil *Meter records nothing and prices everything at 0.
// It is safe for concurrent use.
type Meter struct {
	prices atomic.Pointer[map[string]Price]
	log    *slog.Logger
	usage  *prometheus.CounterVec // guild, slot, model, unit
	cost   *prometheus.CounterVec // guild, slot, model

	spender Spender // set before use (SetSpender)

	mu     sync.Mutex
	warned map[string]bool
}

// SetSpender hands every recorded cost to s as well (the budgets' ledger). Call it before the
// Meter is used.
func (m *Meter) SetSpender(s Spender) {
	if m != nil {
		m.spender = s
	}
}

// NewMeter returns a Meter pricing with prices (by model name) and registers its metrics with
// reg (nil: not registered):
//
//	banter_provider_usage_total{guild,slot,model,unit}
//	banter_provider_cost_usd_total{guild,slot,model}
func NewMeter(prices map[string]Price, log *slog.Logger, reg prometheus.Registerer) *Meter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Meter{log: log, warned: map[string]bool{},
		usage: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_provider_usage_total",
			Help: "What provider answers report they consumed, by guild, model slot, model and unit (tokens, audio seconds, characters).",
		}, []string{"guild", "slot", "model", "unit"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_provider_cost_usd_total",
			Help: "What provider calls cost in US dollars at the configured prices, by guild, model slot and model.",
		}, []string{"guild", "slot", "model"}),
	}
	m.SetPrices(prices)
	if reg != nil {
		reg.MustRegister(m.usage, m.cost)
	}
	return m
}

// SetPrices replaces the price table (a config reload); calls metered after it use it. A
// model priced again is warned about again if it goes missing.
func (m *Meter) SetPrices(prices map[string]Price) {
	if m == nil {
		return
	}
	m.prices.Store(&prices)
	m.mu.Lock()
	clear(m.warned)
	m.mu.Unlock()
}

// Price returns the price of model and whether the table has it.
func (m *Meter) Price(model string) (Price, bool) {
	if m == nil {
		return Price{}, false
	}
	p, ok := (*m.prices.Load())[model]
	return p, ok
}

// Record counts usage of model for a and returns its cost in US dollars.
func (m *Meter) Record(ctx context.Context, a Account, model string, u Usage) float64 {
	if m == nil {
		return 0
	}
	if a.Slot == "" {
		a.Slot = "unknown"
	}
	for _, x := range u.units() {
		if x.v > 0 {
			m.usage.WithLabelValues(a.Guild, a.Slot, model, x.name).Add(x.v)
		}
	}
	p, ok := m.Price(model)
	if !ok {
		m.warnUnknown(ctx, model)
	}
	c := p.Cost(u)
	m.cost.WithLabelValues(a.Guild, a.Slot, model).Add(c)
	a.Tally.Add(c)
	if m.spender != nil && c > 0 {
		m.spender.Spent(ctx, a, model, c)
	}
	return c
}

func (m *Meter) warnUnknown(ctx context.Context, model string) {
	m.mu.Lock()
	seen := m.warned[model]
	m.warned[model] = true
	m.mu.Unlock()
	if !seen {
		m.log.LogAttrs(ctx, slog.LevelWarn, "price_unknown", slog.String("model", model),
			slog.String("hint", "add the model to prices: in the config; its calls cost 0 until then"))
	}
}

// responsesUsage reads the Responses API's usage object.
func responsesUsage(u responses.ResponseUsage) Usage {
	return Usage{InputTokens: int(u.InputTokens), CachedTokens: int(u.InputTokensDetails.CachedTokens),
		OutputTokens: int(u.OutputTokens), ReasoningTokens: int(u.OutputTokensDetails.ReasoningTokens)}
}

// chatUsage reads the chat completions API's usage object.
func chatUsage(u openai.CompletionUsage) Usage {
	return Usage{InputTokens: int(u.PromptTokens), CachedTokens: int(u.PromptTokensDetails.CachedTokens),
		AudioInputTokens: int(u.PromptTokensDetails.AudioTokens),
		OutputTokens:     int(u.CompletionTokens), ReasoningTokens: int(u.CompletionTokensDetails.ReasoningTokens),
		AudioOutputTokens: int(u.CompletionTokensDetails.AudioTokens)}
}

// transcriptionUsage reads a transcription's usage: tokens, or seconds of audio. Without
// either, the audio's duration is what is billed.
func transcriptionUsage(u openai.AudioTranscriptionNewResponseUnionUsage, audio time.Duration) Usage {
	switch u.Type {
	case "tokens":
		return Usage{InputTokens: int(u.InputTokens), AudioInputTokens: int(u.InputTokenDetails.AudioTokens),
			OutputTokens: int(u.OutputTokens)}
	case "duration":
		return Usage{AudioSecondsIn: u.Seconds}
	}
	return Usage{AudioSecondsIn: audio.Seconds()}
}

// WithSlot returns ctx charging its calls to slot, with the guild and tally ctx carries.
func WithSlot(ctx context.Context, slot string) context.Context {
	a := AccountFrom(ctx)
	a.Slot = slot
	return WithAccount(ctx, a)
}
