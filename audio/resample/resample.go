// Package resample converts PCM between sample rates and channel layouts
// with a streaming polyphase FIR (Kaiser-windowed sinc, coefficients
// precomputed per rate pair). The conversions the voice pipeline needs are
// Discord's 48 kHz stereo to 16 kHz or 24 kHz mono (downmix, then an
// anti-aliased decimation) and 24 kHz mono to 48 kHz stereo (interpolation,
// then duplication).
//
// A Resampler keeps the filter history between calls, so a stream can be fed
// in frames of any size and the output is the same as for one long call.
// Process does not allocate. A Resampler is not safe for concurrent use.
package resample

import (
	"fmt"
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// chunk is the largest number of input samples per channel handled per
// inner pass; Process loops over longer inputs.
const chunk = 1024

// Resampler converts one stream from In to Out.
type Resampler struct {
	in, out pcm.Format
	l, m    int       // rational factor out/in = l/m
	k       int       // taps per phase
	coef    []float32 // l rows of k taps
	ch      int       // channels filtered: min(in, out)
	buf     [2][]float32
	avail   int // samples per channel in buf (k-1 history + new)
	t       int // next output position in the ×l domain, relative to buf[0]
}

// New returns a Resampler from in to out. Channel conversion is a mix to
// mono (average) before filtering or a duplication to stereo after it.
func New(in, out pcm.Format) (*Resampler, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("resample: input: %w", err)
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("resample: output: %w", err)
	}
	g := gcd(in.Rate, out.Rate)
	r := &Resampler{in: in, out: out, l: out.Rate / g, m: in.Rate / g, ch: min(in.Channels, out.Channels)}
	if r.l > 1000 {
		return nil, fmt.Errorf("resample: %d→%d Hz needs %d phases (max 1000)", in.Rate, out.Rate, r.l)
	}
	r.coef, r.k = design(in.Rate, out.Rate, r.l)
	for c := range r.ch {
		r.buf[c] = make([]float32, r.k-1+chunk)
	}
	r.Reset()
	return r, nil
}

// In returns the input format.
func (r *Resampler) In() pcm.Format { return r.in }

// Out returns the output format.
func (r *Resampler) Out() pcm.Format { return r.out }

// Taps returns the filter length per output sample (the per-phase taps).
func (r *Resampler) Taps() int { return r.k }

// Delay returns the filter's group delay (the output lags the input by it).
func (r *Resampler) Delay() time.Duration {
	n := r.k * r.l // prototype length at rate in·l
	return time.Duration(float64(n-1) / 2 / float64(r.in.Rate*r.l) * float64(time.Second))
}

// Reset clears the history, as for a new stream.
func (r *Resampler) Reset() {
	for c := range r.ch {
		clear(r.buf[c])
	}
	r.avail = r.k - 1
	r.t = (r.k - 1) * r.l
}

// MaxOut returns an upper bound of the int16 values Process writes for n
// input values; size dst with it.
func (r *Resampler) MaxOut(n int) int {
	frames := n / r.in.Channels
	return ((frames*r.l)/r.m + 2) * r.out.Channels
}

// Process converts src (interleaved In) into dst (interleaved Out) and
// returns the number of values written. Every input sample is consumed;
// dst must have MaxOut(len(src)) values, or Process fails before writing
// anything. A trailing partial input frame (odd value count for stereo) is
// an error.
func (r *Resampler) Process(dst, src []int16) (int, error) {
	if len(src)%r.in.Channels != 0 {
		return 0, fmt.Errorf("resample: process: %d values is not whole %d-channel frames", len(src), r.in.Channels)
	}
	if need := r.MaxOut(len(src)); len(dst) < need {
		return 0, fmt.Errorf("resample: process: dst holds %d values, need %d", len(dst), need)
	}
	w := 0
	for len(src) > 0 {
		n := min(len(src)/r.in.Channels, chunk)
		r.load(src[:n*r.in.Channels], n)
		src = src[n*r.in.Channels:]
		w += r.run(dst[w:])
	}
	return w, nil
}

// load appends n input frames to the filter buffers, mixing to mono when
// only one channel is filtered.
func (r *Resampler) load(src []int16, n int) {
	base := r.avail
	switch {
	case r.in.Channels == 1:
		b := r.buf[0][base : base+n]
		for i := range b {
			b[i] = float32(src[i])
		}
	case r.ch == 1: // stereo in, mono out
		b := r.buf[0][base : base+n]
		for i := range b {
			b[i] = 0.5 * (float32(src[2*i]) + float32(src[2*i+1]))
		}
	default: // stereo to stereo
		b0, b1 := r.buf[0][base:base+n], r.buf[1][base:base+n]
		for i := range b0 {
			b0[i] = float32(src[2*i])
			b1[i] = float32(src[2*i+1])
		}
	}
	r.avail += n
}

// run emits every output whose input window is complete, then drops the
// consumed input, keeping k-1 samples of history.
func (r *Resampler) run(dst []int16) int {
	k, l, m := r.k, r.l, r.m
	w := 0
	for {
		i := r.t / l
		if i >= r.avail {
			break
		}
		p := r.t - i*l
		h := r.coef[p*k : p*k+k]
		for c := range r.ch {
			v := pcm.Clamp16(dot(h, r.buf[c][i-k+1:i+1]))
			if r.out.Channels == 2 && r.ch == 1 {
				dst[w] = v
				dst[w+1] = v
				w += 2
			} else {
				dst[w] = v
				w++
			}
		}
		r.t += m
	}
	// Keep the last k-1 samples before the next output's first tap.
	drop := min(r.t/l-(k-1), r.avail)
	if drop > 0 {
		for c := range r.ch {
			copy(r.buf[c], r.buf[c][drop:r.avail])
		}
		r.avail -= drop
		r.t -= drop * l
	}
	return w
}

// dot returns Σ h[u]·x[u] over len(h) (x is at least as long). Four
// independent accumulators let the CPU overlap the multiply-adds.
func dot(h, x []float32) float32 {
	x = x[:len(h)]
	var a0, a1, a2, a3 float32
	u := 0
	for ; u+4 <= len(h); u += 4 {
		a0 += h[u] * x[u]
		a1 += h[u+1] * x[u+1]
		a2 += h[u+2] * x[u+2]
		a3 += h[u+3] * x[u+3]
	}
	for ; u < len(h); u++ {
		a0 += h[u] * x[u]
	}
	return (a0 + a1) + (a2 + a3)
}
