package opus

import (
	"testing"

	"layeh.com/gopus"
)

// The benchmarks run one 20 ms stereo speech frame per iteration through
// this package and through bare layeh.com/gopus (same libopus, same
// settings) in the same run, so the ratio of the two is the wrapper's cost.

func benchFrame(b *testing.B) []int16 {
	return speech48k(b)[20*FrameLen : 21*FrameLen]
}

func BenchmarkEncode(b *testing.B) {
	src := benchFrame(b)
	b.Run("banter", func(b *testing.B) {
		e, _ := NewEncoder(EncoderConfig{})
		pkt := make([]byte, MaxPacketSize)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Encode(src, pkt); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Lower complexity is the knob for CPU-bound hosts (see docs/audio.md).
	b.Run("banter-complexity5", func(b *testing.B) {
		e, _ := NewEncoder(EncoderConfig{Complexity: 5})
		pkt := make([]byte, MaxPacketSize)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Encode(src, pkt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gopus", func(b *testing.B) {
		e, _ := gopus.NewEncoder(SampleRate, Channels, gopus.Voip)
		e.SetBitrate(DefaultBitrate)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Encode(src, FrameSamples, MaxPacketSize); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	src := benchFrame(b)
	e, _ := NewEncoder(EncoderConfig{})
	pkt := make([]byte, MaxPacketSize)
	n, _ := e.Encode(src, pkt)
	pkt = pkt[:n]
	b.Run("banter", func(b *testing.B) {
		d, _ := NewDecoder()
		frame := make([]int16, FrameLen)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(pkt, frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gopus", func(b *testing.B) {
		d, _ := gopus.NewDecoder(SampleRate, Channels)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(pkt, FrameSamples, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkConceal(b *testing.B) {
	d, _ := NewDecoder()
	frame := make([]int16, FrameLen)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = d.Conceal(frame)
	}
}
