package openaisim

import (
	"context"
	"time"
)

// pacer injects a sequence of delays (time to first token, then per token
// or per chunk) against absolute deadlines, so oversleeping one delay on a
// loaded machine shortens the next: n tokens take TimeToFirstToken +
// (n−1)·PerToken in total, not more. Every requested delay is added to the
// request's Injected record. With a custom sleep (WithSleep) each delay is
// passed through as requested.
type pacer struct {
	s       *Server
	ctx     context.Context
	lat     Latency
	inj     *Injected
	next    time.Time
	started bool
	tokens  int
}

func (s *Server) newPacer(ctx context.Context, lat Latency, inj *Injected) *pacer {
	return &pacer{s: s, ctx: ctx, lat: lat, inj: inj}
}

// token waits before one output token (or delta) and reports whether the
// request is still alive.
func (p *pacer) token() bool {
	p.tokens++
	if p.tokens == 1 {
		return p.wait(p.lat.TimeToFirstToken, &p.inj.FirstToken)
	}
	return p.wait(p.lat.PerToken, &p.inj.Tokens)
}

// wait injects d, accounted in acc.
func (p *pacer) wait(d time.Duration, acc *time.Duration) bool {
	if !p.started {
		p.next, p.started = time.Now(), true
	}
	if d <= 0 {
		return p.ctx.Err() == nil
	}
	*acc += d
	if !p.s.realSleep {
		return p.s.sleep(p.ctx, d) == nil
	}
	p.next = p.next.Add(d)
	return sleepCtx(p.ctx, time.Until(p.next)) == nil
}
