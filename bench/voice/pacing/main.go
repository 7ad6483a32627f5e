// Command pacing measures the send pacing jitter of discord/voice/pace under
// CPU load, against naive baselines measured in the same run.
//
//	go run ./bench/voice/pacing -frames 500 -load threads -spin 1ms -rt 10
//
// Load modes (n burners, default GOMAXPROCS, i.e. both cores here):
//   - none: no extra load.
//   - threads: n CPU-burning goroutines each locked to its own OS thread,
//     with GOMAXPROCS raised by n so the process keeps a P for the pacer:
//     the cores are saturated at the OS level, as when other work shares
//     the machine.
//   - goroutines: n CPU-burning goroutines inside GOMAXPROCS: the pacer then
//     waits for Go's 10 ms preemption to get a P back, which the numbers show.
//
// Jitter is |send instant − ideal slot| for every frame on the pacer's grid
// (start + n × 20 ms); the sleep baseline is measured against the same grid
// and therefore also shows its drift.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/discord/voice/pace"
	"golang.org/x/sys/unix"
)

var (
	rtPrio     int
	sliceReq   time.Duration
	burnerTIDs sync.Map // int32 → true
)

// applySlice requests a short EEVDF slice for every thread of the process
// except the burners, so the pacer's wake-ups preempt the running task.
func applySlice(d time.Duration) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		var tid int
		fmt.Sscan(t.Name(), &tid)
		if _, burner := burnerTIDs.Load(int32(tid)); burner {
			continue
		}
		if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_NORMAL, Runtime: uint64(d)}, 0); err != nil {
			return fmt.Errorf("sched_setattr %d: %w", tid, err)
		}
	}
	return nil
}

const interval = 20 * time.Millisecond

func main() {
	frames := flag.Int("frames", 500, "frames per method (20 ms each)")
	load := flag.String("load", "threads", "none, threads or goroutines")
	n := flag.Int("n", runtime.GOMAXPROCS(0), "burners")
	spin := flag.Duration("spin", 0, "pace.Pacer.Spin (0: sleep only)")
	rt := flag.Int("rt", 0, "also measure the pacer on a SCHED_FIFO thread at this priority with clock_nanosleep (voice.Config.SendRealtimePriority; needs CAP_SYS_NICE); 0 skips")
	slice := flag.Duration("slice", 0, "EEVDF slice request (sched_setattr sched_runtime, Linux ≥ 6.12) for this process's threads except the burners; 0 leaves the default")
	flag.Parse()
	sliceReq = *slice
	rtPrio = *rt
	if err := run(*frames, *load, *n, *spin); err != nil {
		fmt.Fprintln(os.Stderr, "bench/voice/pacing:", err)
		os.Exit(1)
	}
}

func run(frames int, load string, n int, spin time.Duration) error {
	stop, err := startLoad(load, n)
	if err != nil {
		return err
	}
	defer stop()
	if sliceReq > 0 {
		time.Sleep(50 * time.Millisecond) // let the burners mark their threads
		if err := applySlice(sliceReq); err != nil {
			return err
		}
	}
	fmt.Printf("load=%s burners=%d GOMAXPROCS=%d NumCPU=%d frames=%d slice=%v\n", load, n, runtime.GOMAXPROCS(0), runtime.NumCPU(), frames, sliceReq)
	report("pacer", measurePacer(frames, 0))
	if spin > 0 {
		report("pacer+spin "+spin.String(), measurePacer(frames, spin))
	}
	if rtPrio > 0 {
		r, err := measureRT(frames, rtPrio)
		if err != nil {
			return err
		}
		report(fmt.Sprintf("pacer rt fifo%d", rtPrio), r)
	}
	report("time.Ticker", measureTicker(frames))
	report("time.Sleep loop", measureSleep(frames))
	return nil
}

type result struct {
	offs    []time.Duration
	late    int // > 2 ms after the slot
	skipped int
}

func report(name string, r result) {
	o := slices.Clone(r.offs)
	slices.Sort(o)
	q := func(p float64) time.Duration { return o[int(p*float64(len(o)-1))] }
	fmt.Printf("%-18s p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms  late(>2ms) %4d  skipped %d\n",
		name, ms(q(0.5)), ms(q(0.99)), ms(o[len(o)-1]), r.late, r.skipped)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func measurePacer(frames int, spin time.Duration) result {
	p := pace.New(interval)
	p.Spin = spin
	ctx := context.Background()
	var r result
	var start time.Time
	for range frames {
		s, _ := p.Wait(ctx)
		now := time.Now()
		if s.Index == 0 {
			start = now
		}
		r.add(now.Sub(start.Add(time.Duration(s.Index) * interval)))
		r.skipped += s.Skipped
	}
	return r
}

func measureTicker(frames int) result {
	t := time.NewTicker(interval)
	defer t.Stop()
	start := time.Now()
	var r result
	r.add(0)
	for i := 1; i < frames; i++ {
		<-t.C
		r.add(time.Since(start.Add(time.Duration(i) * interval)))
	}
	return r
}

func measureSleep(frames int) result {
	start := time.Now()
	var r result
	for i := range frames {
		if i > 0 {
			time.Sleep(interval)
		}
		r.add(time.Since(start.Add(time.Duration(i) * interval)))
	}
	return r
}

func (r *result) add(d time.Duration) {
	r.offs = append(r.offs, d.Abs())
	if d > 2*time.Millisecond {
		r.late++
	}
}

func startLoad(mode string, n int) (func(), error) {
	var done atomic.Bool
	var wg sync.WaitGroup
	spin := func(lock bool) {
		defer wg.Done()
		if lock {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			burnerTIDs.Store(int32(unix.Gettid()), true)
		}
		x := uint64(1)
		for !done.Load() {
			for range 1000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		_ = x
	}
	switch mode {
	case "none":
		return func() {}, nil
	case "threads":
		prev := runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + n)
		for range n {
			wg.Add(1)
			go spin(true)
		}
		return func() { done.Store(true); wg.Wait(); runtime.GOMAXPROCS(prev) }, nil
	case "goroutines":
		for range n {
			wg.Add(1)
			go spin(false)
		}
		return func() { done.Store(true); wg.Wait() }, nil
	default:
		return nil, fmt.Errorf("unknown load %q", mode)
	}
}

// measureRT is measurePacer on a goroutine in pace.EnterRealtime(prio) with
// Pacer.ThreadSleep, the path voice.Config.SendRealtimePriority takes.
func measureRT(frames, prio int) (result, error) {
	type out struct {
		r   result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		leave, err := pace.EnterRealtime(prio)
		if err != nil {
			ch <- out{err: err}
			return
		}
		defer leave()
		p := pace.New(interval)
		p.ThreadSleep = true
		ctx := context.Background()
		var r result
		var start time.Time
		for range frames {
			s, _ := p.Wait(ctx)
			now := time.Now()
			if s.Index == 0 {
				start = now
			}
			r.add(now.Sub(start.Add(time.Duration(s.Index) * interval)))
			r.skipped += s.Skipped
		}
		ch <- out{r: r}
	}()
	o := <-ch
	return o.r, o.err
}
