// Package testaudio loads the speech fixtures in audio/testdata for tests
// of the audio packages.
package testaudio

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
)

// Dir returns the absolute path of audio/testdata.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Load decodes audio/testdata/name and fails the test on error.
func Load(tb testing.TB, name string) ([]int16, pcm.Format) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		tb.Fatal(err)
	}
	s, f, err := wav.Decode(nil, b)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return s, f
}

// Speech16k loads audio/testdata/speech/name, a 16 kHz mono fixture.
func Speech16k(tb testing.TB, name string) []int16 {
	tb.Helper()
	s, f := Load(tb, filepath.Join("speech", name))
	if f != pcm.Speech16k() {
		tb.Fatalf("%s: format %v, want 16 kHz mono", name, f)
	}
	return s
}

// Voiced loads audio/testdata/speech/name, a 16 kHz mono fixture, cut to its sound: the
// frames under -55 dBFS at either end dropped.
func Voiced(tb testing.TB, name string) []int16 {
	tb.Helper()
	s := Speech16k(tb, name)
	const frame = 320
	quiet := func(i int) bool { return pcm.EnergyDB(s[i:min(i+frame, len(s))]) < -55 }
	a, b := 0, len(s)
	for a+frame < b && quiet(a) {
		a += frame
	}
	for b-frame > a && quiet(b-frame) {
		b -= frame
	}
	return s[a:b]
}
