package realset

import (
	"math"
	"slices"
)

// Labelling rule (README.md "Truth labels"): on the clean recording, a 20 ms
// frame is speech when its energy is within LabelRangeDB of the recording's
// loudest frame and at least FloorMarginDB over the recording's own floor
// (its 10th-percentile frame), the latter never asking for more than
// MaxRangeDB under the loudest; non-speech runs of at most BridgeFrames
// between speech frames are speech too (stop closures and the short gaps
// inside and between words); a run of speech shorter than 40 ms with no
// other speech within 200 ms (a click or a breath) is not.
const (
	LabelRangeDB  = 38
	FloorMarginDB = 10
	MaxRangeDB    = 25
	BridgeFrames  = 6 // 120 ms
)

func frameEnergy(s []float32) float64 {
	var e float64
	for _, v := range s {
		e += float64(v) * float64(v)
	}
	return e / float64(len(s))
}

// energies returns the energy of each whole 20 ms frame of s.
func energies(s []float32) []float64 {
	out := make([]float64, len(s)/FrameLen)
	for f := range out {
		out[f] = frameEnergy(s[f*FrameLen : (f+1)*FrameLen])
	}
	return out
}

func db(e float64) float64 { return 10 * math.Log10(e+1e-20) }

// rawSpeech marks the frames over the labelling threshold, before bridging.
// It needs the recording's own pauses (10 % of frames or more) to see its
// floor.
func rawSpeech(s []float32) []bool {
	e := energies(s)
	if len(e) == 0 {
		return nil
	}
	sorted := slices.Clone(e)
	slices.Sort(sorted)
	floor := db(sorted[len(sorted)/10])
	peak := db(sorted[len(sorted)-1])
	thr := max(peak-LabelRangeDB, min(floor+FloorMarginDB, peak-MaxRangeDB))
	out := make([]bool, len(e))
	for f, v := range e {
		out[f] = db(v) >= thr
	}
	return out
}

// Label returns the truth label of each 20 ms frame of a clean recording
// (the rule above): the whole recording, with its own silences, before it
// is cut or trimmed.
func Label(s []float32) []bool { return bridge(rawSpeech(s)) }

// bridge applies the blip and gap rules to raw labels, in place.
func bridge(sp []bool) []bool {
	// drop isolated blips
	for _, r := range runs(sp, true) {
		if r[1]-r[0] >= 2 {
			continue
		}
		near := false
		for f := max(0, r[0]-10); f < min(len(sp), r[1]+10); f++ {
			if (f < r[0] || f >= r[1]) && sp[f] {
				near = true
				break
			}
		}
		if !near {
			for f := r[0]; f < r[1]; f++ {
				sp[f] = false
			}
		}
	}
	// bridge short gaps between speech frames
	for _, r := range runs(sp, false) {
		if r[0] > 0 && r[1] < len(sp) && r[1]-r[0] <= BridgeFrames {
			for f := r[0]; f < r[1]; f++ {
				sp[f] = true
			}
		}
	}
	return sp
}

// runs returns the [start, end) frame ranges where b[f] == v.
func runs(b []bool, v bool) [][2]int {
	var out [][2]int
	for f := 0; f < len(b); {
		if b[f] != v {
			f++
			continue
		}
		g := f
		for g < len(b) && b[g] == v {
			g++
		}
		out = append(out, [2]int{f, g})
		f = g
	}
	return out
}

// extent returns the first and one past the last speech frame.
func extent(lab []bool) (int, int) {
	a, b := -1, -1
	for f, v := range lab {
		if v {
			if a < 0 {
				a = f
			}
			b = f + 1
		}
	}
	return a, b
}

// MedianPitch estimates a recording's median fundamental frequency (Hz)
// over its voiced speech frames: YIN (cumulative mean normalized
// difference, threshold 0.2) on 40 ms windows, 60-400 Hz. 0 when no frame
// is voiced.
func MedianPitch(s []float32) float64 {
	lab := rawSpeech(s)
	const minLag, maxLag = Rate / 400, Rate / 60
	const win = 2 * FrameLen
	d := make([]float64, maxLag+2)
	var f0s []float64
	for f, sp := range lab {
		at := f * FrameLen
		if !sp || at+win+maxLag+1 > len(s) {
			continue
		}
		x := s[at : at+win+maxLag+1]
		for tau := 1; tau <= maxLag+1; tau++ {
			var sum float64
			for i := range win {
				v := float64(x[i] - x[i+tau])
				sum += v * v
			}
			d[tau] = sum
		}
		var run float64
		best := -1
		for tau := 1; tau <= maxLag; tau++ {
			run += d[tau]
			if run == 0 || tau < minLag {
				continue
			}
			c := d[tau] * float64(tau) / run
			if c < 0.2 {
				// walk down to the local minimum
				for tau+1 <= maxLag {
					run2 := run + d[tau+1]
					if d[tau+1]*float64(tau+1)/run2 >= c {
						break
					}
					tau++
					run = run2
					c = d[tau] * float64(tau) / run
				}
				best = tau
				break
			}
		}
		if best > 0 {
			f0s = append(f0s, float64(Rate)/float64(best))
		}
	}
	if len(f0s) == 0 {
		return 0
	}
	slices.Sort(f0s)
	return f0s[len(f0s)/2]
}
