package config

import "testing"

// TestDefaultModelsArePriced: every model slot's default model has a shipped price, so the
// cost metrics and the budgets count what the defaults spend (an unpriced model costs 0, and
// a budget would never see it).
func TestDefaultModelsArePriced(t *testing.T) {
	prices := DefaultPrices()
	for _, s := range Default().Slots() {
		if _, ok := prices[s.Model]; !ok {
			t.Errorf("%s: its default model %q has no shipped price", s.Path, s.Model)
		}
	}
}
