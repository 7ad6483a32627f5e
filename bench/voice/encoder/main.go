// Command encoder chooses the bot's Opus encoder settings by measurement:
// for each application, complexity and bitrate it encodes the ten speech
// fixtures the way a reply is sent (16 kHz espeak items resampled to the
// 24 kHz TTS format, then to 48 kHz stereo as audio.Talker does), decodes
// them as a member's client does (48 kHz stereo), and reports the encode
// CPU per 20 ms frame with objective quality figures against the 48 kHz
// input: log-spectral distance (LSD, dB, lower is better; 20 ms frames,
// 50 Hz–12 kHz, frames within 40 dB of the item's loudest) and segmental SNR
// (dB, the same frames, clamped to −10…35 dB). Run from the repository root:
//
//	go run ./bench/voice/encoder [-passes 3]
//
// The figures are not a perceptual score (no PESQ or ViSQOL here): LSD
// follows spectral damage (band limiting, noise filling, coarse
// quantization), segmental SNR the waveform, which SILK does not preserve.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"time"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/wav"
)

var names = []string{
	"hey-banter-weather.wav", "banter-joke.wav", "hey-banner-weather.wav", "pass-the-banner.wav",
	"mike-hear-me.wav", "uh-huh.wav", "thats-just-banter.wav", "long-story.wav",
	"banter-stop.wav", "two-questions.wav",
}

type setting struct {
	app        opus.Application
	complexity int
	bitrate    int
}

func (s setting) String() string {
	a := map[opus.Application]string{opus.ApplicationAudio: "audio", opus.ApplicationVoIP: "voip", opus.ApplicationLowDelay: "lowdelay"}[s.app]
	return fmt.Sprintf("%-8s c%-2d %3d kb/s", a, s.complexity, s.bitrate/1000)
}

