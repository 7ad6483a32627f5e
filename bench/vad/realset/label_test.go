package realset

import (
	"github.com/banterbot/banter/audio/pcm"
	"math"
	"slices"
	"testing"
	"time"
)

// tones builds a signal of 20 ms frames: a 200 Hz tone at level dB (dBFS)
// for frames whose level is not NaN, and a faint floor (-80 dBFS noise-like
// alternation) elsewhere.
func tones(levels []float64) []float32 {
	s := make([]float32, len(levels)*FrameLen)
	for f, l := range levels {
		for i := range FrameLen {
			j := f*FrameLen + i
			if math.IsNaN(l) {
				s[j] = float32(1e-4 * float64(1-2*(j%2)))
				continue
			}
			s[j] = float32(math.Sqrt2 * math.Pow(10, l/20) * math.Sin(2*math.Pi*200*float64(j)/Rate))
		}
	}
	return s
}

func frames(spec string) []float64 {
	var out []float64
	for _, c := range spec {
		switch c {
		case 'S':
			out = append(out, -20) // loud speech
		case 's':
			out = append(out, -50) // quiet speech: 30 dB under
		case 'x':
			out = append(out, -65) // 45 dB under: not speech
		default:
			out = append(out, math.NaN())
		}
	}
	return out
}

func marks(b []bool) string {
	out := make([]byte, len(b))
	for i, v := range b {
		out[i] = '.'
		if v {
			out[i] = '#'
		}
	}
	return string(out)
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"speech and silence", "....SSSS....", "....####...."},
		{"quiet speech within the range", "..SSsssSS...", "..#######..."},
		{"45 dB under the peak is not speech", "..SSxxxxxxxxSS..", "..##........##.."},
		{"gap of 120 ms bridged", "..SS......SS..", "..##########.."},
		{"gap of 140 ms kept", "..SS.......SS..", "..##.......##.."},
		{"isolated 20 ms blip dropped", "SSSS..............S..........", "####........................."},
		{"blip near speech kept and bridged", "SSSS.....S.................", "##########................."},
		{"edges not bridged", "..SS..", "..##.."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := marks(Label(tones(frames(tc.in))))
			if got != tc.want {
				t.Errorf("Label(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestPausePoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want int // frame, -1: none
		gap  int // frames
	}{
		// 30 frames of speech, a 3-frame gap, 30 more: the gap's first
		// quietest frame
		{"a gap in the middle", "." + rep('S', 30) + "..." + rep('S', 30) + ".", 31, 3},
		{"the longest gap wins", "." + rep('S', 30) + ".." + rep('S', 30) + "...." + rep('S', 30) + ".", 63, 4},
		{"a gap too near the start", ".SSSSS..." + rep('S', 60) + ".", -1, 0},
		{"one-frame gaps do not count", "." + rep('S', 30) + "." + rep('S', 30) + ".", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, gap, ok := pausePoint(tones(frames(tc.in)))
			got := -1
			if ok {
				got = at / FrameLen
			}
			if got != tc.want || gap != time.Duration(tc.gap)*pcm.FrameDuration {
				t.Errorf("pause at frame %d, gap %v; want %d, %d frames", got, gap, tc.want, tc.gap)
			}
		})
	}
}

func rep(c byte, n int) string { return string(slices.Repeat([]byte{c}, n)) }

// TestMedianPitch on a buzz (a pulse train through a resonance) at known
// fundamentals.
func TestMedianPitch(t *testing.T) {
	for _, f0 := range []float64{85, 110, 180, 240} {
		s := make([]float32, Rate)
		period := Rate / f0
		var y1, y2 float64
		next := 0.0
		for i := range s {
			x := 0.0
			if float64(i) >= next {
				x = 1
				next += period
			}
			// a resonance at 700 Hz
			r, w := 0.97, 2*math.Pi*700/Rate
			y := x + 2*r*math.Cos(w)*y1 - r*r*y2
			y2, y1 = y1, y
			s[i] = float32(0.05 * y)
		}
		got := MedianPitch(s)
		if math.Abs(got-f0)/f0 > 0.03 {
			t.Errorf("f0 %.0f Hz: MedianPitch %.1f Hz", f0, got)
		}
	}
}

func TestPhrases(t *testing.T) {
	// three phrases: gaps of 300 ms and 400 ms cut, one of 200 ms does not
	in := "....." + rep('S', 20) + rep('.', 15) + rep('S', 10) + rep('.', 10) + rep('S', 10) + rep('.', 20) + rep('S', 20) + "....."
	got := phrases(rawSpeech(tones(frames(in))))
	if len(got) != 3 {
		t.Fatalf("%d phrases, want 3: %v", len(got), got)
	}
	for i, want := range []int{20 + 10, 10 + 10 + 10 + 10, 20 + 10} {
		if n := got[i][1] - got[i][0]; n != want {
			t.Errorf("phrase %d: %d frames, want %d (100 ms kept each side)", i, n, want)
		}
	}
}

func TestHum(t *testing.T) {
	for _, f0 := range []float64{50, 60} {
		a := hum(Rate, f0, newRand(1, "hum"))
		b := hum(Rate, f0, newRand(1, "hum"))
		if !slices.Equal(a, b) {
			t.Fatalf("%g Hz: same seed, different samples", f0)
		}
		// the fundamental dominates: correlation with a sine at f0 and
		// none at f0 × 1.5
		at := func(f float64) float64 {
			var re, im float64
			for i, v := range a {
				ph := 2 * math.Pi * f * float64(i) / Rate
				re += float64(v) * math.Cos(ph)
				im += float64(v) * math.Sin(ph)
			}
			return math.Hypot(re, im) / float64(len(a))
		}
		if h1, off := at(f0), at(1.5*f0); h1 < 0.4 || off > 0.05 {
			t.Errorf("%g Hz: amplitude at f0 %.3f (want ≈ 0.5), at 1.5 f0 %.3f (want ≈ 0)", f0, h1, off)
		}
		if h3 := at(3 * f0); h3 < 0.1 {
			t.Errorf("%g Hz: third harmonic %.3f, want ≈ 1/6", f0, h3)
		}
	}
}
