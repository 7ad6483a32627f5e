package resample

import (
	"math"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
)

// tone returns n frames of a sine at freq Hz and amplitude amp in format f.
func tone(f pcm.Format, freq, amp float64, n int) []int16 {
	s := make([]int16, n*f.Channels)
	for i := range n {
		v := int16(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(f.Rate)))
		for c := range f.Channels {
			s[i*f.Channels+c] = v
		}
	}
	return s
}

// levelDB returns the RMS level (dBFS) of channel 0 of s, skipping the
// first skip frames (filter warm-up).
func levelDB(s []int16, channels, skip int) float64 {
	mono := make([]int16, 0, len(s)/channels)
	for i := skip * channels; i < len(s); i += channels {
		mono = append(mono, s[i])
	}
	return pcm.EnergyDB(mono)
}

func run(t *testing.T, r *Resampler, src []int16) []int16 {
	t.Helper()
	dst := make([]int16, r.MaxOut(len(src)))
	n, err := r.Process(dst, src)
	if err != nil {
		t.Fatal(err)
	}
	return dst[:n]
}

func TestFrequencyResponse(t *testing.T) {
	const amp = 10000
	ref := 20 * math.Log10(amp/math.Sqrt2/32768)
	tests := []struct {
		name    string
		in, out pcm.Format
		freq    float64
		// wantDB is the level relative to the input tone: ~0 in the
		// passband, at most wantDB in the stopband.
		pass   bool
		wantDB float64
	}{
		{"48k stereo to 16k mono, 1 kHz passes", pcm.Discord(), pcm.Speech16k(), 1000, true, 0},
		{"48k stereo to 16k mono, 6 kHz passes", pcm.Discord(), pcm.Speech16k(), 6000, true, 0},
		{"48k stereo to 16k mono, 12 kHz is not aliased", pcm.Discord(), pcm.Speech16k(), 12000, false, -70},
		{"48k stereo to 16k mono, 20 kHz is not aliased", pcm.Discord(), pcm.Speech16k(), 20000, false, -70},
		{"48k stereo to 24k mono, 3 kHz passes", pcm.Discord(), pcm.Mono24k(), 3000, true, 0},
		{"48k stereo to 24k mono, 18 kHz is not aliased", pcm.Discord(), pcm.Mono24k(), 18000, false, -70},
		{"24k mono to 48k stereo, 1 kHz passes", pcm.Mono24k(), pcm.Discord(), 1000, true, 0},
		{"24k mono to 48k stereo, 9 kHz passes", pcm.Mono24k(), pcm.Discord(), 9000, true, 0},
		{"16k mono to 48k stereo, 2 kHz passes", pcm.Speech16k(), pcm.Discord(), 2000, true, 0},
		{"44.1k mono to 48k stereo, 5 kHz passes", pcm.Format{Rate: 44100, Channels: 1}, pcm.Discord(), 5000, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.in, tt.out)
			if err != nil {
				t.Fatal(err)
			}
			out := run(t, r, tone(tt.in, tt.freq, amp, tt.in.Rate/2))
			got := levelDB(out, tt.out.Channels, tt.out.Rate/20) - ref
			if tt.pass && math.Abs(got) > 0.2 {
				t.Errorf("passband level %.2f dB, want 0 ± 0.2", got)
			}
			if !tt.pass && got > tt.wantDB {
				t.Errorf("stopband level %.1f dB, want ≤ %.0f", got, tt.wantDB)
			}
		})
	}
}

