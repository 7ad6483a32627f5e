package main

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/bench/vad/realset"
)

// The streams -starts plays: a stream starting every startEvery in each noise-alone clip,
// startWindow long; and a stream starting each of firstLeads before each speech item, up to
// the item's end and firstAfter more.
const (
	startEvery  = 5 * time.Second
	startWindow = 10 * time.Second
	firstAfter  = time.Second
)

var firstLeads = []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second}

// startsRow is one noise type at one SNR: streams that start in the noise alone and barge in,
// and items barged in by streams that start lead before them, per firstLeads.
type startsRow struct {
	typ          string
	snr          float64
	alone, false int
	items        int
	barged       []int
	delay        [][]time.Duration // per firstLeads: barge-in after the item's first speech frame
}

// runStarts measures banter's default detector at the start of streams, where it does not
// know the room yet: the dev split's noise-alone clips played as streams that start every
// startEvery (a microphone opened in chatter or music: barge-ins there are false), and its
// speech clips played as streams that start 0-2 s before each item (a member who talks over
// the bot in their first seconds: those should barge in). The set itself starts one stream
// per clip; this is the held-out case of many streams starting in a talking room. A tuning aid,
// so it runs on the dev split only.
func runStarts(w io.Writer, o realOptions) error {
	if o.split != "dev" {
		return fmt.Errorf("vad: -starts runs on the dev split only (the test split is not for tuning), got -split %s", o.split)
	}
	if err := realset.Check(o.data); err != nil {
		return err
	}
	set, err := realset.Build(realset.Options{Dir: o.data, Split: o.split, Seed: o.seed, NoiseSeconds: o.noiseSec, Types: o.types})
	if err != nil {
		return err
	}
	var clips []realset.Clip
	for _, c := range set.Clips {
		if c.Type != "pause" {
			clips = append(clips, c)
		}
	}
	res := make([]startsRow, len(clips))
	errs := make([]error, len(clips))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res[i], errs[i] = measureStarts(clips[i])
			}
		}()
	}
	for i := range clips {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	rows := groupRows(res, func(r startsRow) string { return fmt.Sprintf("%s/%g", r.typ, r.snr) },
		func(r startsRow) *startsRow {
			return &startsRow{typ: r.typ, snr: r.snr, barged: make([]int, len(firstLeads)), delay: make([][]time.Duration, len(firstLeads))}
		},
		func(a *startsRow, r startsRow) {
			a.alone += r.alone
			a.false += r.false
			a.items += r.items
			for k := range r.barged {
				a.barged[k] += r.barged[k]
				a.delay[k] = append(a.delay[k], r.delay[k]...)
			}
		})
	fmt.Fprintf(w, "starts (dev split, banter's default detector): streams starting every %v in the noise alone (%v each), and %v before each speech item (to its end + %v)\n",
		startEvery, startWindow, firstLeads, firstAfter)
	fmt.Fprintln(w, "type             SNR | noise-alone starts barged in | items barged in, stream starting 0 / 0.5 / 1 / 2 s before")
	tot := startsRow{barged: make([]int, len(firstLeads)), delay: make([][]time.Duration, len(firstLeads))}
	for _, r := range rows {
		label := fmt.Sprintf("%-16s %3.0f", r.typ, r.snr)
		if r.typ == "clean" {
			label = fmt.Sprintf("%-20s", "clean")
		}
		alone := "-"
		if r.alone > 0 {
			alone = fmt.Sprintf("%d/%d", r.false, r.alone)
		}
		fmt.Fprintf(w, "%s | %28s |", label, alone)
		for k, b := range r.barged {
			fmt.Fprintf(w, " %d/%d", b, r.items)
			tot.barged[k] += b
			tot.delay[k] = append(tot.delay[k], r.delay[k]...)
		}
		fmt.Fprintln(w)
		tot.alone += r.alone
		tot.false += r.false
		tot.items += r.items
	}
	fmt.Fprintf(w, "starts: split=dev noise_starts_barged=%d/%d first_words_barged=", tot.false, tot.alone)
	for k, b := range tot.barged {
		if k > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, "%d", b)
	}
	fmt.Fprintf(w, "/%d first_words_bargein_median_ms=", tot.items)
	for k, d := range tot.delay {
		if k > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, "%d", median(d).Milliseconds())
	}
	fmt.Fprintln(w)
	return nil
}

// measureStarts encodes the clip once and plays its streams (runStarts) into fresh Listeners.
func measureStarts(c realset.Clip) (startsRow, error) {
	r := startsRow{typ: c.Type, snr: c.SNR, barged: make([]int, len(firstLeads)), delay: make([][]time.Duration, len(firstLeads))}
	pkts, err := encode(c.Samples)
	if err != nil {
		return r, err
	}
	frame := func(d time.Duration) int { return int(d / pcm.FrameDuration) }
	if len(c.Items) == 0 {
		for from := 0; from+frame(startWindow) <= len(pkts); from += frame(startEvery) {
			h, err := listen(pkts[from:from+frame(startWindow)], vad.DefaultConfig().Algorithm)
			if err != nil {
				return r, err
			}
			r.alone++
			if len(h.barge) > 0 {
				r.false++
			}
		}
		return r, nil
	}
	for _, it := range c.Items {
		start, end := it.Start/realset.FrameLen, it.End/realset.FrameLen+frame(firstAfter)
		r.items++
		for k, lead := range firstLeads {
			from := max(0, start-frame(lead))
			h, err := listen(pkts[from:min(end, len(pkts))], vad.DefaultConfig().Algorithm)
			if err != nil {
				return r, err
			}
			if len(h.barge) > 0 {
				r.barged[k]++
				r.delay[k] = append(r.delay[k], h.barge[0]-pcm.FrameDuration*time.Duration(start-from))
			}
		}
	}
	return r, nil
}
