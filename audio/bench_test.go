package audio

import (
	"runtime"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
)

// BenchmarkListenerFrame is the whole receive path for one 20 ms packet of
// a speaker (jitter, decode, resample to 16 kHz, VAD/endpointing), cycling
// through the long-story fixture; "direct" decodes straight to 16 kHz mono.
// BenchmarkDecodeFrame, the same-run baseline, is the 48 kHz stereo Opus
// decode alone: the pipeline's own overhead is the difference.
func BenchmarkListenerFrame(b *testing.B) {
	b.Run("resample", func(b *testing.B) { benchListener(b, false) })
	b.Run("direct", func(b *testing.B) { benchListener(b, true) })
}

func benchListener(b *testing.B, direct bool) {
	pkts, _, _ := talk(b, testaudio.Speech16k(b, "long-story.wav"), 0, 1, 0, false)
	l, _ := NewListener(ListenerConfig{DirectDecode: direct}, func(vad.Event) {}, nil)
	deliver(l, pkts, 0) // warm-up: the utterance buffer reaches its size
	b.ReportAllocs()
	i := 0
	seqOff := uint16(len(pkts))
	for b.Loop() {
		p := pkts[i%len(pkts)].pkt
		if i > 0 && i%len(pkts) == 0 {
			seqOff += uint16(len(pkts))
		}
		p.Seq += seqOff
		p.Timestamp += uint32(seqOff) * opus.FrameSamples
		l.Push(p)
		l.Tick()
		i++
	}
}

func BenchmarkDecodeFrame(b *testing.B) {
	pkts, _, _ := talk(b, testaudio.Speech16k(b, "long-story.wav"), 0, 1, 0, false)
	d, _ := opus.NewDecoder()
	frame := make([]int16, opus.FrameLen)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = d.Decode(pkts[i%len(pkts)].pkt.Payload, frame)
		i++
	}
}

// BenchmarkTalkerFrame is the realtime/TTS bridge per 20 ms frame: 24 kHz
// mono in, Opus encode at 24 kHz mono. Its baseline BenchmarkEncodeFrame is
// the encode alone of the same audio.
func BenchmarkTalkerFrame(b *testing.B) {
	src := convert(b, testaudio.Speech16k(b, "long-story.wav"), pcm.Speech16k(), pcm.Mono24k())
	t, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{Application: opus.ApplicationVoIP}, nil)
	emit := func([]byte) error { return nil }
	const fl = 480
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		off := (i * fl) % (len(src) - fl)
		_ = t.Write(src[off:off+fl], emit)
		i++
	}
}

func BenchmarkEncodeFrame(b *testing.B) {
	src := convert(b, testaudio.Speech16k(b, "long-story.wav"), pcm.Speech16k(), pcm.Mono24k())
	e, _ := opus.NewEncoder(opus.EncoderConfig{Rate: 24000, Channels: 1})
	pkt := make([]byte, opus.MaxPacketSize)
	const fl = 480
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		off := (i * fl) % (len(src) - fl)
		_, _ = e.Encode(src[off:off+fl], pkt)
		i++
	}
}

