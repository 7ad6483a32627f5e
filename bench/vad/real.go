package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/bench/vad/realset"
	"github.com/banterbot/banter/bench/vad/silero"
)

// realOptions are the flags of a run on the real set.
type realOptions struct {
	data, split, interop, write string
	seed                        uint64
	noiseSec                    int
	verbose                     bool
	types                       []string
}

// utt is one utterance (or discarded one) as a detector reported it.
type utt struct {
	from, to    time.Duration // audio it covers (kept utterances)
	spanFrom    time.Duration // the utterance's extent, for counting
	spanTo      time.Duration // utterances over a pause item
	decided     time.Duration // when its end was known
	kept, final bool          // sent on (EventEnd / a kept segment); the utterance's last chunk
}

// outcome is what one detector reported over a clip.
type outcome struct {
	utts  []utt
	barge []time.Duration
}

// detectorNames are the two detectors, in table order.
func detectorNames() [2]string { return [2]string{"banter", "silero"} }

// realJob is one clip measured with both detectors.
type realJob struct {
	clip realset.Clip
	res  [2]realResult
	err  error
}

// realResult is one clip's score for one detector.
type realResult struct {
	minutes         float64
	phantoms, barge int
	speechN         int
	missedN         int
	eos             []time.Duration
	noEnd           int
	items           int
	pauseN          map[time.Duration]int // pause items by pause
	pauseSplit      map[time.Duration]int // of those, split
	perItem         []string
	// bySpeaker: per speaker, speech frames missed and counted, and sentences with a
	// 400-700 ms pause split and counted
	bySpeaker map[string]speakerResult
}

// speakerResult is one speaker's share of a realResult.
type speakerResult struct{ missed, speech, splits, pauses int }

func (a *realResult) addSpeaker(name string, b speakerResult) {
	if a.bySpeaker == nil {
		a.bySpeaker = map[string]speakerResult{}
	}
	s := a.bySpeaker[name]
	s.missed, s.speech, s.splits, s.pauses = s.missed+b.missed, s.speech+b.speech, s.splits+b.splits, s.pauses+b.pauses
	a.bySpeaker[name] = s
}

