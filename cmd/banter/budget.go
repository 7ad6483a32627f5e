package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/text"
	"github.com/banterbot/banter/voice"
)

// newBudget builds the daily budgets' Guard on the store's spend ledger (nil when the store
// keeps none): it admits every model call (the clients' Gate) and is told every cost (the
// meter's Spender); the budget: section is read live.
func (a *app) newBudget(w *config.Watcher, st store.Store, meter *llm.Meter, reg prometheus.Registerer) *budget.Guard {
	ledger, ok := store.NewSpendLedger(st)
	if !ok {
		a.logger.Warn("budget_unavailable", "reason", "the store keeps no spend ledger")
		return nil
	}
	g := budget.New(budget.Options{Config: w.Current, Ledger: ledger, Logger: a.logger, Metrics: budget.NewMetrics(reg)})
	if reg != nil {
		budget.RegisterGauges(reg, g)
	}
	meter.SetSpender(g)
	return g
}

// textBudget is the Guard for the text pipeline (nil interface without one).
func (a *app) textBudget() text.Quieter {
	if a.budget == nil {
		return nil
	}
	return a.budget
}

// voiceBudget is the Guard for the voice pipeline (nil interface without one).
func (a *app) voiceBudget() voice.Quieter {
	if a.budget == nil {
		return nil
	}
	return a.budget
}
