package noisyset

import (
	"math"
	"math/rand/v2"
)

// music is an instrumental loop with rhythm: a melody of eighth notes
// (plucked or sustained harmonic tones), a triad per bar, a bass on beats 1
// and 3, a kick and a hi-hat. No vibrato and no singing: see docs/audio.md.
func music(n int, rng *rand.Rand) []float32 {
	s := make([]float32, n)
	bpm := 96 + 40*rng.Float64()
	eighth := int(Rate * 30 / bpm)
	scale := []int{0, 2, 4, 5, 7, 9, 11, 12}
	key := 57 + rng.IntN(7) // A3..D#4
	hz := func(semi int) float64 { return 440 * math.Pow(2, float64(semi-69)/12) }
	tone := func(at, dur int, f, amp, decay float64, harm int) {
		for j := 0; j < dur && at+j < n; j++ {
			t := float64(j) / Rate
			env := amp * math.Min(1, t/0.01) * math.Exp(-t/decay)
			if j > dur-Rate/100 { // release
				env *= float64(dur-j) / (Rate / 100)
			}
			var v float64
			for k := 1; k <= harm; k++ {
				v += math.Sin(2*math.Pi*f*float64(k)*t) / float64(k)
			}
			s[at+j] += float32(env * v)
		}
	}
	hit := func(at, dur int, amp float64, kick bool) {
		var y float64
		for j := 0; j < dur && at+j < n; j++ {
			t := float64(j) / Rate
			if kick {
				f := 50 + 80*math.Exp(-t/0.03)
				s[at+j] += float32(amp * math.Exp(-t/0.08) * math.Sin(2*math.Pi*f*t))
				continue
			}
			w := rng.NormFloat64()
			v := w - y // crude high-pass
			y = w
			s[at+j] += float32(amp * math.Exp(-t/0.02) * v)
		}
	}
	plucked := true
	for bar := 0; bar*8*eighth < n; bar++ {
		at := bar * 8 * eighth
		if bar%4 == 0 {
			plucked = rng.IntN(2) == 0
		}
		root := key - 12 + scale[rng.IntN(6)]
		for _, iv := range []int{0, 4, 7} {
			tone(at, 8*eighth, hz(root+iv), 0.12, 1.5, 4)
		}
		for b := 0; b < 2; b++ {
			tone(at+b*4*eighth, 4*eighth, hz(root-12), 0.25, 0.6, 3)
			hit(at+b*4*eighth, Rate/4, 0.5, true)
		}
		for e := 0; e < 8; e++ {
			hit(at+e*eighth, Rate/10, 0.08, false)
			if rng.IntN(6) == 0 {
				continue // a rest
			}
			note := key + scale[rng.IntN(len(scale))]
			d, decay := eighth, 0.25
			if !plucked {
				decay = 2
			}
			if e%2 == 0 && rng.IntN(3) == 0 { // a quarter note
				d = 2 * eighth
				e++
			}
			tone(at+e*eighth, d, hz(note), 0.3, decay, 6)
		}
	}
	return s
}

// babble is six talkers, each saying random items one after another at a
// random rate (0.8-1.25: pitch and tempo change together) and gain, with
// short pauses, summed.
func babble(n int, rng *rand.Rand, speech [][]float32) []float32 {
	s := make([]float32, n)
	for range 6 {
		pos := rng.IntN(Rate)
		for pos < n {
			item := speech[rng.IntN(len(speech))]
			r := 0.8 + 0.45*rng.Float64()
			g := 0.5 + 0.5*rng.Float64()
			for j := 0; pos+j < n; j++ {
				x := float64(j) * r
				k := int(x)
				if k+1 >= len(item) {
					pos += j
					break
				}
				f := float32(x - float64(k))
				s[pos+j] += float32(g) * (item[k]*(1-f) + item[k+1]*f)
			}
			pos += rng.IntN(Rate * 2 / 5)
		}
	}
	return s
}
