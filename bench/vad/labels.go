package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/bench/vad/realset"
)

// runLabels audits the split's truth labels against the network banter's detector runs (Silero
// VAD v5, the same weights as the baseline): per speaker, over the clean clip's items, how long
// the labelled speech runs on after the network's last speech frame (vad.Config.SpeechProb or
// more, plus two frames for its 32 ms window) and the share of labelled speech frames the network
// puts under its hold threshold (vad.Config.HoldProb). Where both are large, the labels count as speech what no
// detector hears as speech (a reverberation tail, a breath), and missed frames and pauses heard
// longer than labelled come from the labels as much as from the detector. It reads the clean
// audio straight (no Opus), and is no baseline: a check of the labels, not of the detector.
func runLabels(w io.Writer, o realOptions) error {
	set, err := speechSet(o)
	if err != nil {
		return err
	}
	def := vad.DefaultConfig()
	speechP, holdP := def.SpeechProb, def.HoldProb
	const lag = 2 // frames: the network's 32 ms window
	tails := map[string][]int{}
	var quiet, labelled = map[string]int{}, map[string]int{}
	for _, c := range set.Clips {
		if c.Type != "clean" {
			continue
		}
		det, err := vad.NewDetector(vad.DefaultConfig())
		if err != nil {
			return err
		}
		p := make([]float64, 0, len(c.Speech))
		for f := 0; (f+1)*realset.FrameLen <= len(c.Samples); f++ {
			p = append(p, det.Classify(c.Samples[f*realset.FrameLen:(f+1)*realset.FrameLen]).Prob)
		}
		for _, it := range c.Items {
			a, b := it.Start/realset.FrameLen, min(it.End/realset.FrameLen, len(p))
			last := a
			for f := a; f < b; f++ {
				if p[f] >= speechP {
					last = f
				}
			}
			tail := 0
			for f := last + 1 + lag; f < b; f++ {
				if c.Speech[f] {
					tail++
				}
			}
			tails[it.Speaker] = append(tails[it.Speaker], tail*20)
			for f := a; f < b; f++ {
				if c.Speech[f] {
					labelled[it.Speaker]++
					if p[f] < holdP {
						quiet[it.Speaker]++
					}
				}
			}
		}
	}
	fmt.Fprintf(w, "labels, split %s: labelled speech after the network's last speech frame (ms), and labelled speech the network puts under %.2f\n", set.Split, holdP)
	for _, sp := range set.Speakers {
		v := tails[sp.Name]
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		fmt.Fprintf(w, "  %-20s tail median %4d, max %4d ms   under the hold %5.1f %%\n", sp.Name, v[len(v)/2], v[len(v)-1],
			100*float64(quiet[sp.Name])/float64(max(1, labelled[sp.Name])))
	}
	return nil
}
