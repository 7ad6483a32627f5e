package main

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/memory"
	"github.com/banterbot/banter/store"
)

// memoryCloseTimeout bounds the extraction of what is pending at shutdown.
const memoryCloseTimeout = 10 * time.Second

// newMemory builds the memory extractor on the memoryLlm slot's provider. It is always built:
// memory.enabled (live, per guild) decides whether anything is extracted.
func (a *app) newMemory(w *config.Watcher, st store.Store, models *modelClients, reg prometheus.Registerer) (*memory.Extractor, error) {
	model, err := models.For(w.Current().MemoryLLM.Provider)
	if err != nil {
		return nil, fmt.Errorf("memoryLlm.provider: %w", err)
	}
	ex, err := memory.New(memory.Options{Config: w.Current, Store: st, Model: model, Logger: a.logger, Metrics: memory.NewMetrics(reg)})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), memoryCloseTimeout)
		defer cancel()
		if err := ex.Close(ctx); err != nil {
			a.logger.Warn("memory_close_incomplete", "error", err.Error())
		}
	})
	return ex, nil
}

// pruneFacts deletes facts older than days (memory.retentionDays, as in force now).
func (a *app) pruneFacts(ctx context.Context, st store.Store, days int, now time.Time) {
	if days <= 0 {
		return
	}
	if n, err := st.PruneFacts(ctx, now.AddDate(0, 0, -days)); err != nil {
		a.logger.Warn("store_prune_failed", "what", "facts", "error", err.Error())
	} else if n > 0 {
		a.logger.Info("store_pruned", "facts", n)
	}
}
