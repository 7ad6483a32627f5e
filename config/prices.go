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

// PricesAsOf dates the shipped price table (DefaultPrices): the day its figures were read
// from OpenAI's model pages (docs/cost.md names the page of each).
const PricesAsOf = "2026-11-27"

// DefaultPrices is the shipped price table of the default models, keyed by model name, as
// OpenAI's model pages (developers.openai.com/api/docs/models/MODEL) and, for Gemini, a
// gateway's listing of Google's prices gave them on PricesAsOf; docs/cost.md gives the source of each figure and the ones that could not be
// established. Each call returns a fresh map.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		"gpt-5-mini": {Input: 0.25, CachedInput: 0.025, Output: 2.00},
		"gpt-5-nano": {Input: 0.05, CachedInput: 0.005, Output: 0.40},
		// The model pages list these under "audio tokens" only: the same figure is used for
		// the text prompt's tokens. No per-minute price is listed.
		"gpt-4o-mini-transcribe": {Input: 1.25, AudioInput: 1.25, Output: 5.00},
		"gpt-4o-transcribe":      {Input: 2.50, AudioInput: 2.50, Output: 10.00},
		"whisper-1":              {AudioInPerMinute: 0.006},
		// Speech is counted in characters and seconds (the endpoint reports no tokens): the
		// text input price per 1M, and the page's estimated cost per minute of audio.
		"gpt-4o-mini-tts": {PerMillionCharacters: 0.60, AudioOutPerMinute: 0.015},
		// gpt-realtime-1.5's page (gpt-realtime's own was not found).
		"gpt-realtime": {Input: 4.00, CachedInput: 0.40, AudioInput: 32.00, Output: 16.00,
			AudioOutput: 64.00},
		// Google's pricing page was not in reach: Vercel AI Gateway's listing of the model
		// (0.75 input, 4.50 output per 1M, with no split by modality), applied to text and
		// audio tokens alike.
		// Embeddings are priced by input tokens only (there is no output).
		"text-embedding-3-small": {Input: 0.02},
		"gemini-3.8-live":        {Input: 0.75, CachedInput: 0.75, AudioInput: 0.75, Output: 4.50, AudioOutput: 4.50},
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
