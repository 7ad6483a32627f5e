package realtime

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	llmrt "github.com/banterbot/banter/llm/realtime"
)

// reportMedian reports the median of d as "median-µs".
func reportMedian(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1000, "median-µs")
}

// BenchmarkTalkerFrame is the baseline: the bare audio.Talker resampling 20
// ms of 24 kHz mono to 48 kHz stereo and encoding one Opus frame.
func BenchmarkTalkerFrame(b *testing.B) {
	t, err := audio.NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	frame := tone(20 * time.Millisecond)
	n := 0
	emit := func([]byte) error { n++; return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := t.WriteBytes(frame, emit); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlayerFrame is the Bridge's output path per 20 ms frame: queue
// the delta, hand over to the player goroutine, resample, encode, sink.
func BenchmarkPlayerFrame(b *testing.B) {
	sink := newTestSink()
	p := startPlayer(b, sink, NewMetrics(nil))
	frame := tone(20 * time.Millisecond)
	for range 10 {
		p.enqueue("item_1", frame)
		<-sink.out
	}
	b.ReportAllocs()
	for b.Loop() {
		p.enqueue("item_1", frame)
		<-sink.out
	}
}

// BenchmarkForwardFrame is the input side per 20 ms of a speaker: 48 kHz
// stereo resampled to 24 kHz mono and encoded as input_audio_buffer.append.
func BenchmarkForwardFrame(b *testing.B) {
	r, err := resample.New(pcm.Discord(), pcm.Mono24k())
	if err != nil {
		b.Fatal(err)
	}
	in := make([]int16, pcm.Discord().FrameLen())
	for i := range in {
		in[i] = int16(i * 37)
	}
	out := make([]int16, r.MaxOut(len(in)))
	var raw, msg []byte
	b.ReportAllocs()
	for b.Loop() {
		n, err := r.Process(out, in)
		if err != nil {
			b.Fatal(err)
		}
		raw = pcm.AppendBytes(raw[:0], out[:n])
		msg = llmrt.InputAudioAppendCommand{Audio: raw}.AppendJSON(msg[:0])
	}
}

// BenchmarkFirstDeltaToFrame measures the time from an item's first audio
// delta (100 ms, as the realtime API sends them) reaching the Bridge to its
// first Opus frame handed to the sink; median reported.
func BenchmarkFirstDeltaToFrame(b *testing.B) {
	sink := newTestSink()
	tk, err := audio.NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first time.Time
	got := make(chan time.Time, 1)
	p := newPlayer(ctx, tk, func(ctx context.Context, f []byte) error {
		if first.IsZero() {
			first = time.Now()
			got <- first
		}
		return nil
	}, sink.stop, nil, slog.New(slog.DiscardHandler), time.Now)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	delta := tone(100 * time.Millisecond)
	items := []string{"item_a", "item_b"}
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		p.enqueue(items[i%2], delta)
		at := <-got
		lat = append(lat, at.Sub(start))
		p.end()
		if err := p.waitIdle(ctx); err != nil {
			b.Fatal(err)
		}
		first = time.Time{}
	}
	reportMedian(b, lat)
}

// BenchmarkFirstDeltaDirect is the same-run baseline: the first frame of
// the same delta encoded inline by a bare Talker (no queue, no goroutine).
func BenchmarkFirstDeltaDirect(b *testing.B) {
	tk, err := audio.NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	delta := tone(100 * time.Millisecond)
	var first time.Time
	emit := func([]byte) error {
		if first.IsZero() {
			first = time.Now()
		}
		return nil
	}
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		first = time.Time{}
		start := time.Now()
		if err := tk.WriteBytes(delta, emit); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, first.Sub(start))
		if err := tk.Flush(emit); err != nil {
			b.Fatal(err)
		}
		tk.Reset()
	}
	reportMedian(b, lat)
}
