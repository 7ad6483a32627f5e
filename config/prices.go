package config

import (
	"maps"
	"math"
	"slices"
)

// Price is what one model costs, in US dollars: tokens per million, audio per minute,
// characters per million. Cached and audio tokens are priced instead of (not on top of) the
// text input and output prices; reasoning tokens are output tokens. docs/cost.md.
type Price struct {
	Input                float64 `yaml:"input"`
	CachedInput          float64 `yaml:"cachedInput"`
	AudioInput           float64 `yaml:"audioInput"`
	Output               float64 `yaml:"output"`
	AudioOutput          float64 `yaml:"audioOutput"`
	AudioInPerMinute     float64 `yaml:"audioInPerMinute"`
	AudioOutPerMinute    float64 `yaml:"audioOutPerMinute"`
	PerMillionCharacters float64 `yaml:"perMillionCharacters"`
}

// PricesAsOf dates the shipped price table (DefaultPrices).
const PricesAsOf = "2026-11-27"

// DefaultPrices is the shipped price table of the default models, keyed by model name. The
// figures are PLACEHOLDERS written from memory of OpenAI's pricing page (no reference copy
// was available when they were written, on PricesAsOf): check them against
// https://platform.openai.com/docs/pricing and override them under prices: in the config.
// Each call returns a fresh map.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		"gpt-5-mini":             {Input: 0.25, CachedInput: 0.025, Output: 2.00},
		"gpt-5-nano":             {Input: 0.05, CachedInput: 0.005, Output: 0.40},
		"gpt-4o-mini-transcribe": {Input: 1.25, AudioInput: 3.00, Output: 5.00, AudioInPerMinute: 0.003},
		"gpt-4o-transcribe":      {Input: 2.50, AudioInput: 6.00, Output: 10.00, AudioInPerMinute: 0.006},
		"whisper-1":              {AudioInPerMinute: 0.006},
		"gpt-4o-mini-tts":        {Input: 0.60, AudioOutput: 12.00, AudioOutPerMinute: 0.015},
		"gpt-realtime": {Input: 4.00, CachedInput: 0.40, AudioInput: 32.00, Output: 16.00,
			AudioOutput: 64.00},
	}
}

// validatePrices checks every price is a finite, non-negative figure.
func (v *validator) validatePrices(c *Config) {
	for _, model := range slices.Sorted(maps.Keys(c.Prices)) {
		p, path := c.Prices[model], "prices."+model
		if model == "" {
			v.addf("prices: a model name is empty")
		}
		for _, f := range []struct {
			name string
			usd  float64
		}{
			{"input", p.Input}, {"cachedInput", p.CachedInput}, {"audioInput", p.AudioInput},
			{"output", p.Output}, {"audioOutput", p.AudioOutput}, {"audioInPerMinute", p.AudioInPerMinute},
			{"audioOutPerMinute", p.AudioOutPerMinute}, {"perMillionCharacters", p.PerMillionCharacters},
		} {
			if f.usd < 0 || math.IsNaN(f.usd) || math.IsInf(f.usd, 0) {
				v.addf("%s.%s: %v is not a price (want US dollars >= 0)", path, f.name, f.usd)
			}
		}
	}
}
