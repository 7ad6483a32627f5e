package vad

// pitchTracker measures how periodic a frame is with a pitch between 60 and
// 400 Hz (a voice), by YIN's cumulative mean normalized difference on the
// signal decimated to about 8 kHz. Everything is preallocated: 0 allocs.
type pitchTracker struct {
	q      int       // decimation factor (rate/8000, at least 1)
	rate   int       // decimated sample rate
	w      int       // decimated samples per frame
	hist   []float32 // the previous frame and this one, decimated
	d      []float32 // difference function by lag
	minLag int
	maxLag int
}

func newPitchTracker(rate int) *pitchTracker {
	q := max(1, rate/8000)
	dr := rate / q
	w := dr / 50
	p := &pitchTracker{q: q, rate: dr, w: w, hist: make([]float32, 2*w), minLag: dr / 400, maxLag: min(w-1, dr/60)}
	p.d = make([]float32, p.maxLag+2)
	return p
}

func (p *pitchTracker) reset() { clear(p.hist) }

// skip takes a frame without measuring it (history only).
func (p *pitchTracker) skip(frame []int16) {
	p.decimate(frame)
}

// decimate shifts the history and appends frame decimated, without its mean.
func (p *pitchTracker) decimate(frame []int16) {
	w := p.w
	copy(p.hist, p.hist[w:])
	cur := p.hist[w:]
	q := p.q
	var mean float32
	for i := range w {
		var s int32
		for _, v := range frame[i*q : i*q+q] {
			s += int32(v)
		}
		cur[i] = float32(s)
		mean += cur[i]
	}
	mean /= float32(w)
	for i := range cur {
		cur[i] -= mean
	}
}

// measure takes one frame and returns the aperiodicity (the CMND minimum in
// the pitch range: near 0 for a clean periodic sound, near 1 for noise) and
// the period in decimated samples at that minimum (interpolated).
func (p *pitchTracker) measure(frame []int16) (aper, period float32) {
	p.decimate(frame)
	w := p.w
	// d(τ) = Σ (x[i] - x[i-τ])² over the current frame, lags into the
	// previous one.
	h := p.hist
	var cum float32
	best, bestLag := float32(2), 0
	for lag := 1; lag <= p.maxLag+1; lag++ {
		var s0, s1 float32
		a := h[w : 2*w]
		b := h[w-lag : 2*w-lag]
		i := 0
		for ; i+1 < len(a); i += 2 {
			x0 := a[i] - b[i]
			x1 := a[i+1] - b[i+1]
			s0 += x0 * x0
			s1 += x1 * x1
		}
		for ; i < len(a); i++ {
			x := a[i] - b[i]
			s0 += x * x
		}
		s := s0 + s1
		cum += s
		if cum > 0 {
			p.d[lag] = s * float32(lag) / cum
		} else {
			p.d[lag] = 1
		}
	}
	// the first dip within 0.1 of the deepest: avoids octave-down errors
	for lag := p.minLag; lag <= p.maxLag; lag++ {
		best = min(best, p.d[lag])
	}
	for lag := p.minLag; lag <= p.maxLag; lag++ {
		if p.d[lag] <= best+0.1 && p.d[lag] <= p.d[lag-1] && p.d[lag] <= p.d[lag+1] {
			bestLag = lag
			break
		}
	}
	if bestLag == 0 {
		return best, 0
	}
	// parabolic interpolation of the dip
	a, b, c := p.d[bestLag-1], p.d[bestLag], p.d[bestLag+1]
	off := float32(0)
	if den := a - 2*b + c; den > 0 {
		off = 0.5 * (a - c) / den
	}
	return p.d[bestLag], float32(bestLag) + off
}
