package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReserveRequest books the next request slot of a model provider's budget, shared by every
// process on this database: slots are interval apart, so any window of interval × n holds at
// most n requests of all the processes together. The slot is booked only when it starts
// within maxWait; wait is how long the caller must wait for it (ok false: nothing booked, the
// next slot is further away). One statement: the row's update lock orders concurrent
// reservations, each computed on the latest slot; the times are the database's clock
// (clock_timestamp(), the statement's own time), so the processes' clocks do not matter.
func (s *Postgres) ReserveRequest(ctx context.Context, provider string, interval, maxWait time.Duration) (wait time.Duration, ok bool, err error) {
	var waitSeconds float64
	err = s.pool.QueryRow(ctx, `INSERT INTO request_budgets AS b (provider, next_at)
		VALUES ($1, clock_timestamp() + make_interval(secs => $2))
		ON CONFLICT (provider) DO UPDATE SET next_at = GREATEST(b.next_at, clock_timestamp()) + make_interval(secs => $2)
			WHERE GREATEST(b.next_at, clock_timestamp()) <= clock_timestamp() + make_interval(secs => $3)
		RETURNING GREATEST(EXTRACT(EPOCH FROM b.next_at - make_interval(secs => $2) - clock_timestamp()), 0)::float8`,
		provider, interval.Seconds(), maxWait.Seconds()).Scan(&waitSeconds)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("store: request budget of %s: %w", provider, err)
	}
	return time.Duration(waitSeconds * float64(time.Second)), true, nil
}

// Budget paces one model provider's requests (llm.Budget).
type Budget interface {
	// Reserve books the next slot if it starts within maxWait and returns how long the caller
	// must wait for it; ok is false (nothing booked) when the next slot is further away.
	Reserve(ctx context.Context, maxWait time.Duration) (wait time.Duration, ok bool, err error)
}

// NewRequestBudget returns a provider's request budget with slots interval apart: shared by
// every process on the database with the Postgres store, in this process with SQLite (whose
// database serves one process). st may be instrumented (Instrument).
func NewRequestBudget(st Store, provider string, interval time.Duration) Budget {
	if i, ok := st.(*instrumented); ok {
		st = i.s
	}
	if pg, ok := st.(*Postgres); ok {
		return pgBudget{pg: pg, provider: provider, interval: interval}
	}
	return &LocalBudget{Interval: interval}
}

// pgBudget is one provider's budget in a Postgres database.
type pgBudget struct {
	pg       *Postgres
	provider string
	interval time.Duration
}

func (b pgBudget) Reserve(ctx context.Context, maxWait time.Duration) (time.Duration, bool, error) {
	return b.pg.ReserveRequest(ctx, b.provider, b.interval, maxWait)
}

// LocalBudget is a Budget for one process: slots Interval apart, booked in order.
type LocalBudget struct {
	// Interval between slots.
	Interval time.Duration

	mu   sync.Mutex // guards following
	next time.Time  // the earliest start of the next slot
}

// Reserve implements Budget.
func (b *LocalBudget) Reserve(_ context.Context, maxWait time.Duration) (time.Duration, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	slot := b.next
	if slot.Before(now) {
		slot = now
	}
	wait := slot.Sub(now)
	if wait > maxWait {
		return wait, false, nil
	}
	b.next = slot.Add(b.Interval)
	return wait, true, nil
}
