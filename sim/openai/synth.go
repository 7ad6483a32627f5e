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
	_, _ = h.Write([]byte(text))
	sy := &synth{
		out: make([]byte, total*2), total: total,
		base: 95 + float64(vh%140), // 95..235 Hz fundamental
		rng:  h.Sum64() | 1,
	}
	for wi, wsp := range wordSpans(runes) {
		s0 := int(float64(wsp.start) * perChar)
		s1 := min(int(float64(wsp.end)*perChar), total)
		if s1 > s0 {
			sy.word(wi, wsp.end-wsp.start, s0, s1-s0)
		}
	}
	return sy.out
}

// span is a word: a run of letters or digits, by rune index.
type span struct{ start, end int }

// wordSpans finds the voiced runs of text.
func wordSpans(runes []rune) []span {
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
	return words
}

// vowelFormants are the (F1, F2) formants in Hz cycled per syllable.
var vowelFormants = [...][2]float64{{730, 1090}, {270, 2290}, {530, 1840}, {570, 840}, {300, 870}, {660, 1720}}

const (
	charsPerSyllable = 2.7              // ~5.7 syllables/s at 65 ms per character
	synthBlock       = SpeechRate / 200 // 5 ms: pitch, formants and envelope are per block
	maxHarmonics     = 10
)

// synth is the state of one Synthesize call: the output, the voice, and
// what carries from word to word (oscillator phase, noise, syllables).
type synth struct {
	out   []byte
	total int
	base  float64
	rng   uint64
	phase float64
	syll  int
	amps  [maxHarmonics + 1]float64
}

// word renders word wi (chars characters long) into samples [s0, s0+n).
func (sy *synth) word(wi, chars, s0, n int) {
	nsyl := max(1, int(math.Round(float64(chars)/charsPerSyllable)))
	attack := min(float64(n)/4, 0.015*SpeechRate)
	for b0 := 0; b0 < n; b0 += synthBlock {
		b1 := min(b0+synthBlock, n)
		t := float64(s0+b0) / SpeechRate
		// pitch: glide within the word plus slow declination
		f0 := sy.base * (1 + 0.12*math.Sin(2*math.Pi*(0.7*t+float64(wi)*0.37))) * (1 - 0.1*float64(s0+b0)/float64(sy.total))
		sp := float64(b0) / float64(n) * float64(nsyl)
		si := int(sp)
		v := vowelFormants[(sy.syll+si+wi)%len(vowelFormants)]
		nh := 0
		for k := 1; k <= maxHarmonics && float64(k)*f0 <= 4000; k++ {
			fk := float64(k) * f0
			sy.amps[k] = (1 + 2.5*math.Exp(-sq((fk-v[0])/180)) + 1.5*math.Exp(-sq((fk-v[1])/260))) / float64(k)
			nh = k
		}
		// syllable envelope at both block edges (dips between syllables,
		// never to zero), interpolated inside the block
		fracA := sp - float64(si)
		fracB := float64(b1)/float64(n)*float64(nsyl) - float64(si)
		envA := 0.25 + 0.75*sq(math.Sin(math.Pi*fracA))
		envB := 0.25 + 0.75*sq(math.Sin(math.Pi*min(fracB, 1)))
		sy.block(s0, n, b0, b1, 2*math.Pi*f0/SpeechRate, nh, attack, [2]float64{fracA, fracB}, [2]float64{envA, envB})
	}
	sy.syll += nsyl
}

// block renders samples [b0, b1) of a word starting at sample s0 (n long):
// harmonics nh at phase step dphase, the envelope and syllable fraction
// interpolated across the block, onset noise, the word's attack/release.
func (sy *synth) block(s0, n, b0, b1 int, dphase float64, nh int, attack float64, frac, env [2]float64) {
	for i := b0; i < b1; i++ {
		sy.phase += dphase
		if sy.phase > 2*math.Pi {
			sy.phase -= 2 * math.Pi
		}
		// harmonics by the Chebyshev recurrence
		// sin(kθ) = 2cosθ·sin((k−1)θ) − sin((k−2)θ)
		sin1, cos1 := math.Sincos(sy.phase)
		prev, cur := 0.0, sin1
		x := sy.amps[1] * sin1
		for k := 2; k <= nh; k++ {
			prev, cur = cur, 2*cos1*cur-prev
			x += sy.amps[k] * cur
		}
		w := float64(i-b0) / float64(b1-b0)
		e := env[0] + (env[1]-env[0])*w
		f := frac[0] + (frac[1]-frac[0])*w
		// consonant noise at syllable onset
		sy.rng ^= sy.rng << 13
		sy.rng ^= sy.rng >> 7
		sy.rng ^= sy.rng << 17
		noise := (float64(sy.rng>>11)/float64(1<<53))*2 - 1
		if f < 0.12 {
			x = 0.6*x*f/0.12 + 0.8*noise*(1-f/0.12)
		}
		// word attack/release
		edge := 1.0
		if fi := float64(i); fi < attack {
			edge = 0.5 - 0.5*math.Cos(math.Pi*fi/attack)
		} else if fr := float64(n - 1 - i); fr < attack {
			edge = 0.5 - 0.5*math.Cos(math.Pi*fr/attack)
		}
		y := 0.12 * x * e * edge
		sample := int16(max(-32767, min(32767, y*32767)))
		binary.LittleEndian.PutUint16(sy.out[2*(s0+i):], uint16(sample))
	}
}

func sq(x float64) float64 { return x * x }
