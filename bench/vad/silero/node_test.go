package silero

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
)

// repo returns the repository root.
func repo(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func start(t *testing.T) *Model {
	t.Helper()
	interop := filepath.Join(repo(t), "interop")
	if err := Available(interop); err != nil {
		t.Skip(err)
	}
	// not t.Context(): it ends before Cleanup closes the model
	m, err := Start(context.Background(), interop)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// TestNodeBaseline runs Silero in node on known input: digital silence
// gives low probabilities, speech high ones; the clip's state is reset
// between clips (the same clip twice gives the same probabilities), and a
// partial last chunk is padded.
func TestNodeBaseline(t *testing.T) {
	m := start(t)

	silence := make([]int16, 3*Rate)
	p, err := m.Probs(silence)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 3*Rate/ChunkLen+1 {
		t.Fatalf("%d probabilities for 3 s, want %d", len(p), 3*Rate/ChunkLen+1)
	}
	if mx := slices.Max(p); mx > 0.1 {
		t.Errorf("silence: highest probability %.3f, want under 0.1", mx)
	}

	// an espeak-ng item of the synthetic set (always in the repository)
	b, err := os.ReadFile(filepath.Join(repo(t), "audio", "testdata", "speech", "long-story.wav"))
	if err != nil {
		t.Fatal(err)
	}
	speech, f, err := wav.Decode(nil, b)
	if err != nil || f != pcm.Speech16k() {
		t.Fatalf("long-story.wav: %v %v", f, err)
	}
	p1, err := m.Probs(speech)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := m.Probs(speech)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p1, p2) {
		t.Error("the same clip twice: different probabilities (state not reset per clip)")
	}
	var high int
	for _, v := range p1 {
		if v >= 0.5 {
			high++
		}
	}
	// long-story is about 3 s of speech in 3.5 s
	if float64(high) < 0.5*float64(len(p1)) {
		t.Errorf("speech: %d of %d chunks at 0.5 or more, want at least half", high, len(p1))
	}
	segs := Segments(p1, len(speech), DefaultParams())
	var kept int
	for _, s := range segs {
		if s.Kept {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("speech: %d utterances, want 1: %+v", kept, segs)
	}
}

// TestNodeRealSpeech: a real recording (codec2's hts1, a man reading two
// Harvard sentences, 8 kHz) when make vad-data has installed it.
func TestNodeRealSpeech(t *testing.T) {
	dir := os.Getenv("VADDATA")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "banter", "vaddata")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "root", "usr", "share", "codec2", "raw", "hts1.raw"))
	if err != nil {
		if os.Getenv("BANTER_REQUIRE_VADDATA") == "1" {
			t.Fatal(err)
		}
		t.Skipf("no vad data (make vad-data): %v", err)
	}
	m := start(t)
	// 8 kHz to 16 kHz by sample doubling is enough for the model here
	s8 := make([]int16, len(raw)/2)
	pcm.FromBytes(s8, raw)
	s16 := make([]int16, 0, 2*len(s8))
	for _, v := range s8 {
		s16 = append(s16, v, v)
	}
	p, err := m.Probs(s16)
	if err != nil {
		t.Fatal(err)
	}
	if mx := slices.Max(p); mx < 0.9 {
		t.Errorf("real speech: highest probability %.3f, want over 0.9", mx)
	}
}