// BenchmarkFirstDeltaToPacket is the bridge's share of issue 10's "first
// audio delta → first packet out": a fresh reply (Reset) receives its first
// realtime delta (100 ms of 24 kHz mono, a typical first chunk) and the
// time until the first Opus frame is handed to the sender is measured.
// The median is reported next to the mean.
func BenchmarkFirstDeltaToPacket(b *testing.B) {
	src := convert(b, testaudio.Speech16k(b, "two-questions.wav"), pcm.Speech16k(), pcm.Mono24k())
	delta := src[pcm.Mono24k().Len(300*time.Millisecond):][:2400]
	t, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	var start time.Time
	var lat []time.Duration
	first := true
	emit := func([]byte) error {
		if first {
			lat = append(lat, time.Since(start))
			first = false
		}
		return nil
	}
	b.ReportAllocs()
	for b.Loop() {
		t.Reset()
		first = true
		start = time.Now()
		_ = t.Write(delta, emit)
	}
	b.StopTimer()
	if len(lat) > 0 {
		b.ReportMetric(float64(median(lat).Microseconds()), "median-µs")
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ { // insertion sort: benchmark-sized input
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// BenchmarkMemory reports the heap held by one Listener (default and
// direct decode, 16 kHz) and one Talker (24 kHz mono in), measured over
// b.N fresh instances kept alive, for the voice layer's memory per session.
func BenchmarkMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		make func() any
	}{
		{"listener", func() any { l, _ := NewListener(ListenerConfig{}, func(vad.Event) {}, nil); return l }},
		{"listener-direct", func() any {
			l, _ := NewListener(ListenerConfig{DirectDecode: true}, func(vad.Event) {}, nil)
			return l
		}},
		{"talker", func() any { t, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil); return t }},
	} {
		b.Run(c.name, func(b *testing.B) {
			keep := make([]any, 0, b.N)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range b.N {
				keep = append(keep, c.make())
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-B/instance")
			runtime.KeepAlive(keep)
		})
	}
}

// BenchmarkPairedListener alternates, packet by packet, the whole receive
// path (Listener.Push + Tick) and a bare 48 kHz stereo decode of the same
// packet, and reports the median of each and their ratio: the pipeline's
// cost relative to decoding alone, robust to a loaded machine.
func BenchmarkPairedListener(b *testing.B) {
	for _, direct := range []bool{false, true} {
		name := "resample"
		if direct {
			name = "direct"
		}
		b.Run(name, func(b *testing.B) {
			pkts, _, _ := talk(b, testaudio.Speech16k(b, "long-story.wav"), 0, 1, 0, false)
			l, _ := NewListener(ListenerConfig{DirectDecode: direct}, func(vad.Event) {}, nil)
			deliver(l, pkts, 0)
			d, _ := opus.NewDecoder()
			frame := make([]int16, opus.FrameLen)
			var tl, td []time.Duration
			i := 0
			seqOff := uint16(len(pkts))
			b.ReportAllocs()
			for b.Loop() {
				if i > 0 && i%len(pkts) == 0 {
					seqOff += uint16(len(pkts))
				}
				p := pkts[i%len(pkts)].pkt
				p.Seq += seqOff
				p.Timestamp += uint32(seqOff) * opus.FrameSamples
				t0 := time.Now()
				l.Push(p)
				l.Tick()
				t1 := time.Now()
				_, _ = d.Decode(p.Payload, frame)
				td = append(td, time.Since(t1))
				tl = append(tl, t1.Sub(t0))
				i++
			}
			b.StopTimer()
			reportMedians(b, "listener", tl, "decode", td)
		})
	}
}

// BenchmarkPairedTalker alternates the send path per 20 ms frame (24 kHz
// mono → encode, Talker.Write) with a bare encode of the same audio in the
// same format.
func BenchmarkPairedTalker(b *testing.B) {
	src24 := convert(b, testaudio.Speech16k(b, "long-story.wav"), pcm.Speech16k(), pcm.Mono24k())
	tk, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	e, _ := opus.NewEncoder(opus.EncoderConfig{Application: opus.ApplicationAudio, Rate: 24000, Channels: 1}) // the Talker's default
	pkt := make([]byte, opus.MaxPacketSize)
	emit := func([]byte) error { return nil }
	frames := len(src24) / 480
	var tt, te []time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		f := i % frames
		t0 := time.Now()
		_ = tk.Write(src24[f*480:(f+1)*480], emit)
		t1 := time.Now()
		_, _ = e.Encode(src24[f*480:(f+1)*480], pkt)
		te = append(te, time.Since(t1))
		tt = append(tt, t1.Sub(t0))
		i++
	}
	b.StopTimer()
	reportMedians(b, "talker", tt, "encode", te)
}

func reportMedians(b *testing.B, an string, a []time.Duration, bn string, bd []time.Duration) {
	ma, mb := median(a), median(bd)
	b.ReportMetric(float64(ma.Nanoseconds()), an+"-ns/frame")
	b.ReportMetric(float64(mb.Nanoseconds()), bn+"-ns/frame")
	if mb > 0 {
		b.ReportMetric(float64(ma)/float64(mb), an+"/"+bn)
	}
}

// BenchmarkSessionTick is the audio work of one voice session per 20 ms in
// issue 9's capacity scenario: two members who each talk half the time
// (alternating, so one packet through one Listener per tick, both
// Listeners ticked) while the bot answers (one 24 kHz TTS frame through the
// Talker). "sessions/core" is how many such sessions one core sustains
// from the audio work alone (20 ms ÷ cost per tick).
func BenchmarkSessionTick(b *testing.B) {
	pkts, _, _ := talk(b, testaudio.Speech16k(b, "long-story.wav"), 0, 1, 0, false)
	tts := convert(b, testaudio.Speech16k(b, "two-questions.wav"), pcm.Speech16k(), pcm.Mono24k())
	for _, c := range []struct {
		name   string
		direct bool
		app    opus.Application
	}{
		{"resample-voip", false, opus.ApplicationVoIP},
		{"direct-voip", true, opus.ApplicationVoIP},
		{"direct-audio", true, opus.ApplicationAudio},
	} {
		b.Run(c.name, func(b *testing.B) {
			var members [2]*Listener
			for i := range members {
				members[i], _ = NewListener(ListenerConfig{DirectDecode: c.direct}, func(vad.Event) {}, nil)
				deliver(members[i], pkts, 0)
			}
			bot, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{Application: c.app}, nil)
			emit := func([]byte) error { return nil }
			seqOff := uint16(len(pkts))
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				// Member i%2... each talks for one pass over the story, then listens.
				turn := (i / len(pkts)) % 2
				p := pkts[i%len(pkts)].pkt
				p.Seq += seqOff + uint16(i/len(pkts)/2*len(pkts))
				p.Timestamp += uint32(p.Seq-pkts[i%len(pkts)].pkt.Seq) * opus.FrameSamples
				members[turn].Push(p)
				members[0].Tick()
				members[1].Tick()
				f := i % (len(tts)/480 - 1)
				_ = bot.Write(tts[f*480:(f+1)*480], emit)
				i++
			}
			b.StopTimer()
			if perTick := float64(b.Elapsed().Nanoseconds()) / float64(b.N); perTick > 0 {
				b.ReportMetric(float64(20*time.Millisecond)/perTick, "sessions/core")
			}
		})
	}
}
