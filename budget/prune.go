package budget

import (
	"context"
	"log/slog"
	"time"
)

// Prune deletes the spend ledger's days that budget.keepDays no longer keeps (counted back
// from the current budget day) and returns how many spend rows went. With keepDays 0 it
// deletes nothing.
func (g *Guard) Prune(ctx context.Context) (int64, error) {
	b := &g.opts.Config().Budget
	before := b.PruneBefore(b.Day(g.opts.Now()))
	if before == "" {
		return 0, nil
	}
	return g.opts.Ledger.PruneSpend(ctx, before)
}

// PruneLoop prunes at once and then every interval until ctx ends, logging what it deleted
// (budget_spend_pruned) or could not (budget_prune_failed). Every process may run it: a
// prune deletes only what is past the bound.
func (g *Guard) PruneLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := g.Prune(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			g.log.LogAttrs(ctx, slog.LevelWarn, "budget_prune_failed", slog.String("error", err.Error()))
		case n > 0:
			g.log.LogAttrs(ctx, slog.LevelInfo, "budget_spend_pruned", slog.Int64("rows", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
