package noisyset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
)

// SpeechLevelDB is the active speech level every item is scaled to (RMS of
// its speech frames, dBFS); noise levels follow from the SNR.
const SpeechLevelDB = -26

// FrameLen is one 20 ms frame at Rate.
const FrameLen = Rate / 50

// Span is one speech item in a clip, in samples.
type Span struct {
	Name       string
	Start, End int // the item's speech (first to last speech frame)
}

// Clip is one stream of the set.
type Clip struct {
	Noise string  // "clean" or a Kind
	SNR   float64 // dB; the noise level is SpeechLevelDB-SNR
	Items []Span  // none for a noise-only clip
	// Speech marks the 20 ms frames holding speech (clean signal above
	// SpeechLevelDB-35 dB).
	Speech  []bool
	Samples []int16
}

// LoadSpeech reads the 16 kHz mono WAVs named in dir/INDEX.tsv order.
func LoadSpeech(dir string, names []string) ([][]float32, error) {
	out := make([][]float32, 0, len(names))
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("noisyset: %w", err)
		}
		s, f, err := wav.Decode(nil, b)
		if err != nil {
			return nil, fmt.Errorf("noisyset: %s: %w", name, err)
		}
		if f != pcm.Speech16k() {
			return nil, fmt.Errorf("noisyset: %s: format %v, want 16 kHz mono", name, f)
		}
		x := make([]float32, len(s))
		for i, v := range s {
			x[i] = float32(v) / 32768
		}
		scaleToActive(x, SpeechLevelDB)
		out = append(out, x)
	}
	return out, nil
}

// scaleToActive scales s so that its frames within 35 dB of the loudest
// have an RMS of db dBFS.
func scaleToActive(s []float32, db float64) {
	var e, n float64
	thr := frameThreshold(s)
	for i := 0; i+FrameLen <= len(s); i += FrameLen {
		fe := frameEnergy(s[i : i+FrameLen])
		if fe >= thr {
			e += fe
			n++
		}
	}
	if n == 0 {
		return
	}
	g := float32(math.Pow(10, db/20) / math.Sqrt(e/n))
	for i := range s {
		s[i] *= g
	}
}

func frameEnergy(s []float32) float64 {
	var e float64
	for _, v := range s {
		e += float64(v) * float64(v)
	}
	return e / float64(len(s))
}

func frameThreshold(s []float32) float64 {
	var peak float64
	for i := 0; i+FrameLen <= len(s); i += FrameLen {
		peak = max(peak, frameEnergy(s[i:i+FrameLen]))
	}
	return peak * math.Pow(10, -35.0/10)
}

// Lead and Gap are the noise before the first item and after each one.
const (
	Lead = 3 * Rate
	Gap  = 5 * Rate / 2
)

// SpeechClip lays the items out one after another (Lead, then each item
// followed by Gap) over continuous noise of kind at snr dB ("clean": none).
func SpeechClip(kind string, snr float64, names []string, items [][]float32, seed uint64) (Clip, error) {
	n := Lead
	for _, it := range items {
		n += len(it) + Gap
	}
	n -= n % FrameLen
	clean := make([]float32, n)
	c := Clip{Noise: kind, SNR: snr, Speech: make([]bool, n/FrameLen)}
	pos := Lead - Lead%FrameLen
	for i, it := range items {
		copy(clean[pos:], it)
		sp := Span{Name: names[i], Start: -1}
		thr := math.Pow(10, (SpeechLevelDB-35)/10.0)
		for f := pos / FrameLen; f < (pos+len(it))/FrameLen; f++ {
			if frameEnergy(clean[f*FrameLen:(f+1)*FrameLen]) >= thr {
				c.Speech[f] = true
				if sp.Start < 0 {
					sp.Start = f * FrameLen
				}
				sp.End = (f + 1) * FrameLen
			}
		}
		c.Items = append(c.Items, sp)
		pos += len(it) + Gap
		pos -= pos % FrameLen
	}
	mix := clean
	if kind != "clean" {
		noise, err := Noise(kind, n, rand.New(rand.NewPCG(seed, hash(kind))), items)
		if err != nil {
			return Clip{}, err
		}
		g := float32(math.Pow(10, (SpeechLevelDB-snr)/20))
		for i := range mix {
			mix[i] += g * noise[i]
		}
	}
	c.Samples = toInt16(mix)
	return c, nil
}

// NoiseClip is seconds of noise of kind alone at the level it has in
// SpeechClip at snr (a different stretch of it: another seed).
func NoiseClip(kind string, snr float64, seconds int, items [][]float32, seed uint64) (Clip, error) {
	n := seconds * Rate
	noise, err := Noise(kind, n, rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, hash(kind))), items)
	if err != nil {
		return Clip{}, err
	}
	g := float32(math.Pow(10, (SpeechLevelDB-snr)/20))
	for i := range noise {
		noise[i] *= g
	}
	return Clip{Noise: kind, SNR: snr, Speech: make([]bool, n/FrameLen), Samples: toInt16(noise)}, nil
}

func toInt16(s []float32) []int16 {
	out := make([]int16, len(s))
	for i, v := range s {
		out[i] = pcm.Clamp16(v * 32768)
	}
	return out
}

func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
