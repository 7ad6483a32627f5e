// Package pace schedules fixed-interval frames (20 ms Opus) from the
// monotonic clock: slot n is due at start + n×interval, so errors never
// accumulate (no drift), and after a stall the pacer skips the missed slots
// instead of sending them back to back (no bursts).
//
// It uses time.Now and time.Timer (monotonic readings); tests drive it with
// testing/synctest.
package pace

import (
	"context"
	"runtime"
	"time"
)

// Slot describes the slot a Wait call returned in.
type Slot struct {
	// Index is the slot number since the timeline started (Reset or the
	// first Wait); it advances by 1+Skipped per call. RTP timestamps follow
	// it: ts = base + Index × samples per frame.
	Index int64
	// Skipped is the number of slots dropped before this one because the
	// caller fell behind by at least a whole interval.
	Skipped int
	// Lateness is how far after the slot's due time Wait returned.
	Lateness time.Duration
}

// Pacer hands out one slot per interval. It may not be used concurrently.
type Pacer struct {
	// Spin is the final stretch before each slot that Wait spends yielding
	// (runtime.Gosched) instead of sleeping on a timer, to avoid timer
	// and wake-up granularity (about 1 ms on Linux). It costs up to
	// Spin/interval of a core. Zero (the default of New) sleeps only.
	Spin time.Duration
	// ThreadSleep makes Wait sleep with an absolute clock_nanosleep on the
	// calling OS thread instead of a Go timer; use it from a goroutine in
	// EnterRealtime, where the kernel then wakes the thread on time. The
	// sleep cannot be interrupted by ctx (it lasts at most one interval).
	ThreadSleep bool

	interval time.Duration
	start    time.Time // timeline origin (monotonic)
	index    int64     // next slot to hand out
	running  bool
	timer    *time.Timer
}

// New returns a Pacer for the given interval (20 ms for Discord Opus).
func New(interval time.Duration) *Pacer {
	if interval <= 0 {
		panic("pace: non-positive interval")
	}
	return &Pacer{interval: interval}
}

// Interval returns the slot length.
func (p *Pacer) Interval() time.Duration { return p.interval }

// Reset starts a new timeline: the next Wait returns at once with Index 0.
// Call it when a talk spurt starts after silence.
func (p *Pacer) Reset() { p.running = false }

// Wait blocks until the next slot is due and returns it. The first call
// after New or Reset returns immediately. If the caller is late by one
// interval or more (the previous frame took too long, the process stalled),
// Wait returns at once with the missed slots counted in Skipped and the
// timeline kept on its original grid, so a stall costs skipped frames, not a
// burst. It returns ctx.Err() if ctx ends first; the slot is then not used.
func (p *Pacer) Wait(ctx context.Context) (Slot, error) {
	now := time.Now()
	if !p.running {
		p.running, p.start, p.index = true, now, 1
		return Slot{}, nil
	}
	due := p.start.Add(time.Duration(p.index) * p.interval)
	if d := due.Sub(now) - p.Spin; d > 0 {
		sleep := p.sleep
		if p.ThreadSleep {
			sleep = func(ctx context.Context, d time.Duration) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				return sleepAbsolute(d)
			}
		}
		if err := sleep(ctx, d); err != nil {
			return Slot{}, err
		}
	}
	if p.Spin > 0 {
		for time.Now().Before(due) {
			if err := ctx.Err(); err != nil {
				return Slot{}, err
			}
			runtime.Gosched()
		}
	}
	now = time.Now()
	var skipped int64
	if late := now.Sub(due); late >= p.interval {
		skipped = int64(late / p.interval)
		due = due.Add(time.Duration(skipped) * p.interval)
	}
	s := Slot{Index: p.index + skipped, Skipped: int(skipped), Lateness: now.Sub(due)}
	p.index += skipped + 1
	return s, nil
}

func (p *Pacer) sleep(ctx context.Context, d time.Duration) error {
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-p.timer.C:
		return nil
	case <-ctx.Done():
		p.timer.Stop()
		return ctx.Err()
	}
}