// TestUpsampleImages checks that interpolation removes the spectral image
// (a 1 kHz tone at 24 kHz has an image at 23 kHz once zero-stuffed): the
// output must match an ideal 48 kHz tone closely.
func TestUpsampleImages(t *testing.T) {
	r, err := New(pcm.Mono24k(), pcm.Format{Rate: 48000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, r, tone(pcm.Mono24k(), 1000, 10000, 24000))
	// Align the ideal tone with the filter's group delay.
	d := float64(r.Delay()) / 1e9
	want := make([]int16, len(out))
	for i := range want {
		want[i] = int16(10000 * math.Sin(2*math.Pi*1000*(float64(i)/48000-d)))
	}
	skip := 2400
	if snr := pcm.SNR(want[skip:], out[skip:]); snr < 60 {
		t.Errorf("SNR against ideal 48 kHz tone %.1f dB, want ≥ 60", snr)
	}
}

// TestStreamingMatchesOneShot feeds the same signal in one call and in
// 20 ms frames (and odd sizes); the outputs must be identical.
func TestStreamingMatchesOneShot(t *testing.T) {
	pairs := []struct{ in, out pcm.Format }{
		{pcm.Discord(), pcm.Speech16k()},
		{pcm.Discord(), pcm.Mono24k()},
		{pcm.Mono24k(), pcm.Discord()},
		{pcm.Format{Rate: 44100, Channels: 2}, pcm.Discord()},
	}
	for _, p := range pairs {
		t.Run(p.in.String()+"→"+p.out.String(), func(t *testing.T) {
			src := tone(p.in, 440, 8000, p.in.Rate)
			for i := range src { // add some broadband content
				src[i] += int16((i*7919)%2001 - 1000)
			}
			a, _ := New(p.in, p.out)
			whole := run(t, a, src)
			for _, step := range []int{p.in.FrameLen(), 7 * p.in.Channels, 3001 * p.in.Channels} {
				b, _ := New(p.in, p.out)
				var parts []int16
				for off := 0; off < len(src); off += step {
					parts = append(parts, run(t, b, src[off:min(off+step, len(src))])...)
				}
				if len(parts) != len(whole) {
					t.Fatalf("step %d: %d values, one shot %d", step, len(parts), len(whole))
				}
				for i := range parts {
					if parts[i] != whole[i] {
						t.Fatalf("step %d: value %d differs: %d vs %d", step, i, parts[i], whole[i])
					}
				}
			}
			// Total output length is the exact rate ratio (±1 frame).
			wantFrames := len(src) / p.in.Channels * p.out.Rate / p.in.Rate
			if got := len(whole) / p.out.Channels; got < wantFrames-1 || got > wantFrames+1 {
				t.Errorf("%d output frames, want %d", got, wantFrames)
			}
		})
	}
}

func TestFrameSizes(t *testing.T) {
	tests := []struct {
		in, out pcm.Format
		want    int
	}{
		{pcm.Discord(), pcm.Speech16k(), 320},
		{pcm.Discord(), pcm.Mono24k(), 480},
		{pcm.Mono24k(), pcm.Discord(), 1920},
	}
	for _, tt := range tests {
		r, _ := New(tt.in, tt.out)
		src := make([]int16, tt.in.FrameLen())
		dst := make([]int16, r.MaxOut(len(src)))
		for f := range 5 {
			n, err := r.Process(dst, src)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("%v→%v frame %d: %d values, want %d", tt.in, tt.out, f, n, tt.want)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := New(pcm.Format{Rate: 48000, Channels: 3}, pcm.Speech16k()); err == nil {
		t.Error("3 channels accepted")
	}
	if _, err := New(pcm.Discord(), pcm.Format{Rate: 100}); err == nil {
		t.Error("100 Hz accepted")
	}
	r, _ := New(pcm.Discord(), pcm.Speech16k())
	if _, err := r.Process(make([]int16, 1000), make([]int16, 3)); err == nil {
		t.Error("half a stereo frame accepted")
	}
	if _, err := r.Process(make([]int16, 10), make([]int16, 1920)); err == nil {
		t.Error("short dst accepted")
	}
}

func TestProcessDoesNotAllocate(t *testing.T) {
	for _, p := range []struct{ in, out pcm.Format }{
		{pcm.Discord(), pcm.Speech16k()}, {pcm.Discord(), pcm.Mono24k()}, {pcm.Mono24k(), pcm.Discord()},
	} {
		r, _ := New(p.in, p.out)
		src := tone(p.in, 440, 8000, p.in.Samples(pcm.FrameDuration))
		dst := make([]int16, r.MaxOut(len(src)))
		if n := testing.AllocsPerRun(1000, func() { _, _ = r.Process(dst, src) }); n != 0 {
			t.Errorf("%v→%v: %v allocs per frame, want 0", p.in, p.out, n)
		}
	}
}

// TestRatePairs converts between every pair of common rates and channel
// counts: a 400 Hz tone keeps its level and the output length follows the
// rate ratio.
func TestRatePairs(t *testing.T) {
	rates := []int{8000, 16000, 22050, 24000, 44100, 48000}
	for _, in := range rates {
		for _, out := range rates {
			for _, ch := range [][2]int{{1, 1}, {2, 1}, {1, 2}, {2, 2}} {
				fi, fo := pcm.Format{Rate: in, Channels: ch[0]}, pcm.Format{Rate: out, Channels: ch[1]}
				r, err := New(fi, fo)
				if err != nil {
					t.Fatalf("%v→%v: %v", fi, fo, err)
				}
				got := run(t, r, tone(fi, 400, 10000, in/4))
				want := in / 4 * out / in
				if n := len(got) / fo.Channels; n < want-2 || n > want+2 {
					t.Errorf("%v→%v: %d frames, want %d", fi, fo, n, want)
				}
				ref := 20 * math.Log10(10000/math.Sqrt2/32768)
				if lvl := levelDB(got, fo.Channels, out/20) - ref; math.Abs(lvl) > 0.3 {
					t.Errorf("%v→%v: level %+.2f dB", fi, fo, lvl)
				}
			}
		}
	}
}
