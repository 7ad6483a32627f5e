// Package speechscore scores decoded speech against the signal that was
// encoded, with two objective figures: log-spectral distance (LSD, dB, lower
// is better; 20 ms frames, 50 Hz–12 kHz, frames within 40 dB of the
// reference's loudest) and segmental SNR (dB, the same frames, each clamped
// to −10…35 dB). The decoded signal is aligned to the reference first (the
// codec's delay, found by cross-correlation within 20 ms).
//
// The figures are not a perceptual score (no PESQ or ViSQOL here): LSD
// follows spectral damage (band limiting, noise filling, coarse
// quantization), segmental SNR the waveform, which SILK does not preserve.
// bench/voice/encoder chooses the reply encoder with them, and the voice
// tests bound what a change of the send path may do to a reply.
package speechscore

import (
	"math"
	"math/cmplx"
)

// Rate is the sample rate Score works at: Discord's, what a member's
// client decodes to.
const Rate = 48000

const (
	win  = Rate / 50 // 20 ms
	nfft = 1024      // zero-padded
)

// Mono returns interleaved 48 kHz stereo s as mono samples in [-1, 1).
func Mono(s []int16) []float64 {
	out := make([]float64, len(s)/2)
	for i := range out {
		out[i] = (float64(s[2*i]) + float64(s[2*i+1])) / 2 / 32768
	}
	return out
}

// Score aligns dec to ref (both mono at Rate, e.g. from Mono) and returns
// the mean LSD and segmental SNR over the frames within 40 dB of ref's
// loudest. Both are NaN when no frame qualifies.
func Score(ref, dec []float64) (lsd, segSNR float64) {
	d := delay(ref, dec)
	dec = dec[d:]
	n := min(len(ref), len(dec)) / win
	energies := make([]float64, n)
	var peak float64
	for i := range n {
		energies[i] = energy(ref[i*win : (i+1)*win])
		peak = max(peak, energies[i])
	}
	lo, hi := 50*nfft/Rate, 12000*nfft/Rate
	hann := make([]float64, win)
	for i := range hann {
		hann[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(win-1))
	}
	var lsdSum, snrSum float64
	var used int
	for i := range n {
		if energies[i] == 0 || energies[i] < peak*1e-4 {
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

// delay returns the lag of dec behind ref (0..win-1 samples) with the
// largest cross-correlation.
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
