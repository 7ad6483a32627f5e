package realtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// SessionError is an error event the server answered session.update with
// (an invalid instruction, voice or turn-detection setting). Retrying the
// same Session will not help.
type SessionError struct{ Info ErrorInfo }

// Error implements error.
func (e *SessionError) Error() string {
	return fmt.Sprintf("realtime: session setup rejected: %s: %s", e.Info.Code, e.Info.Message)
}

// Back-off of Open between dial attempts.
const (
	openBackoffStart = 250 * time.Millisecond
	openBackoffMax   = 5 * time.Second
)

// Open dials, waits for session.created, sends session.update with sess
// and waits for session.updated: a ready session. Used for the first
// connection and for every reconnect (with the same Session, so the
// instructions survive a drop). Retryable failures (network errors,
// handshake 429/5xx, a socket dropped during setup) are retried with
// exponential back-off (250 ms doubling to 5 s, with jitter) up to attempts
// times in total (attempts < 1 means 1), within ctx. A *SessionError or a
// non-retryable *HandshakeError is returned at once.
func Open(ctx context.Context, cfg Config, sess Session, attempts int) (*Conn, error) {
	attempts = max(attempts, 1)
	delay := openBackoffStart
	for n := 1; ; n++ {
		c, err := openOnce(ctx, cfg, sess)
		if err == nil {
			return c, nil
		}
		var he *HandshakeError
		var se *SessionError
		switch {
		case errors.As(err, &se), errors.As(err, &he) && !he.Retryable, ctx.Err() != nil, n >= attempts:
			return nil, fmt.Errorf("realtime: open (attempt %d of %d): %w", n, attempts, err)
		}
		wait := delay - time.Duration(rand.Int64N(int64(delay/4)+1))
		if cfg.Logger != nil {
			cfg.Logger.Warn("realtime_reconnect_backoff", "attempt", n, "delay", wait, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("realtime: open: %w (last error: %w)", ctx.Err(), err)
		case <-t.C:
		}
		delay = min(2*delay, openBackoffMax)
	}
}

// setupTimeout bounds waiting for session.created/updated when ctx has no
// deadline of its own.
const setupTimeout = 10 * time.Second

func openOnce(ctx context.Context, cfg Config, sess Session) (*Conn, error) {
	c, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	fail := func(err error) (*Conn, error) {
		_ = c.Close()
		return nil, err
	}
	var ev Event
	if err := c.waitFor(sctx, &ev, EventSessionCreated); err != nil {
		return fail(err)
	}
	if err := c.UpdateSession(sctx, sess); err != nil {
		return fail(err)
	}
	if err := c.waitFor(sctx, &ev, EventSessionUpdated); err != nil {
		return fail(err)
	}
	return c, nil
}

// waitFor reads until an event of type t; an error event fails it.
func (c *Conn) waitFor(ctx context.Context, ev *Event, t EventType) error {
	for {
		if err := c.ReadEvent(ctx, ev); err != nil {
			return err
		}
		switch ev.Type {
		case t:
			return nil
		case EventError:
			return &SessionError{Info: ev.Error}
		}
	}
}
