// Package noisyset builds the noisy speech evaluation set of bench/vad
// deterministically from the espeak-ng fixtures in audio/testdata/speech and
// synthetic noises: white, pink, brown, fan (motor hum plus broadband air),
// music (melody, chords, bass and a soft beat), keyboard clicks and babble
// (six overlapped talkers). Everything is 16 kHz mono; the same seed gives
// the same samples on every machine (math/rand/v2 PCG, no floating-point
// reductions whose order varies).
package noisyset

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Rate is the sample rate of every clip.
const Rate = 16000

// Kinds lists the noises in table order.
var Kinds = []string{"white", "pink", "brown", "fan", "music", "keyboard", "babble"}

// Noise returns n samples of the named noise at unit RMS. babble needs the
// speech items it overlaps.
func Noise(kind string, n int, rng *rand.Rand, speech [][]float32) ([]float32, error) {
	var s []float32
	switch kind {
	case "white":
		s = white(n, rng)
	case "pink":
		s = pink(n, rng)
	case "brown":
		s = brown(n, rng)
	case "fan":
		s = fan(n, rng)
	case "music":
		s = music(n, rng)
	case "keyboard":
		s = keyboard(n, rng)
	case "babble":
		if len(speech) == 0 {
			return nil, fmt.Errorf("noisyset: babble needs speech items")
		}
		s = babble(n, rng, speech)
	default:
		return nil, fmt.Errorf("noisyset: unknown noise %q (want one of %v)", kind, Kinds)
	}
	normalize(s)
	return s, nil
}

func white(n int, rng *rand.Rand) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// pink is Voss-McCartney: the sum of 16 random rows, row k redrawn every
// 2^k samples, plus a white row: about -3 dB per octave.
func pink(n int, rng *rand.Rand) []float32 {
	const rows = 16
	var r [rows]float64
	var sum float64
	for k := range r {
		r[k] = rng.NormFloat64()
		sum += r[k]
	}
	s := make([]float32, n)
	for i := range s {
		// the row to redraw is the number of trailing zeros of the counter
		c := i + 1
		k := 0
		for c&1 == 0 && k < rows-1 {
			c >>= 1
			k++
		}
		sum -= r[k]
		r[k] = rng.NormFloat64()
		sum += r[k]
		s[i] = float32(sum + rng.NormFloat64())
	}
	return s
}

// brown is leaky integrated white noise (-6 dB per octave above ~10 Hz).
func brown(n int, rng *rand.Rand) []float32 {
	s := make([]float32, n)
	var y float64
	for i := range s {
		y = 0.996*y + rng.NormFloat64()
		s[i] = float32(y)
	}
	removeDC(s)
	return s
}

// fan is a motor: a hum at a drifting fundamental near 100-130 Hz with
// harmonics, slowly beating, plus low-passed broadband air noise 3 dB over it.
func fan(n int, rng *rand.Rand) []float32 {
	f0 := 100 + 30*rng.Float64()
	air := pink(n, rng)
	lowpass(air, 0.35)
	normalize(air)
	s := make([]float32, n)
	var ph float64
	for i := range s {
		t := float64(i) / Rate
		f := f0 * (1 + 0.002*math.Sin(2*math.Pi*0.3*t))
		ph += 2 * math.Pi * f / Rate
		h := math.Sin(ph) + 0.5*math.Sin(2*ph+0.3) + 0.25*math.Sin(3*ph+1.1) + 0.12*math.Sin(4*ph+2.0)
		h *= 1 + 0.1*math.Sin(2*math.Pi*1.7*t)
		s[i] = float32(0.5*h) + 1.4*air[i]
	}
	return s
}

// keyboard is typing: key presses 80-400 ms apart (bursts and pauses),
// each a 1-3 ms broadband click decaying in ~4 ms with a resonance, and a
// quieter release 60-120 ms later, over a faint room hiss.
func keyboard(n int, rng *rand.Rand) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(0.003 * rng.NormFloat64())
	}
	click := func(at int, amp float64) {
		res := 2000 + 3000*rng.Float64()
		decay := 0.003 + 0.003*rng.Float64()
		for j := 0; j < Rate/40 && at+j < n; j++ {
			t := float64(j) / Rate
			e := amp * math.Exp(-t/decay)
			v := e * (0.6*rng.NormFloat64() + math.Sin(2*math.Pi*res*t))
			s[at+j] += float32(v)
		}
	}
	pos := rng.IntN(Rate / 4)
	for pos < n {
		amp := 0.5 + 0.5*rng.Float64()
		click(pos, amp)
		click(pos+Rate*(60+rng.IntN(60))/1000, 0.4*amp)
		gap := 80 + rng.IntN(150)
		if rng.IntN(12) == 0 { // a pause to think
			gap += 500 + rng.IntN(1500)
		}
		pos += Rate * gap / 1000
	}
	return s
}

func normalize(s []float32) {
	var e float64
	for _, v := range s {
		e += float64(v) * float64(v)
	}
	if e == 0 {
		return
	}
	g := float32(1 / math.Sqrt(e/float64(len(s))))
	for i := range s {
		s[i] *= g
	}
}

func removeDC(s []float32) {
	var m float64
	for _, v := range s {
		m += float64(v)
	}
	m /= float64(max(1, len(s)))
	// and a gentle high-pass so nothing drifts below 20 Hz
	var prevIn, prevOut float64
	for i, v := range s {
		x := float64(v) - m
		y := 0.992*prevOut + x - prevIn
		prevIn, prevOut = x, y
		s[i] = float32(y)
	}
}

// lowpass is a one-pole low-pass with coefficient a (smaller: lower cutoff).
func lowpass(s []float32, a float32) {
	var y float32
	for i, v := range s {
		y += a * (v - y)
		s[i] = y
	}
}
