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

// newMemory builds the memory extractor on the memoryLlm slot's provider, and the embedder
// (search by meaning) and its backfill (a.backfill, started by startPipelines) on the
// embeddings slot's. All are always built: memory.enabled, embeddings.enabled and
// embeddings.backfill.enabled (live, per guild) decide whether anything is extracted or
// embedded.
func (a *app) newMemory(w *config.Watcher, st store.Store, models *modelClients, reg prometheus.Registerer) (*memory.Extractor, *memory.Embedder, error) {
	model, err := models.For(w.Current().MemoryLLM.Provider)
	if err != nil {
		return nil, nil, fmt.Errorf("memoryLlm.provider: %w", err)
	}
	embedModel, err := models.For(w.Current().Embeddings.Provider)
	if err != nil {
		return nil, nil, fmt.Errorf("embeddings.provider: %w", err)
	}
	metrics := memory.NewMetrics(reg)
	embedder, err := memory.NewEmbedder(w.Current, st, embedModel, a.logger, metrics)
	if err != nil {
		return nil, nil, err
	}
	ex, err := memory.New(memory.Options{Config: w.Current, Store: st, Model: model, Logger: a.logger, Metrics: metrics, Embedder: embedder})
	if err != nil {
		return nil, nil, err
	}
	var standing memory.BudgetStanding
	if a.budget != nil {
		standing = a.budget
	}
	if a.backfill, err = memory.NewBackfill(memory.BackfillOptions{Config: w.Current, Store: st, Embedder: embedder,
		Budget: standing, Logger: a.logger, Metrics: metrics}); err != nil {
		return nil, nil, err
	}
	w.Subscribe(a.backfill.Reloaded)
	a.closers = append(a.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), memoryCloseTimeout)
		defer cancel()
		if err := ex.Close(ctx); err != nil {
			a.logger.Warn("memory_close_incomplete", "error", err.Error())
		}
	})
	return ex, embedder, nil
}

// logVectorSearch says where searches by meaning run (pgvector, or in process and why).
func (a *app) logVectorSearch(st store.Store) {
	attrs := []any{"vector_search", st.VectorSearch()}
	if pg, ok := st.(*store.Postgres); ok && pg.VectorUnavailable() != "" {
		attrs = append(attrs, "pgvector_unavailable", pg.VectorUnavailable())
	}
	a.logger.Info("store_vector_search", attrs...)
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
