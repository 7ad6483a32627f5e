package realtime

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// ErrBackingOff is returned by Respond while the Responder waits before starting a new
// provider after one gave up (Config.GiveUpBackoff).
var ErrBackingOff = errors.New("realtime: backing off after the provider gave up")

// withJitter takes a random part of the second half of d off: d/2 ≤ withJitter(d) ≤ d, so sessions that
// failed together do not retry together.
func withJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d - rand.N(d/2)
}

// giveUpDelay is the wait after the n-th give-up in a row: GiveUpBackoff doubled n-1 times,
// at most MaxGiveUpBackoff, before jitter.
func giveUpDelay(base, ceiling time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// gaveUp records a provider that stopped on its own or failed to start: no new one starts
// before the back-off has passed. Call with p.mu.
func (p *Responder) gaveUp(cause string, err error) {
	p.failures++
	d := withJitter(giveUpDelay(p.cfg.GiveUpBackoff, p.cfg.MaxGiveUpBackoff, p.failures))
	p.retryAt = p.now().Add(d)
	p.cfg.Metrics.gaveUp(cause)
	attrs := []any{"cause", cause, "in_a_row", p.failures, "retry_in", d}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	p.log().Warn("realtime_backoff", attrs...)
}

// backingOff returns ErrBackingOff (counted) while the back-off lasts. Call with p.mu.
func (p *Responder) backingOff() error {
	if left := p.retryAt.Sub(p.now()); left > 0 {
		p.cfg.Metrics.backoffRefused()
		return fmt.Errorf("%w: %d in a row, retry in %v", ErrBackingOff, p.failures, left.Round(time.Millisecond))
	}
	return nil
}

// answered resets the give-ups in a row: the provider answered a reply.
func (p *Responder) answered() {
	p.mu.Lock()
	p.failures = 0
	p.mu.Unlock()
}

func (p *Responder) log() *slog.Logger {
	if p.cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	l := p.cfg.Logger
	if p.cfg.Provider != "" {
		l = l.With("provider", string(p.cfg.Provider))
	}
	return l
}
