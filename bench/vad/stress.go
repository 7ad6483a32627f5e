package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/bench/vad/realset"
)

// stressTypes are the noise types -stress builds harder conditions of.
var stressTypes = []string{"babble", "music-folk"}

// stressCase is one harder condition: the split's clean speech clip over the noise-alone clip
// of the type scaled to snr, the items laid out again gap apart (-1: as built).
type stressCase struct {
	snr float64
	gap time.Duration
}

var stressCases = []stressCase{{5, -1}, {3, -1}, {0, -1}, {5, 400 * time.Millisecond}, {3, 400 * time.Millisecond}}

// runStress measures banter's default detector on the dev split's speech under conditions
// harder than the set's (lower SNR, items 400 ms apart): the dev condition issue 30's misses at
// 5 dB over babble were diagnosed on. It is a tuning aid, so it runs on the dev split only.
func runStress(w io.Writer, o realOptions) error {
	if o.split != "dev" {
		return fmt.Errorf("vad: -stress runs on the dev split only (the test split is not for tuning), got -split %s", o.split)
	}
	if err := realset.Check(o.data); err != nil {
		return err
	}
	set, err := realset.Build(realset.Options{Dir: o.data, Split: o.split, Seed: o.seed, NoiseSeconds: 400, Types: stressTypes})
	if err != nil {
		return err
	}
	var clean realset.Clip
	alone := map[string]realset.Clip{}
	for _, c := range set.Clips {
		switch {
		case c.Type == "clean":
			clean = c
		case len(c.Items) == 0 && c.SNR == 5 && alone[c.Type].Samples == nil:
			alone[c.Type] = c
		}
	}
	fmt.Fprintln(w, "stress (dev split, banter's default detector): the clean speech clip over the noise-alone clip at each SNR; gap: items laid out again that far apart")
	fmt.Fprintln(w, "type          SNR  gap    | missed % | no end | barge-ins")
	for _, typ := range stressTypes {
		for _, sc := range stressCases {
			c := clean
			if sc.gap >= 0 {
				c = regap(clean, pcm.Speech16k().Len(sc.gap))
			}
			c = overNoise(c, alone[typ], sc.snr)
			pkts, err := encode(c.Samples)
			if err != nil {
				return err
			}
			h, err := listen(pkts, vad.DefaultConfig().Algorithm)
			if err != nil {
				return err
			}
			r := scoreReal(c, banterOutcome(h))
			gap := "as set"
			if sc.gap >= 0 {
				gap = sc.gap.String()
			}
			fmt.Fprintf(w, "%-12s %4g  %-6s | %8.1f | %6d | %d\n", typ, sc.snr, gap, r.missedPct(), r.noEnd, len(h.barge))
		}
	}
	return nil
}

// overNoise returns c with noise (a noise-alone clip at 5 dB, looped) added at snr.
func overNoise(c, noise realset.Clip, snr float64) realset.Clip {
	g := math.Pow(10, (5-snr)/20)
	out := c
	out.Samples = make([]int16, len(c.Samples))
	for i, v := range c.Samples {
		out.Samples[i] = pcm.Clamp16(float32(float64(v) + g*float64(noise.Samples[i%len(noise.Samples)])))
	}
	return out
}

// regap lays c's items out again gap samples apart (after realset.Lead, 200 ms of their own
// audio kept on either side), 3 s of silence after the last.
func regap(c realset.Clip, gap int) realset.Clip {
	fl := realset.FrameLen
	margin := realset.Rate / 5
	gap -= gap % fl
	out := realset.Clip{Type: c.Type, Samples: make([]int16, realset.Lead), Speech: make([]bool, realset.Lead/fl)}
	for _, it := range c.Items {
		a, b := it.Start-margin, it.End+margin
		pos := len(out.Samples)
		it.Start, it.End = pos+margin, pos+margin+(it.End-it.Start)
		out.Items = append(out.Items, it)
		out.Samples = append(out.Samples, c.Samples[a:b]...)
		out.Speech = append(out.Speech, c.Speech[a/fl:b/fl]...)
		out.Samples = append(out.Samples, make([]int16, gap)...)
		out.Speech = append(out.Speech, make([]bool, gap/fl)...)
	}
	out.Samples = append(out.Samples, make([]int16, 3*realset.Rate)...)
	out.Speech = append(out.Speech, make([]bool, 3*realset.Rate/fl)...)
	return out
}
