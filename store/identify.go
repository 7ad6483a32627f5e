package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// IdentifyGate is the database's identify gate with spacing between identifies of a key, as a
// discord.IdentifyGate.
func (s *Postgres) IdentifyGate(spacing time.Duration) IdentifyGate {
	return IdentifyGate{pg: s, spacing: spacing}
}

// IdentifyGate spaces identifies through a Postgres database (AcquireIdentify).
type IdentifyGate struct {
	pg      *Postgres
	spacing time.Duration
}

// Acquire implements discord.IdentifyGate.
func (g IdentifyGate) Acquire(ctx context.Context, key int) (func(), error) {
	return g.pg.AcquireIdentify(ctx, key, g.spacing)
}

// AcquireIdentify implements discord.IdentifyGate across every process sharing this database:
// shards with the same rate-limit key (shard_id % max_concurrency) identify one at a time, each
// spacing after the last, whichever process runs them. The key's row stays locked until release,
// so a second process waits in the database; the times are the database's clock, so processes
// with skewed clocks still space correctly. They are clock_timestamp(), the time of the
// statement: now() is the start of the transaction, which began before the wait for the row's
// lock, so a release would book the next identify too early and a wait would be computed too
// long.
func (s *Postgres) AcquireIdentify(ctx context.Context, key int, spacing time.Duration) (func(), error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: identify gate: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		conn.Release()
		return nil, fmt.Errorf("store: identify gate: %w", err)
	}
	fail := func(err error) (func(), error) {
		tx.Rollback(context.WithoutCancel(ctx))
		conn.Release()
		return nil, fmt.Errorf("store: identify gate key %d: %w", key, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO identify_slots (key, next_at) VALUES ($1, clock_timestamp()) ON CONFLICT (key) DO NOTHING`, key); err != nil {
		return fail(err)
	}
	// Lock the row first (waiting while another process identifies), then read the wait: one
	// statement would compute it before the lock wait.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM identify_slots WHERE key=$1 FOR UPDATE`, key); err != nil {
		return fail(err)
	}
	var waitSeconds float64
	if err := tx.QueryRow(ctx, `SELECT GREATEST(EXTRACT(EPOCH FROM next_at - clock_timestamp()), 0)::float8
		FROM identify_slots WHERE key=$1`, key).Scan(&waitSeconds); err != nil {
		return fail(err)
	}
	wait := time.Duration(waitSeconds * float64(time.Second))
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fail(ctx.Err())
		}
	}
	return sync.OnceFunc(func() {
		bg := context.WithoutCancel(ctx)
		_, err := tx.Exec(bg, `UPDATE identify_slots SET next_at = clock_timestamp() + make_interval(secs => $2) WHERE key=$1`, key, spacing.Seconds())
		if err == nil {
			err = tx.Commit(bg)
		} else {
			tx.Rollback(bg)
		}
		conn.Release()
		_ = err // a failed release leaves the row's old time: the next identify waits less, never forever
	}), nil
}
