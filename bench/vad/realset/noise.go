package realset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
)

// hum is mains hum at f0 (50 or 60 Hz) with its harmonics to 3 kHz: odd
// harmonics at 1/k, even ones at 1/(2k) (a ground loop's buzz over a
// transformer's hum at 2·f0), random phases, the frequency drifting by
// ±0.05 % and the level by ±2 % over seconds.
func hum(n int, f0 float64, rng *rand.Rand) []float32 {
	// harmonic k is amp[k]·sin(k·ph + phase[k]) = Im(amp·e^{i·phase}·e^{i·k·ph}),
	// the powers of e^{i·ph} by complex multiplication
	var amp []complex128
	for k := 1; float64(k)*f0 <= 3000; k++ {
		a := 1 / float64(k)
		if k%2 == 0 {
			a /= 2
		}
		p := 2 * math.Pi * rng.Float64()
		amp = append(amp, complex(a*math.Cos(p), a*math.Sin(p)))
	}
	drift := 0.1 + 0.2*rng.Float64()
	s := make([]float32, n)
	var ph float64
	for i := range s {
		t := float64(i) / Rate
		ph += 2 * math.Pi * f0 * (1 + 0.0005*math.Sin(2*math.Pi*drift*t)) / Rate
		z := complex(math.Cos(ph), math.Sin(ph))
		w := z
		var v float64
		for _, a := range amp {
			v += imag(a * w)
			w *= z
		}
		s[i] = float32(v * (1 + 0.02*math.Sin(2*math.Pi*0.37*t)))
	}
	return s
}

// Scan codes (PC set 1) of the keys the typist uses besides the letters.
const (
	keySpace     = 0x39
	keyBackspace = 0x0e
	keyEnter     = 0x1c
	keyShift     = 0x2a
	keyPeriod    = 0x34
)

// keyboard sequences bucklespring's recordings of an IBM Model M (each
// key's press and release) at a human typing rhythm: words of 2-9 letters
// with a space after each, key intervals log-normal around 170 ms (about
// 60 words a minute), keys held 60-140 ms, now and then a capital (shift
// held), a burst of backspaces, and after each sentence of 4-14 words a
// period or Enter and a pause of 1-4 s (sometimes 5-10 s: reading).
func keyboard(dir string, n int, rng *rand.Rand) ([]float32, []string, error) {
	type key struct{ press, release []float32 }
	letterKeys := []int{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
		0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32}
	keys := map[int]key{}
	get := func(code int) (key, error) {
		if k, ok := keys[code]; ok {
			return k, nil
		}
		var k key
		for i, dst := range []*[]float32{&k.press, &k.release} {
			r, err := load(dir, filepath.Join(Keyboard, fmt.Sprintf("%02x-%d.wav", code, i)))
			if err != nil {
				return k, fmt.Errorf("realset: keyboard: %w", err)
			}
			*dst = r.Samples
		}
		keys[code] = k
		return k, nil
	}
	s := make([]float32, n)
	add := func(at int, x []float32, g float32) {
		for i, v := range x {
			if at+i >= 0 && at+i < n {
				s[at+i] += g * v
			}
		}
	}
	ms := func(v float64) int { return int(v * Rate / 1000) }
	strike := func(at, code int, hold float64) error {
		k, err := get(code)
		if err != nil {
			return err
		}
		g := float32(math.Pow(10, (rng.Float64()*6-3)/20))
		add(at, k.press, g)
		add(at+ms(hold), k.release, g)
		return nil
	}
	interval := func() float64 { return math.Max(60, 170*math.Exp(0.35*rng.NormFloat64())) }
	hold := func() float64 { return 60 + 80*rng.Float64() }
	pos := ms(200 + 800*rng.Float64())
	for pos < n {
		words := 4 + rng.IntN(11)
		for w := 0; w < words && pos < n; w++ {
			letters := 2 + rng.IntN(8)
			capital := w == 0 || rng.IntN(20) == 0
			for l := 0; l < letters; l++ {
				if capital && l == 0 {
					if err := strike(pos, keyShift, 250); err != nil {
						return nil, nil, err
					}
					pos += ms(90)
				}
				if err := strike(pos, letterKeys[rng.IntN(len(letterKeys))], hold()); err != nil {
					return nil, nil, err
				}
				pos += ms(interval())
			}
			if rng.IntN(12) == 0 { // a typo: back up
				for range 1 + rng.IntN(4) {
					if err := strike(pos, keyBackspace, hold()); err != nil {
						return nil, nil, err
					}
					pos += ms(110 + 60*rng.Float64())
				}
				pos += ms(200 + 300*rng.Float64())
			}
			if err := strike(pos, keySpace, hold()+20); err != nil {
				return nil, nil, err
			}
			pos += ms(interval())
		}
		end := keyPeriod
		if rng.IntN(3) == 0 {
			end = keyEnter
		}
		if err := strike(pos, end, hold()); err != nil {
			return nil, nil, err
		}
		pause := 1000 + 3000*rng.Float64()
		if rng.IntN(5) == 0 {
			pause = 5000 + 5000*rng.Float64()
		}
		pos += ms(pause)
	}
	return s, []string{"bucklespring-data (IBM Model M)"}, nil
}

// babble overlaps six talkers. Each talker says one recording after
// another, each drawn from a random pool speaker (so every speaker of the
// pool talks), with 100-800 ms between them; every recording is at the
// same active level (they were scaled to SpeechLevelDB), every talker
// starts at a random point of its first recording.
func babble(pool [][][]float32, n int, rng *rand.Rand) []float32 {
	s := make([]float32, n)
	for range 6 {
		pos := 0
		first := true
		for pos < n {
			sp := pool[rng.IntN(len(pool))]
			rec := sp[rng.IntN(len(sp))]
			if first {
				rec = rec[rng.IntN(len(rec)):]
				first = false
			}
			for i, v := range rec {
				if pos+i >= n {
					break
				}
				s[pos+i] += v
			}
			pos += len(rec) + Rate*(100+rng.IntN(700))/1000
		}
	}
	return s
}

// music cuts n samples from tracks: an equal part of each, from a random
// point of the track (skipping its first and last 5 s where it can, looping
// a track shorter than its part), every part at the same RMS, joined with
// 1 s crossfades.
func (b *builder) music(tracks []Track, n int, rng *rand.Rand) ([]float32, []string, error) {
	const fade = Rate
	out := make([]float32, n)
	part := (n + (len(tracks)-1)*fade) / len(tracks)
	var src []string
	pos := 0
	for k, t := range tracks {
		s := b.tracks[t.File] // loaded by loadTracks
		lo, hi := 0, len(s)
		if len(s)-part > 10*Rate {
			lo, hi = 5*Rate, len(s)-5*Rate-part
		} else if len(s) > part {
			hi = len(s) - part
		}
		off := lo
		if hi > lo {
			off = lo + rng.IntN(hi-lo)
		}
		x := make([]float32, part)
		for i := range x {
			x[i] = s[(off+i)%len(s)]
		}
		scaleRMS(x, -20)
		for i, v := range x {
			j := pos + i
			if j >= n {
				break
			}
			g := float32(1)
			if k > 0 && i < fade {
				g = float32(i) / fade
			}
			if k < len(tracks)-1 && i >= part-fade {
				g = float32(part-i) / fade
			}
			out[j] += g * v
		}
		src = append(src, fmt.Sprintf("%s@%.0fs", t.Name, float64(off)/Rate))
		pos += part - fade
	}
	return out, src, nil
}
