package openaitest

import (
	"context"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// HeldDelay is the latency a rule asks for (Rule.Latency.TimeToFirstToken) to be held by a
// Gate: an answer in flight for as long as the test needs, with no wall clock.
const HeldDelay = 4321 * time.Second

// Gate holds the simulator's answers whose injected delay is HeldDelay until Release; every
// other delay passes at once. Give the simulator Option().
type Gate struct {
	arrived chan struct{}
	release chan struct{}
}

// NewGate returns a closed gate.
func NewGate() *Gate { return &Gate{arrived: make(chan struct{}, 64), release: make(chan struct{})} }

// Option makes the simulator wait through the gate (openaisim.WithSleep).
func (g *Gate) Option() openaisim.Option { return openaisim.WithSleep(g.sleep) }

// Arrived waits until one more answer is held (or ctx ends: false).
func (g *Gate) Arrived(ctx context.Context) bool {
	select {
	case <-g.arrived:
		return true
	case <-ctx.Done():
		return false
	}
}

// Release lets every held answer go, and every later one pass; call it once.
func (g *Gate) Release() { close(g.release) }

func (g *Gate) sleep(ctx context.Context, d time.Duration) error {
	if d != HeldDelay {
		return ctx.Err()
	}
	g.arrived <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
