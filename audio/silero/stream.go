package silero

import "math"

// Stream is the model's state for one audio source: the LSTM's hidden and cell state, the
// context carried from the previous chunk and the samples of the chunk being filled.
// Write and ProcessChunk do not allocate. A Stream belongs to one goroutine.
type Stream struct {
	m    *Model
	h, c [hidden]float32
	// x is the model's input: the previous chunk's last contextN samples, the chunk, and
	// contextN samples of reflection padding.
	x    [contextN + ChunkSamples + contextN]float32
	n    int // samples of the chunk so far, in x[contextN:]
	prob float32
	runs uint64
	// silentRuns counts the chunks of digital silence, which skip the encoder.
	silentRuns uint64

	// scratch, reused every chunk
	spec  [bins * (frames + 2)]float32 // magnitudes [bin][time], a zero column each side
	e0    [128 * (frames + 2)]float32
	e1    [64 * (2 + 2)]float32
	e2    [64 * (1 + 2)]float32
	e3    [128 * (1 + 2)]float32
	col   [frames * ((bins*3 + 7) &^ 7)]float32 // the output steps' inputs, each zero past in·3
	acc   [frames * 128]float32
	xh    [2 * hidden]float32
	gates [4 * hidden]float32
	fft   [fftN]complex64
}

// NewStream returns a fresh state (silence before the first sample).
func (m *Model) NewStream() *Stream { return &Stream{m: m} }

// Reset forgets everything heard: the state of a new stream.
func (s *Stream) Reset() {
	m := s.m
	*s = Stream{m: m}
}

// Prob returns the speech probability of the last chunk run (0 before the first).
func (s *Stream) Prob() float32 { return s.prob }

// Chunks returns how many chunks the stream has run.
func (s *Stream) Chunks() uint64 { return s.runs }

// SilentChunks returns how many of the chunks run were digital silence (the chunk and its
// context all zeros), for which only the LSTM ran.
func (s *Stream) SilentChunks() uint64 { return s.silentRuns }

// Pending returns how many samples of the next chunk are buffered.
func (s *Stream) Pending() int { return s.n }

// Write feeds 16 kHz mono samples. Every time ChunkSamples have gathered the model runs on
// them; Write returns how many chunks ran (Prob is the last one's probability).
func (s *Stream) Write(p []int16) int {
	ran := 0
	for len(p) > 0 {
		k := min(len(p), ChunkSamples-s.n)
		dst := s.x[contextN+s.n : contextN+s.n+k]
		for i, v := range p[:k] {
			dst[i] = float32(v) / 32768
		}
		s.n += k
		p = p[k:]
		if s.n == ChunkSamples {
			s.run()
			ran++
		}
	}
	return ran
}

// ProcessChunk runs the model on one chunk of ChunkSamples samples scaled to [-1, 1], as
// the reference implementation takes them, and returns its speech probability. Samples
// buffered by Write are dropped.
func (s *Stream) ProcessChunk(chunk []float32) float32 {
	if len(chunk) != ChunkSamples {
		panic("silero: ProcessChunk needs exactly ChunkSamples samples")
	}
	copy(s.x[contextN:], chunk)
	s.n = ChunkSamples
	s.run()
	return s.prob
}

// run computes one step of the network on x and keeps the context for the next. On digital
// silence (the chunk and its context all zeros: what a Listener feeds while a member sends
// nothing) the encoder and the LSTM's input half are the model's precomputed ones and only the
// recurrent half runs: the same result to float32 rounding for about a third of the CPU
// (BenchmarkChunk silence against speech).
func (s *Stream) run() {
	m := s.m
	in := s.x[:contextN+ChunkSamples]
	if allZero(in) {
		gemv(m.lstmHH, s.h[:], s.gates[:])
		for r := range s.gates {
			s.gates[r] += m.silentGates[r]
		}
		s.silentRuns++
	} else {
		s.encode()
		f := s.features()
		copy(s.xh[:hidden], f[:])
		copy(s.xh[hidden:], s.h[:])
		gemv(m.lstm, s.xh[:], s.gates[:])
		for r := range s.gates {
			s.gates[r] += m.lstmB[r]
		}
	}
	var out float32 = m.decB
	for k := range hidden {
		i := sigmoid(s.gates[k])
		f := sigmoid(s.gates[hidden+k])
		g := tanh(s.gates[2*hidden+k])
		o := sigmoid(s.gates[3*hidden+k])
		c := f*s.c[k] + i*g
		h := o * tanh(c)
		s.c[k], s.h[k] = c, h
		out += m.decW[k] * max(h, 0)
	}
	s.prob = sigmoid(out)
	s.runs++
	copy(s.x[:contextN], in[len(in)-contextN:])
	s.n = 0
}

