package resample

import (
	"testing"

	"github.com/banterbot/banter/audio/pcm"
)

// BenchmarkProcessFrame measures one 20 ms frame per iteration for each
// conversion the voice pipeline uses. BenchmarkCopyFrame is the same-run
// baseline: a plain downmix of the 48 kHz stereo frame, the cheapest
// possible per-frame pass over the data.
func BenchmarkProcessFrame(b *testing.B) {
	for _, p := range []struct {
		name    string
		in, out pcm.Format
	}{
		{"48k2-16k1", pcm.Discord(), pcm.Speech16k()},
		{"48k2-24k1", pcm.Discord(), pcm.Mono24k()},
		{"24k1-48k2", pcm.Mono24k(), pcm.Discord()},
	} {
		b.Run(p.name, func(b *testing.B) {
			r, _ := New(p.in, p.out)
			src := tone(p.in, 440, 8000, p.in.Samples(pcm.FrameDuration))
			dst := make([]int16, r.MaxOut(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = r.Process(dst, src)
			}
		})
	}
}

func BenchmarkCopyFrame(b *testing.B) {
	src := tone(pcm.Discord(), 440, 8000, 960)
	dst := make([]int16, 960)
	b.ReportAllocs()
	for b.Loop() {
		pcm.Downmix(dst, src)
	}
}