func runReal(ctx context.Context, o realOptions) error {
	if err := realset.Check(o.data); err != nil {
		return err
	}
	if err := silero.Available(o.interop); err != nil {
		return fmt.Errorf("vad: the Silero baseline: %w", err)
	}
	slog.Info("vad: building the real set", "split", o.split, "data", o.data, "seed", o.seed)
	set, err := realset.Build(realset.Options{Dir: o.data, Split: o.split, Seed: o.seed, NoiseSeconds: o.noiseSec, Types: o.types})
	if err != nil {
		return err
	}
	if o.write != "" {
		if err := writeRealClips(o.write, set); err != nil {
			return err
		}
	}
	jobs := make([]*realJob, len(set.Clips))
	for i, c := range set.Clips {
		jobs[i] = &realJob{clip: c}
	}
	var minutes float64
	for _, c := range set.Clips {
		minutes += c.Seconds() / 60
	}
	workers := runtime.GOMAXPROCS(0)
	slog.Info("vad: measuring", "clips", len(jobs), "minutes", fmt.Sprintf("%.1f", minutes), "workers", workers)
	next := make(chan *realJob)
	var wg sync.WaitGroup
	startErr := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := silero.Start(ctx, o.interop)
			if err != nil {
				startErr[w] = err
				for range next {
				}
				return
			}
			for j := range next {
				j.err = measureReal(j, m)
			}
			if err := m.Close(); err != nil {
				startErr[w] = err
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, err := range startErr {
		if err != nil {
			return err
		}
	}
	for _, j := range jobs {
		if j.err != nil {
			return j.err
		}
	}
	if o.verbose {
		for _, j := range jobs {
			if len(j.clip.Items) > 0 {
				for d, name := range detectorNames() {
					fmt.Println(j.clip.Type, j.clip.SNR, name, j.res[d].perItem)
				}
			}
		}
	}
	printSetSummary(os.Stdout, set)
	printRealTable(os.Stdout, set, jobs)
	return nil
}

// measureReal encodes the clip as a Discord client would, plays it into
// banter's Listener, and decodes the same packets to 16 kHz mono for
// Silero.
func measureReal(j *realJob, m *silero.Model) error {
	pkts, err := encode(j.clip.Samples)
	if err != nil {
		return err
	}
	h, err := listen(pkts, vad.DefaultConfig().Algorithm)
	if err != nil {
		return err
	}
	j.res[0] = scoreReal(j.clip, banterOutcome(h))
	dec, err := opus.NewDecoderFormat(pcm.Speech16k().Rate, 1)
	if err != nil {
		return err
	}
	heardPCM := make([]int16, 0, len(pkts)*realset.FrameLen)
	buf := make([]int16, realset.FrameLen)
	for _, p := range pkts {
		n, err := dec.Decode(p, buf)
		if err != nil {
			return fmt.Errorf("vad: decode for silero: %w", err)
		}
		heardPCM = append(heardPCM, buf[:n]...)
	}
	probs, err := m.Probs(heardPCM)
	if err != nil {
		return err
	}
	segs := silero.Segments(probs, len(heardPCM), silero.DefaultParams())
	j.res[1] = scoreReal(j.clip, sileroOutcome(segs))
	return nil
}

func banterOutcome(h heard) outcome {
	var o outcome
	for i, ev := range h.events {
		switch ev.Kind {
		case vad.EventEnd:
			from := ev.AudioStart
			o.utts = append(o.utts, utt{from: from, to: from + pcm.Speech16k().Duration(h.lens[i]),
				spanFrom: ev.SpeechStart, spanTo: ev.SpeechEnd, decided: ev.At, kept: true, final: ev.Final})
		case vad.EventDiscard:
			if ev.Final {
				o.utts = append(o.utts, utt{decided: ev.At, final: true})
			}
		}
	}
	o.barge = h.barge
	return o
}

func sileroOutcome(segs []silero.Segment) outcome {
	var o outcome
	for _, s := range segs {
		o.utts = append(o.utts, utt{from: s.Start, to: s.End, spanFrom: s.Start, spanTo: s.End,
			decided: s.Decided, kept: s.Kept, final: true})
		if s.Barge >= 0 {
			o.barge = append(o.barge, s.Barge)
		}
	}
	return o
}

func scoreReal(c realset.Clip, o outcome) realResult {
	fd := pcm.FrameDuration
	r := realResult{minutes: c.Seconds() / 60, barge: len(o.barge)}
	if len(c.Items) == 0 {
		for _, u := range o.utts {
			if u.kept {
				r.phantoms++
			}
		}
		return r
	}
	r.items = len(c.Items)
	covered := make([]bool, len(c.Speech))
	for _, u := range o.utts {
		if !u.kept {
			continue
		}
		for f := max(0, int(u.from/fd)); f < min(int((u.to+fd-1)/fd), len(covered)); f++ {
			covered[f] = true
		}
	}
	for k, it := range c.Items {
		n, m := 0, 0
		for f := it.Start / realset.FrameLen; f < it.End/realset.FrameLen; f++ {
			if c.Speech[f] {
				n++
				if !covered[f] {
					m++
				}
			}
		}
		r.speechN += n
		r.missedN += m
		if it.Pause == 0 {
			r.addSpeaker(it.Speaker, speakerResult{missed: m, speech: n})
		}
		r.perItem = append(r.perItem, fmt.Sprintf("%s:%d/%d", it.Name, m, n))

		end := time.Duration(it.End/realset.FrameLen) * fd
		limit := time.Duration(1<<62 - 1)
		if k+1 < len(c.Items) {
			limit = time.Duration(c.Items[k+1].Start/realset.FrameLen) * fd
		}
		found := false
		for _, u := range o.utts {
			if u.final && u.decided > end && u.decided <= limit {
				r.eos = append(r.eos, u.decided-end)
				found = true
				break
			}
		}
		if !found {
			r.noEnd++
		}
		if it.Pause > 0 {
			if r.pauseN == nil {
				r.pauseN, r.pauseSplit = map[time.Duration]int{}, map[time.Duration]int{}
			}
			r.pauseN[it.Pause]++
			from := time.Duration(it.Start/realset.FrameLen) * fd
			var utts int
			for _, u := range o.utts {
				if u.kept && u.final && u.spanTo > from && u.spanFrom < end {
					utts++
				}
			}
			if utts > 1 {
				r.pauseSplit[it.Pause]++
			}
			if it.Pause >= 400*time.Millisecond && it.Pause <= 700*time.Millisecond {
				r.addSpeaker(it.Speaker, speakerResult{splits: min(1, utts-1), pauses: 1})
			}
		}
	}
	return r
}

func (a *realResult) merge(b realResult) {
	a.minutes += b.minutes
	a.phantoms += b.phantoms
	a.barge += b.barge
	a.speechN += b.speechN
	a.missedN += b.missedN
	a.eos = append(a.eos, b.eos...)
	a.noEnd += b.noEnd
	a.items += b.items
	for p, n := range b.pauseN {
		if a.pauseN == nil {
			a.pauseN, a.pauseSplit = map[time.Duration]int{}, map[time.Duration]int{}
		}
		a.pauseN[p] += n
		a.pauseSplit[p] += b.pauseSplit[p]
	}
	for name, sp := range b.bySpeaker {
		a.addSpeaker(name, sp)
	}
}

func (a realResult) missedPct() float64 {
	return 100 * float64(a.missedN) / float64(max(1, a.speechN))
}

// realRow is one line of the table: a type at one SNR.
type realRow struct {
	typ      string
	snr      float64
	sp, only [2]realResult
	hasOnly  bool
	sources  []string
}

func realRows(jobs []*realJob) []*realRow {
	return groupRows(jobs, func(j *realJob) string { return fmt.Sprintf("%s/%g", j.clip.Type, j.clip.SNR) },
		func(j *realJob) *realRow { return &realRow{typ: j.clip.Type, snr: j.clip.SNR} },
		func(r *realRow, j *realJob) {
			for d := range 2 {
				if len(j.clip.Items) > 0 {
					r.sp[d].merge(j.res[d])
				} else {
					r.hasOnly = true
					r.only[d].merge(j.res[d])
				}
			}
		})
}

func printSetSummary(w io.Writer, set *realset.Set) {
	var wide, narrow float64
	var sp []string
	for _, s := range set.Speakers {
		sp = append(sp, fmt.Sprintf("%s (%s, %d kHz)", s.Name, s.Gender, s.Rate/1000))
		if s.Rate < 16000 {
			narrow += s.ItemSecs
		} else {
			wide += s.ItemSecs
		}
	}
	var tr []string
	for _, t := range set.Tracks {
		tr = append(tr, strings.TrimPrefix(t.Type, "music-")+":"+t.Name)
	}
	var minutes float64
	for _, c := range set.Clips {
		minutes += c.Seconds() / 60
	}
	fmt.Fprintf(w, "set real, split %s: %d clips, %.1f min of audio; speakers %s; narrowband (8 kHz) %.0f %% of speech item time\n",
		set.Split, len(set.Clips), minutes, strings.Join(sp, ", "), 100*narrow/max(1, narrow+wide))
	fmt.Fprintf(w, "babble: %s; music: %s\n", strings.Join(set.Babble, ", "), strings.Join(tr, ", "))
	fmt.Fprintln(w, "banter: the default detector ("+vad.DefaultConfig().Algorithm.String()+") through audio.Listener; silero: Silero VAD v5 (node, onnxruntime) on the same decoded audio, get_speech_timestamps with banter's end silence ("+fmt.Sprint(silero.DefaultParams().MinSilence)+") as min silence")
}

func printRealTable(w io.Writer, set *realset.Set, jobs []*realJob) {
	fmt.Fprintln(w, "type             SNR | phantom/min    | barge-in false/min | missed %       | end of speech ms | no end")
	fmt.Fprintln(w, "                     | banter silero  | banter silero      | banter silero  | banter silero    | b  s")
	var phantomMax, bargeMax [2]float64
	var missed5 [2][]float64
	var missedClean [2]float64
	var eosAll [2][]time.Duration
	var pause, clean [2]realResult
	for _, rw := range realRows(jobs) {
		if rw.typ == "clean" {
			clean = rw.sp
		}
		if rw.typ == "pause" {
			for d := range 2 {
				pause[d].merge(rw.sp[d])
			}
			continue
		}
		label := fmt.Sprintf("%-16s %3.0f", rw.typ, rw.snr)
		if rw.typ == "clean" {
			label = fmt.Sprintf("%-20s", "clean")
		}
		ph, bg := [2]string{"-", "-"}, [2]string{"-", "-"}
		var ms, eos [2]string
		var ne [2]int
		for d := range 2 {
			s := rw.sp[d]
			ms[d] = fmt.Sprintf("%.1f", s.missedPct())
			eos[d] = fmt.Sprint(median(s.eos).Milliseconds())
			ne[d] = s.noEnd
			eosAll[d] = append(eosAll[d], s.eos...)
			if rw.typ == "clean" {
				missedClean[d] = s.missedPct()
			}
			if rw.snr == 5 {
				missed5[d] = append(missed5[d], s.missedPct())
			}
			if rw.hasOnly {
				o := rw.only[d]
				p, b := float64(o.phantoms)/o.minutes, float64(o.barge)/o.minutes
				ph[d], bg[d] = fmt.Sprintf("%.1f", p), fmt.Sprintf("%.1f", b)
				phantomMax[d] = max(phantomMax[d], p)
				bargeMax[d] = max(bargeMax[d], b)
			}
		}
		fmt.Fprintf(w, "%s | %6s %6s  | %6s %6s      | %6s %6s  | %6s %6s    | %d %d\n",
			label, ph[0], ph[1], bg[0], bg[1], ms[0], ms[1], eos[0], eos[1], ne[0], ne[1])
	}
	printBySpeaker(w, set, clean, pause)
	// pause items
	var splits, counted [2]int
	var lens []time.Duration
	for p := range pause[0].pauseN {
		lens = append(lens, p)
	}
	slices.Sort(lens)
	for _, p := range lens {
		var cells [2]string
		for d := range 2 {
			n, s := pause[d].pauseN[p], pause[d].pauseSplit[p]
			cells[d] = fmt.Sprintf("%d/%d", s, n)
			if p >= 400*time.Millisecond && p <= 700*time.Millisecond {
				splits[d] += s
				counted[d] += n
			}
		}
		fmt.Fprintf(w, "pause %4d ms: sentences split in two or more utterances: banter %s, silero %s\n", p.Milliseconds(), cells[0], cells[1])
	}
	mean := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s += x
		}
		return s / float64(max(1, len(v)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "vad: set=real split=%s", set.Split)
	for d, name := range detectorNames() {
		prefix := ""
		if d == 1 {
			prefix = name + "_"
		}
		fmt.Fprintf(&b, " %sphantom_per_min_max=%.1f %sbargein_false_per_min_max=%.1f %smissed_pct_clean=%.1f %smissed_pct_5db_mean=%.1f %seos_median_ms=%d %spause_splits=%d/%d",
			prefix, phantomMax[d], prefix, bargeMax[d], prefix, missedClean[d], prefix, mean(missed5[d]),
			prefix, median(eosAll[d]).Milliseconds(), prefix, splits[d], counted[d])
	}
	fmt.Fprintln(w, b.String())
}

// printBySpeaker prints, per speaker of the split, the clean speech missed and the sentences
// with a 400-700 ms pause split, banter beside Silero: where the split's figures come from.
func printBySpeaker(w io.Writer, set *realset.Set, clean, pause [2]realResult) {
	fmt.Fprintln(w, "by speaker: clean missed %, sentences with a 400-700 ms pause split (banter | silero)")
	for _, sp := range set.Speakers {
		var cells [2]string
		for d := range 2 {
			c, p := clean[d].bySpeaker[sp.Name], pause[d].bySpeaker[sp.Name]
			cells[d] = fmt.Sprintf("%5.1f %% %2d/%-2d", 100*float64(c.missed)/float64(max(1, c.speech)), p.splits, p.pauses)
		}
		fmt.Fprintf(w, "  %-20s %s | %s\n", sp.Name, cells[0], cells[1])
	}
}

func writeRealClips(dir string, set *realset.Set) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("vad: %w", err)
	}
	count := map[string]int{}
	for _, c := range set.Clips {
		kind := "speech"
		if len(c.Items) == 0 {
			kind = "only"
		}
		key := fmt.Sprintf("%s-%s-%gdB-%s", set.Split, c.Type, c.SNR, kind)
		count[key]++
		name := fmt.Sprintf("%s-%d.wav", key, count[key])
		if err := os.WriteFile(filepath.Join(dir, name), wav.Encode(pcm.Speech16k(), c.Samples), 0o644); err != nil {
			return fmt.Errorf("vad: write %s: %w", name, err)
		}
	}
	return nil
}
