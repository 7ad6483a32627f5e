package opus

import (
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/bareopus"
)

// The benchmarks run one 20 ms stereo speech frame per iteration (cycling
// through the uh-huh fixture) through this package and through bare libopus
// calls (internal/bareopus: the same linked library, same settings). BenchmarkPaired* alternate
// the two frame by frame inside one loop and report both per-frame costs and
// their ratio, which keeps the comparison fair on a loaded machine.

// frames returns the fixture cut into 20 ms frames.
func frames(b *testing.B) [][]int16 {
	s := speech48k(b)
	var f [][]int16
	for off := 0; off+FrameLen <= len(s); off += FrameLen {
		f = append(f, s[off:off+FrameLen])
	}
	return f
}

// packets encodes the fixture frames with the default encoder.
func packets(b *testing.B) [][]byte {
	e, _ := NewEncoder(EncoderConfig{})
	return encodeAll(b, e, speech48k(b))
}

func BenchmarkEncode(b *testing.B) {
	src := frames(b)
	for _, v := range []struct {
		name string
		cfg  EncoderConfig
	}{
		{"banter", EncoderConfig{}},
		// Settings that change the cost (not comparable with the bare baseline).
		{"banter-complexity5", EncoderConfig{Complexity: 5}},
		{"banter-complexity10", EncoderConfig{Complexity: 10}},
		{"banter-signal-voice", EncoderConfig{Signal: SignalVoice}},
	} {
		b.Run(v.name, func(b *testing.B) {
			e, _ := NewEncoder(v.cfg)
			pkt := make([]byte, MaxPacketSize)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := e.Encode(src[i%len(src)], pkt); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	b.Run("libopus", func(b *testing.B) {
		e, err := bareopus.NewEncoder(bareopus.VoIP, DefaultBitrate)
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		pkt := make([]byte, MaxPacketSize)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if n := e.Encode(src[i%len(src)], pkt); n < 0 {
				b.Fatal(n)
			}
			i++
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	pkts := packets(b)
	b.Run("banter", func(b *testing.B) {
		d, _ := NewDecoder()
		frame := make([]int16, FrameLen)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := d.Decode(pkts[i%len(pkts)], frame); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	// Direct decode to the STT format (no resampler needed afterwards).
	b.Run("banter-16k-mono", func(b *testing.B) {
		d, _ := NewDecoderFormat(16000, 1)
		frame := make([]int16, 320)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := d.Decode(pkts[i%len(pkts)], frame); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("libopus", func(b *testing.B) {
		d, err := bareopus.NewDecoder(SampleRate, Channels)
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		frame := make([]int16, FrameLen)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if n := d.Decode(pkts[i%len(pkts)], frame); n < 0 {
				b.Fatal(n)
			}
			i++
		}
	})
}

// BenchmarkPairedEncode encodes each frame with both encoders in turn.
func BenchmarkPairedEncode(b *testing.B) {
	src := frames(b)
	ours, _ := NewEncoder(EncoderConfig{})
	theirs, err := bareopus.NewEncoder(bareopus.VoIP, DefaultBitrate)
	if err != nil {
		b.Fatal(err)
	}
	defer theirs.Close()
	pkt := make([]byte, MaxPacketSize)
	var tOurs, tTheirs []time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f := src[i%len(src)]
		a := func() {
			t := time.Now()
			if _, err := ours.Encode(f, pkt); err != nil {
				b.Fatal(err)
			}
			tOurs = append(tOurs, time.Since(t))
		}
		g := func() {
			t := time.Now()
			if n := theirs.Encode(f, pkt); n < 0 {
				b.Fatal(n)
			}
			tTheirs = append(tTheirs, time.Since(t))
		}
		alternate(i, a, g)
		i++
	}
	reportPair(b, tOurs, tTheirs)
}

// BenchmarkPairedDecode decodes each packet with both decoders in turn.
func BenchmarkPairedDecode(b *testing.B) {
	pkts := packets(b)
	ours, _ := NewDecoder()
	theirs, err := bareopus.NewDecoder(SampleRate, Channels)
	if err != nil {
		b.Fatal(err)
	}
	defer theirs.Close()
	frame := make([]int16, FrameLen)
	var tOurs, tTheirs []time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pkts[i%len(pkts)]
		a := func() {
			t := time.Now()
			if _, err := ours.Decode(p, frame); err != nil {
				b.Fatal(err)
			}
			tOurs = append(tOurs, time.Since(t))
		}
		g := func() {
			t := time.Now()
			if n := theirs.Decode(p, frame); n < 0 {
				b.Fatal(n)
			}
			tTheirs = append(tTheirs, time.Since(t))
		}
		alternate(i, a, g)
		i++
	}
	reportPair(b, tOurs, tTheirs)
}

// alternate runs a then g on even i, g then a on odd i, so neither always
// runs with the other's data in cache.
func alternate(i int, a, g func()) {
	if i%2 == 0 {
		a()
		g()
	} else {
		g()
		a()
	}
}

// reportPair reports the median per-frame time of each side and their
// ratio. Medians, not means: on a shared machine a preempted call costs
// milliseconds and would swamp a 100 µs average. The slices of timings are
// the only allocations the paired benchmarks add (amortised, < 1 per op).
func reportPair(b *testing.B, ours, theirs []time.Duration) {
	b.StopTimer()
	mo, mt := median(ours), median(theirs)
	b.ReportMetric(float64(mo.Nanoseconds()), "banter-ns/frame")
	b.ReportMetric(float64(mt.Nanoseconds()), "libopus-ns/frame")
	if mt > 0 {
		b.ReportMetric(float64(mo)/float64(mt), "banter/libopus")
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func BenchmarkConceal(b *testing.B) {
	d, _ := NewDecoder()
	frame := make([]int16, FrameLen)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = d.Conceal(frame)
	}
}