// encode runs the STFT and the encoder on x (into e3).
func (s *Stream) encode() {
	m := s.m
	in := s.x[:contextN+ChunkSamples]
	// Reflection padding on the right (numpy/ONNX "reflect": the edge is not repeated).
	for i := range contextN {
		s.x[contextN+ChunkSamples+i] = in[len(in)-2-i]
	}
	s.stft()
	t := m.enc[0].apply(s.spec[:], frames, s.e0[:], s.col[:], s.acc[:])
	t = m.enc[1].apply(s.e0[:], t, s.e1[:], s.col[:], s.acc[:])
	t = m.enc[2].apply(s.e1[:], t, s.e2[:], s.col[:], s.acc[:])
	m.enc[3].apply(s.e2[:], t, s.e3[:], s.col[:], s.acc[:])
}

// features returns the encoder's one output step, the LSTM's input.
func (s *Stream) features() [hidden]float32 {
	var f [hidden]float32
	for k := range hidden {
		f[k] = s.e3[k*3+1]
	}
	return f
}

// allZero reports whether every sample of x is zero.
func allZero(x []float32) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// stft fills spec with the magnitudes of the four Hann-windowed 256-point frames of x. Two real
// frames share one complex FFT (a in the real part, b in the imaginary part): with Z = FFT(a+ib),
// A[k] = (Z[k] + conj Z[N-k])/2 and B[k] = (Z[k] - conj Z[N-k])/2i.
func (s *Stream) stft() {
	m := s.m
	const w = frames + 2
	for t := 0; t < frames; t += 2 {
		a, b := s.x[t*hop:t*hop+fftN], s.x[(t+1)*hop:(t+1)*hop+fftN]
		for i := range fftN {
			s.fft[bitrev8(uint8(i))] = complex(a[i]*m.window[i], b[i]*m.window[i])
		}
		fft256(s.fft[:], &m.twiddle)
		for k := range bins {
			z, zc := s.fft[k], s.fft[(fftN-k)%fftN]
			// |A| = |Z[k] + conj Z[N-k]| / 2, |B| = |Z[k] - conj Z[N-k]| / 2
			ar, ai := real(z)+real(zc), imag(z)-imag(zc)
			br, bi := real(z)-real(zc), imag(z)+imag(zc)
			s.spec[k*w+1+t] = 0.5 * float32(math.Sqrt(float64(ar*ar+ai*ai)))
			s.spec[k*w+2+t] = 0.5 * float32(math.Sqrt(float64(br*br+bi*bi)))
		}
	}
	for k := range bins {
		s.spec[k*w], s.spec[k*w+w-1] = 0, 0
	}
}

// apply runs the layer over in ([l.in][inT+2], zero columns at both ends) into out
// ([l.out][outT+2], likewise) and returns outT. col and acc are scratch: the inputs of every
// output step side by side (im2col), and the products.
func (l *conv) apply(in []float32, inT int, out []float32, col, acc []float32) int {
	outT := (inT+2-3)/l.stride + 1
	iw, ow := inT+2, outT+2
	for t := range outT {
		at := t * l.stride
		c := col[t*l.cols : (t+1)*l.cols]
		for k := range l.in {
			src := in[k*iw+at : k*iw+at+3]
			dst := c[k*3 : k*3+3]
			dst[0], dst[1], dst[2] = src[0], src[1], src[2]
		}
		clear(c[l.in*3:])
	}
	if outT == 4 {
		gemm4(l.w, col[:4*l.cols], acc[:4*l.out])
	} else {
		for t := range outT {
			gemv(l.w, col[t*l.cols:(t+1)*l.cols], acc[t*l.out:(t+1)*l.out])
		}
	}
	for t := range outT {
		for c, v := range acc[t*l.out : (t+1)*l.out] {
			out[c*ow+1+t] = max(v+l.b[c], 0)
		}
	}
	for c := range l.out {
		out[c*ow], out[c*ow+ow-1] = 0, 0
	}
	return outT
}

func sigmoid(x float32) float32 { return 1 / (1 + expf(-x)) }

func tanh(x float32) float32 {
	x = max(-20, min(20, x))
	return 1 - 2/(1+expf(2*x))
}

// expf is e^x in float32, to a relative error of about 2e-7 for |x| ≤ 87: x = n·ln2 + r with
// |r| ≤ ln2/2, e^r by its Taylor polynomial of degree 7, times 2^n.
func expf(x float32) float32 {
	x = max(-87, min(87, x))
	n := float32(int32(x*1.442695041+128.5) - 128) // round to nearest: the argument is > 0
	r := x - n*0.693359375 + n*2.12194440e-4       // ln 2 in two parts
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
