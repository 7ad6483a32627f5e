package voicesim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// Music is d of what a music bot plays, as 48 kHz interleaved stereo PCM for PlayPCM: an
// instrumental loop with rhythm (a bass and a kick on beats 1 and 3, a triad per bar, a melody
// of plucked eighth notes, a hi-hat on every eighth) at about -33 dBFS, deterministic for a
// seed. With vocals (48 kHz interleaved stereo, e.g. a recorded voice), the song has a singer:
// the vocals come in after one second of intro and again after every two seconds of
// instrumental, at their own level over the music (a recorded voice at a usual -20 dBFS sits
// some 10 dB above it, as a singer does in a mix), so that whoever hears the song hears a voice
// in it now and then, as in most songs.
func Music(d time.Duration, seed uint64, vocals []int16) []int16 {
	const rate = 48000
	n := int(d.Seconds() * rate)
	mono := make([]float64, n)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	eighth := rate * 30 / (100 + rng.IntN(30)) // 100-129 bpm
	hz := func(semi int) float64 { return 440 * math.Pow(2, float64(semi-69)/12) }
	tone := func(at, dur int, f, amp, decay float64, harmonics int) {
		for j := 0; j < dur && at+j < n; j++ {
			t := float64(j) / rate
			env := amp * math.Min(1, t/0.01) * math.Exp(-t/decay)
			if rel := rate / 100; j > dur-rel { // release, no click
				env *= float64(dur-j) / float64(rel)
			}
			for k := 1; k <= harmonics; k++ {
				mono[at+j] += env * math.Sin(2*math.Pi*f*float64(k)*t) / float64(k)
			}
		}
	}
	hit := func(at, dur int, amp float64, kick bool) {
		prev := 0.0
		for j := 0; j < dur && at+j < n; j++ {
			t := float64(j) / rate
			if kick {
				f := 50 + 80*math.Exp(-t/0.03)
				mono[at+j] += amp * math.Exp(-t/0.08) * math.Sin(2*math.Pi*f*t)
				continue
			}
			w := rng.NormFloat64()
			mono[at+j] += amp * math.Exp(-t/0.02) * (w - prev) // a crude high-passed noise burst
			prev = w
		}
	}
	scale := []int{0, 2, 4, 5, 7, 9, 11, 12}
	key := 57 + rng.IntN(7)
	for bar := 0; bar*8*eighth < n; bar++ {
		at := bar * 8 * eighth
		root := key - 12 + scale[rng.IntN(6)]
		for _, iv := range []int{0, 4, 7} {
			tone(at, 8*eighth, hz(root+iv), 0.1, 1.5, 4)
		}
		for b := range 2 {
			tone(at+b*4*eighth, 4*eighth, hz(root-12), 0.2, 0.6, 3)
			hit(at+b*4*eighth, rate/4, 0.4, true)
		}
		for e := range 8 {
			hit(at+e*eighth, rate/10, 0.06, false)
			if rng.IntN(6) > 0 { // else a rest
				tone(at+e*eighth, eighth, hz(key+scale[rng.IntN(len(scale))]), 0.25, 0.25, 6)
			}
		}
	}
	out := make([]int16, 2*n)
	for i, v := range mono {
		s := pcm.Clamp16(float32(v * 4000))
		out[2*i], out[2*i+1] = s, s
	}
	if len(vocals) >= 2 {
		for at := rate; at < n; at += len(vocals)/2 + 2*rate {
			for j := 0; j+1 < len(vocals) && 2*at+j+1 < len(out); j += 2 {
				out[2*at+j] = pcm.Clamp16(float32(out[2*at+j]) + float32(vocals[j]))
				out[2*at+j+1] = pcm.Clamp16(float32(out[2*at+j+1]) + float32(vocals[j+1]))
			}
		}
	}
	return out
}
