package pace

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// burn keeps n OS threads busy (pure CPU) until stop, raising GOMAXPROCS by
// n so the cores are saturated at the OS level while the process keeps a P
// for the pacer (as when other work shares the machine). See bench/voice/pacing for
// the in-GOMAXPROCS variant.
func burn(n int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	prev := runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			x := uint64(1)
			for !done.Load() {
				for range 1000 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			_ = x
		}()
	}
	return func() { done.Store(true); wg.Wait(); runtime.GOMAXPROCS(prev) }
}

// jitterStats reports p50/p99/max of |send instant − ideal slot| in ms.
func jitterStats(b *testing.B, offs []time.Duration) {
	slices.Sort(offs)
	q := func(p float64) float64 { return float64(offs[int(p*float64(len(offs)-1))]) / 1e6 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(offs[len(offs)-1])/1e6, "max-ms")
}

// BenchmarkPacerJitter measures how far from its ideal 20 ms grid each frame
// leaves, with one CPU-burning thread per core (both cores busy), against
// a naive time.Sleep(20 ms) loop in the same run (which drifts: its error
// grows with every frame).
func BenchmarkPacerJitter(b *testing.B) {
	const interval = 20 * time.Millisecond
	for _, loaded := range []bool{false, true} {
		name := "idle"
		if loaded {
			name = "cores-busy"
		}
		b.Run(name+"/pacer-rt-fifo10", func(b *testing.B) {
			if loaded {
				defer burn(runtime.GOMAXPROCS(0))()
			}
			leave, err := EnterRealtime(10)
			if err != nil {
				b.Skip(err)
			}
			defer leave()
			p := New(interval)
			p.ThreadSleep = true
			measure(b, p)
		})
		for _, spin := range []time.Duration{0, time.Millisecond} {
			b.Run(name+"/pacer-spin-"+spin.String(), func(b *testing.B) {
				if loaded {
					defer burn(runtime.GOMAXPROCS(0))()
				}
				p := New(interval)
				p.Spin = spin
				measure(b, p)
			})
		}
		b.Run(name+"/naive-sleep", func(b *testing.B) {
			if loaded {
				defer burn(runtime.GOMAXPROCS(0))()
			}
			var offs []time.Duration
			start := time.Now()
			i := 0
			for b.Loop() {
				if i > 0 {
					time.Sleep(interval)
				}
				offs = append(offs, time.Since(start.Add(time.Duration(i)*interval)).Abs())
				i++
			}
			jitterStats(b, offs)
		})
	}
}

// measure runs p for b.N frames and reports the jitter.
func measure(b *testing.B, p *Pacer) {
	ctx := context.Background()
	var offs []time.Duration
	var start time.Time
	for b.Loop() {
		s, err := p.Wait(ctx)
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		if s.Index == 0 {
			start = now
		}
		offs = append(offs, now.Sub(start.Add(time.Duration(s.Index)*p.Interval())).Abs())
	}
	jitterStats(b, offs)
}