func main() {
	dir := flag.String("speech", "audio/testdata/speech", "directory of the 16 kHz speech items")
	passes := flag.Int("passes", 3, "encode passes per setting (CPU: the fastest counts)")
	flag.Parse()
	items, err := load(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var settings []setting
	for _, app := range []opus.Application{opus.ApplicationAudio, opus.ApplicationVoIP} {
		for _, c := range []int{1, 3, 5, 7, 10} {
			for _, br := range []int{32000, 48000, 64000, 96000} {
				settings = append(settings, setting{app, c, br})
			}
		}
	}
	settings = append(settings, setting{opus.ApplicationLowDelay, 5, 64000}, setting{opus.ApplicationLowDelay, 10, 64000})
	fmt.Println("setting                 | encode µs/frame | LSD dB | segSNR dB")
	for _, s := range settings {
		r, err := measure(s, items, *passes)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s | %15.1f | %6.2f | %9.1f\n", s, r.usPerFrame, r.lsd, r.segSNR)
	}
}

// load reads the items and turns each into the 48 kHz stereo a Talker
// encodes (16 kHz → 24 kHz TTS format → 48 kHz stereo).
func load(dir string) ([][]int16, error) {
	var out [][]int16
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		s, f, err := wav.Decode(nil, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		s24, err := convert(s, f, pcm.Mono24k())
		if err != nil {
			return nil, err
		}
		s48, err := convert(s24, pcm.Mono24k(), pcm.Discord())
		if err != nil {
			return nil, err
		}
		// whole frames, plus 60 ms of silence so the codec delay flushes
		s48 = append(s48[:len(s48)-len(s48)%opus.FrameLen], make([]int16, 3*opus.FrameLen)...)
		out = append(out, s48)
	}
	return out, nil
}

func convert(s []int16, from, to pcm.Format) ([]int16, error) {
	r, err := resample.New(from, to)
	if err != nil {
		return nil, err
	}
	out := make([]int16, r.MaxOut(len(s)))
	n, err := r.Process(out, s)
	return out[:n], err
}

type result struct {
	usPerFrame, lsd, segSNR float64
}

func measure(s setting, items [][]int16, passes int) (result, error) {
	var best time.Duration
	var frames int
	var lsds, snrs []float64
	for p := range passes {
		var spent time.Duration
		frames = 0
		for _, it := range items {
			enc, err := opus.NewEncoder(opus.EncoderConfig{Application: s.app, Complexity: s.complexity, Bitrate: s.bitrate})
			if err != nil {
				return result{}, err
			}
			dec, err := opus.NewDecoder()
			if err != nil {
				return result{}, err
			}
			pkt := make([]byte, opus.MaxPacketSize)
			out := make([]int16, 0, len(it))
			frame := make([]int16, opus.FrameLen)
			for off := 0; off+opus.FrameLen <= len(it); off += opus.FrameLen {
				t0 := time.Now()
				n, err := enc.Encode(it[off:off+opus.FrameLen], pkt)
				spent += time.Since(t0)
				if err != nil {
					return result{}, err
				}
				m, err := dec.Decode(pkt[:n], frame)
				if err != nil {
					return result{}, err
				}
				out = append(out, frame[:m*opus.Channels]...)
				frames++
			}
			if p == 0 {
				l, snr := quality(mono(it), mono(out))
				lsds = append(lsds, l)
				snrs = append(snrs, snr)
			}
		}
		if p == 0 || spent < best {
			best = spent
		}
	}
	return result{usPerFrame: float64(best.Microseconds()) / float64(frames), lsd: mean(lsds), segSNR: mean(snrs)}, nil
}

func mono(s []int16) []float64 {
	out := make([]float64, len(s)/2)
	for i := range out {
		out[i] = (float64(s[2*i]) + float64(s[2*i+1])) / 2 / 32768
	}
	return out
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

const (
	win  = 960  // 20 ms at 48 kHz
	nfft = 1024 // zero-padded
)

// quality aligns dec to ref (the codec's delay, found by cross-correlation
// within 20 ms) and returns the mean LSD and segmental SNR over the frames
// within 40 dB of ref's loudest.
func quality(ref, dec []float64) (lsd, segSNR float64) {
	d := delay(ref, dec)
	dec = dec[d:]
	n := min(len(ref), len(dec)) / win
	energies := make([]float64, n)
	var peak float64
	for i := range n {
		energies[i] = energy(ref[i*win : (i+1)*win])
		peak = max(peak, energies[i])
	}
	lo, hi := 50*nfft/48000, 12000*nfft/48000
	hann := make([]float64, win)
	for i := range hann {
		hann[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(win-1))
	}
	var lsdSum, snrSum float64
	var used int
	for i := range n {
		if energies[i] < peak*1e-4 {
			continue
		}
		r, x := ref[i*win:(i+1)*win], dec[i*win:(i+1)*win]
		var noise float64
		for j := range r {
			e := r[j] - x[j]
			noise += e * e
		}
		snr := 10 * math.Log10(energies[i]*win/max(noise, 1e-12))
		snrSum += min(35, max(-10, snr))
		pr, px := spectrum(r, hann), spectrum(x, hann)
		var s float64
		for k := lo; k < hi; k++ {
			diff := 10 * math.Log10((pr[k]+1e-10)/(px[k]+1e-10))
			s += diff * diff
		}
		lsdSum += math.Sqrt(s / float64(hi-lo))
		used++
	}
	return lsdSum / float64(used), snrSum / float64(used)
}

func energy(s []float64) float64 {
	var e float64
	for _, v := range s {
		e += v * v
	}
	return e / float64(len(s))
}

func delay(ref, dec []float64) int {
	best, at := math.Inf(-1), 0
	n := min(len(ref), len(dec)) - win
	for d := range win {
		var c float64
		for i := 0; i < n-d; i += 4 {
			c += ref[i] * dec[i+d]
		}
		if c > best {
			best, at = c, d
		}
	}
	return at
}

// spectrum is the power spectrum of s windowed by w, zero-padded to nfft.
func spectrum(s, w []float64) []float64 {
	x := make([]complex128, nfft)
	for i := range s {
		x[i] = complex(s[i]*w[i], 0)
	}
	fft(x)
	p := make([]float64, nfft/2)
	for k := range p {
		a := cmplx.Abs(x[k])
		p[k] = a * a
	}
	return p
}

// fft is an in-place iterative radix-2 FFT (len(x) a power of two).
func fft(x []complex128) {
	n := len(x)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		w := cmplx.Exp(complex(0, -2*math.Pi/float64(size)))
		for start := 0; start < n; start += size {
			wk := complex(1, 0)
			for k := range size / 2 {
				a, b := x[start+k], x[start+k+size/2]*wk
				x[start+k], x[start+k+size/2] = a+b, a-b
				wk *= w
			}
		}
	}
}
