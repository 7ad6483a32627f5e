package llm

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Budget paces the requests to one provider: every HTTP attempt (retries included) takes a
// slot of it before it is sent. Implementations shared by several processes (the Postgres
// store) bound the requests of all of them together.
type Budget interface {
	// Reserve books the next slot if it starts within maxWait and returns how long the caller
	// must wait for it; ok is false (nothing booked) when the next slot is further away.
	Reserve(ctx context.Context, maxWait time.Duration) (wait time.Duration, ok bool, err error)
}

// DefaultBudgetWait is how long a request waits for a slot of its provider's budget before it
// is declined (Options.BudgetWait).
const DefaultBudgetWait = 10 * time.Second

// reserve takes a budget slot for one attempt, waiting for it. A request the budget cannot
// admit within BudgetWait (or before ctx ends) fails with ErrorKindOverBudget, unsent; a
// budget that cannot be read (the database down) lets the request through, logged: the
// provider's own limit still answers 429.
func (c *Client) reserve(ctx context.Context, op Op, model string) *APIError {
	if c.opts.Budget == nil {
		return nil
	}
	maxWait := c.opts.BudgetWait
	if dl, ok := ctx.Deadline(); ok {
		maxWait = min(maxWait, time.Until(dl))
	}
	wait, ok, err := c.opts.Budget.Reserve(ctx, max(maxWait, 0))
	if err != nil {
		if ctx.Err() != nil {
			return &APIError{Op: op, Model: model, Kind: ErrorKindCanceled, Err: fmt.Errorf("waiting for the request budget: %w", ctx.Err())}
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "llm_budget_unavailable", slog.String("op", op.String()),
			slog.String("model", model), slog.String("error", err.Error()))
		return nil
	}
	if !ok {
		c.log.LogAttrs(ctx, slog.LevelWarn, "llm_over_budget", slog.String("op", op.String()),
			slog.String("model", model), slog.Duration("max_wait", maxWait))
		return &APIError{Op: op, Model: model, Kind: ErrorKindOverBudget,
			Err: fmt.Errorf("no request slot of the provider's budget within %v", maxWait)}
	}
	c.metrics.observeBudgetWait(op, model, wait)
	if err := sleep(ctx, wait); err != nil {
		return &APIError{Op: op, Model: model, Kind: ErrorKindCanceled, Err: fmt.Errorf("waiting for the request budget: %w", err)}
	}
	return nil
}

// RequestInterval is the spacing of a budget of perMinute requests a minute: slots that far
// apart put at most perMinute requests in any minute [t, t+60 s).
func RequestInterval(perMinute int) time.Duration {
	if perMinute <= 0 {
		return 0
	}
	return time.Minute / time.Duration(perMinute)
}
