package voice

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// hearClock is the receive side's one clock for every session of a Service
// (issue 24): a single goroutine that wakes every 20 ms and, for each speaker
// of each session, takes the frames its stream delivered since the last tick
// (decoding them in one batch: jitter buffer → Opus → VAD and endpointing),
// advances the speaker's Listener by one frame of wall time (Listener.Tick)
// and checks barge-in. The process then wakes 50 times a second for hearing
// however many members are connected, instead of one goroutine per speaker
// woken by each of its packets and by its own 20 ms ticker (50 wake-ups a
// second per member, in silence too).
//
// The goroutine runs only while some speaker is registered; it exits on the
// first tick with none left. A speaker is dropped when its stream ends (the
// Listener is flushed: an utterance in progress ends) or its session does;
// each registered speaker holds one count of its session's WaitGroup, so a
// session's wind-down waits for the clock to let go of its speakers and
// what they started (chunk transcriptions, turns) is counted before that.
type hearClock struct {
	mu      sync.Mutex // guards following
	pending []*speaker // registered since the last tick
	running bool
	exited  chan struct{} // closed when the running goroutine returns

	ticks atomic.Uint64 // wake-ups, for Stats

	// owned by the tick goroutine
	speakers []*speaker
}

// add registers a speaker; the clock serves it from its next tick.
func (hc *hearClock) add(sp *speaker) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	hc.pending = append(hc.pending, sp)
	if !hc.running {
		hc.running, hc.exited = true, make(chan struct{})
		go hc.run(hc.exited)
	}
}

// wait returns once the clock's goroutine is not running (no speaker left),
// or when ctx ends.
func (hc *hearClock) wait(ctx context.Context) error {
	hc.mu.Lock()
	running, exited := hc.running, hc.exited
	hc.mu.Unlock()
	if !running {
		return nil
	}
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (hc *hearClock) run(exited chan struct{}) {
	defer close(exited)
	t := time.NewTicker(pcm.FrameDuration)
	defer t.Stop()
	for {
		if !hc.take() {
			return
		}
		<-t.C
		hc.ticks.Add(1)
		w := 0
		for i, sp := range hc.speakers {
			if i%yieldEvery == yieldEvery-1 {
				// A tick of hundreds of speakers is milliseconds of decoding on
				// one goroutine; the Go scheduler runs this P's expired timers
				// only between goroutines, so without a yield the send clock's
				// timer (set on this P) waits for the whole tick.
				runtime.Gosched()
			}
			if sp.tick() {
				hc.speakers[w] = sp
				w++
				continue
			}
			sp.leave()
		}
		clear(hc.speakers[w:])
		hc.speakers = hc.speakers[:w]
	}
}

// yieldEvery is how many speakers the clock ticks between yields to the
// scheduler: about 0.5–1 ms of decoding and VAD.
const yieldEvery = 32

// take moves the speakers registered since the last tick onto the clock's
// list; with none left at all it marks the clock stopped and reports false.
func (hc *hearClock) take() bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	hc.speakers = append(hc.speakers, hc.pending...)
	clear(hc.pending)
	hc.pending = hc.pending[:0]
	if len(hc.speakers) == 0 {
		hc.running = false
		return false
	}
	return true
}

// HearingStats counts the receive side's clock (Service.HearingStats).
type HearingStats struct {
	// Ticks are the hearing clock's wake-ups (one every 20 ms while any
	// member is connected to any session).
	Ticks uint64
}

// HearingStats returns the hearing clock's counters.
func (svc *Service) HearingStats() HearingStats {
	return HearingStats{Ticks: svc.hear.ticks.Load()}
}
