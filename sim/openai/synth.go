package openaisim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"time"
	"unicode"
)

// SpeechRate is the sample rate of all simulated speech (OpenAI's pcm
// format: s16le, 24 kHz, mono).
const SpeechRate = 24000

// PerCharDuration is how much audio one character of input text produces at
// speed 1 (about 15 characters per second, like natural speech).
const PerCharDuration = 65 * time.Millisecond

// SpeechDuration is the audio length Synthesize produces for text at speed.
func SpeechDuration(text string, speed float64) time.Duration {
	if speed <= 0 {
		speed = 1
	}
	n := len([]rune(text))
	d := time.Duration(float64(time.Duration(n)*PerCharDuration) / speed)
	return max(d, 200*time.Millisecond)
}

// Synthesize renders speech-like audio for text: s16le mono at SpeechRate,
// SpeechDuration(text, speed) long. Letters are voiced (a harmonic series on
// a gliding fundamental, shaped by per-syllable formants and modulated at a
// syllable rate of ~5 Hz with short noise bursts at syllable onsets),
// spaces and punctuation are pauses. The voice name picks the pitch. Output
// is deterministic for the same inputs. The returned slice is new.
func Synthesize(text, voice string, speed float64) []byte {
	if speed <= 0 {
		speed = 1
	}
	runes := []rune(text)
	total := int(SpeechDuration(text, speed).Seconds() * SpeechRate)
	perChar := float64(PerCharDuration.Seconds()*SpeechRate) / speed
	if len(runes) == 0 {
		runes = []rune{' '}
		perChar = float64(total)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(voice))
	vh := h.Sum64()
	base := 95 + float64(vh%140) // 95..235 Hz fundamental
	_, _ = h.Write([]byte(text))
	rng := h.Sum64() | 1

	// vowel formants (F1, F2 in Hz) cycled per syllable
	vowelFormants := [...][2]float64{{730, 1090}, {270, 2290}, {530, 1840}, {570, 840}, {300, 870}, {660, 1720}}
	out := make([]byte, total*2)
	var phase float64
	// Word spans: voiced runs of letters/digits.
	type span struct{ start, end int }
	var words []span
	inWord := false
	for i, r := range runes {
		voiced := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case voiced && !inWord:
			words = append(words, span{i, i + 1})
			inWord = true
		case voiced:
			words[len(words)-1].end = i + 1
		default:
			inWord = false
		}
	}
	const charsPerSyllable = 2.7   // ~5.7 syllables/s at 65 ms per character
	const block = SpeechRate / 200 // 5 ms: pitch, formants and envelope are per block
	const maxHarmonics = 10
	var amps [maxHarmonics + 1]float64
	syll := 0
	for wi, wsp := range words {
		s0 := int(float64(wsp.start) * perChar)
		s1 := min(int(float64(wsp.end)*perChar), total)
		n := s1 - s0
		if n <= 0 {
			continue
		}
		nsyl := max(1, int(math.Round(float64(wsp.end-wsp.start)/charsPerSyllable)))
		attack := min(float64(n)/4, 0.015*SpeechRate)
		for b0 := 0; b0 < n; b0 += block {
			b1 := min(b0+block, n)
			t := float64(s0+b0) / SpeechRate
			// pitch: glide within the word plus slow declination
			f0 := base * (1 + 0.12*math.Sin(2*math.Pi*(0.7*t+float64(wi)*0.37))) * (1 - 0.1*float64(s0+b0)/float64(total))
			dphase := 2 * math.Pi * f0 / SpeechRate
			sp := float64(b0) / float64(n) * float64(nsyl)
			si := int(sp)
			v := vowelFormants[(syll+si+wi)%len(vowelFormants)]
			nh := 0
			for k := 1; k <= maxHarmonics && float64(k)*f0 <= 4000; k++ {
				fk := float64(k) * f0
				amps[k] = (1 + 2.5*math.Exp(-sq((fk-v[0])/180)) + 1.5*math.Exp(-sq((fk-v[1])/260))) / float64(k)
				nh = k
			}
			// syllable envelope at both block edges (dips between
			// syllables, never to zero), interpolated inside the block
			fracA := sp - float64(si)
			fracB := float64(b1)/float64(n)*float64(nsyl) - float64(si)
			envA := 0.25 + 0.75*sq(math.Sin(math.Pi*fracA))
			envB := 0.25 + 0.75*sq(math.Sin(math.Pi*min(fracB, 1)))
			for i := b0; i < b1; i++ {
				phase += dphase
				if phase > 2*math.Pi {
					phase -= 2 * math.Pi
				}
				// harmonics by the Chebyshev recurrence
				// sin(kθ) = 2cosθ·sin((k−1)θ) − sin((k−2)θ)
				sin1, cos1 := math.Sincos(phase)
				prev, cur := 0.0, sin1
				x := amps[1] * sin1
				for k := 2; k <= nh; k++ {
					prev, cur = cur, 2*cos1*cur-prev
					x += amps[k] * cur
				}
				w := float64(i-b0) / float64(b1-b0)
				env := envA + (envB-envA)*w
				frac := fracA + (fracB-fracA)*w
				// consonant noise at syllable onset
				rng ^= rng << 13
				rng ^= rng >> 7
				rng ^= rng << 17
				noise := (float64(rng>>11)/float64(1<<53))*2 - 1
				if frac < 0.12 {
					x = 0.6*x*frac/0.12 + 0.8*noise*(1-frac/0.12)
				}
				// word attack/release
				edge := 1.0
				if fi := float64(i); fi < attack {
					edge = 0.5 - 0.5*math.Cos(math.Pi*fi/attack)
				} else if fr := float64(n - 1 - i); fr < attack {
					edge = 0.5 - 0.5*math.Cos(math.Pi*fr/attack)
				}
				y := 0.12 * x * env * edge
				sample := int16(max(-32767, min(32767, y*32767)))
				binary.LittleEndian.PutUint16(out[2*(s0+i):], uint16(sample))
			}
		}
		syll += nsyl
	}
	return out
}

func sq(x float64) float64 { return x * x }
