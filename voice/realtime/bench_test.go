package realtime

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	llmrt "github.com/banterbot/banter/llm/realtime"
	"github.com/banterbot/banter/voice"
)

// tone returns d of a 440 Hz tone as pcm16 24 kHz mono bytes.
func tone(d time.Duration) []byte {
	n := pcm.Mono24k().Samples(d)
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/24000))
	}
	return pcm.AppendBytes(nil, s)
}

// reportMedian reports the median of d as "median-µs".
func reportMedian(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1000, "median-µs")
}

// signalSender passes frames to next (nil: accepted at once) and signals
// each accepted one on out.
type signalSender struct {
	next voice.Sender
	out  chan time.Time
}

func (s *signalSender) SendOpus(ctx context.Context, opus []byte) error {
	if s.next != nil {
		if err := s.next.SendOpus(ctx, opus); err != nil {
			return err
		}
	}
	select {
	case s.out <- time.Now():
	default:
	}
	return nil
}

func (s *signalSender) StopSpeaking(ctx context.Context) error {
	if s.next != nil {
		return s.next.StopSpeaking(ctx)
	}
	return nil
}

// replyPath is the Bridge's output path as a reply uses it, without the
// socket: the read loop's handling of an audio delta (handle) → the reply's
// channel → play on the replying goroutine → the voice session's Playback →
// its Sender.
type replyPath struct {
	tb   testing.TB
	b    *Bridge
	pb   *voice.Playback
	ctx  context.Context
	r    *response
	done chan error
}

func newReplyPath(tb testing.TB, sender voice.Sender) *replyPath {
	tb.Helper()
	pb, err := voice.NewPlayback(sender, pcm.Mono24k(), nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	b := &Bridge{log: slog.New(slog.DiscardHandler), now: time.Now, free: make(chan []byte, 64),
		hist: history{max: 12, maxChars: 300}}
	return &replyPath{tb: tb, b: b, pb: pb, ctx: tb.Context()}
}

// start begins a reply whose audio plays through the Playback.
func (p *replyPath) start() {
	r := &response{requestedAt: time.Now(), out: make(chan []byte, 1024), done: make(chan struct{})}
	p.b.mu.Lock()
	p.b.resp = r
	p.b.mu.Unlock()
	p.r, p.done = r, make(chan error, 1)
	p.pb.Begin(nil)
	go func() {
		p.done <- p.b.play(p.ctx, r, audioOut{write: p.pb.WritePCM, played: p.pb.Played, firstPacket: p.pb.First})
	}()
}

// delta delivers one audio delta of item as the read loop does.
func (p *replyPath) delta(item string, audio []byte) {
	p.b.handle(&llmrt.Event{Type: llmrt.EventOutputAudioDelta, ItemID: item, Audio: audio})
}

// finish ends the response (response.done) and waits for the reply to be
// played and its spurt ended.
func (p *replyPath) finish() {
	ev := &llmrt.Event{Type: llmrt.EventResponseDone}
	ev.Response.Status = "completed"
	p.b.handle(ev)
	if err := <-p.done; err != nil {
		p.tb.Fatal(err)
	}
	if err := p.pb.End(p.ctx, true); err != nil {
		p.tb.Fatal(err)
	}
}

// playbackEncoder is the encoder voice.Playback uses: the baselines encode
// the same way.
var playbackEncoder = opus.EncoderConfig{Application: opus.ApplicationAudio, Bitrate: 64000, Complexity: 5}

// BenchmarkTalkerFrame is the baseline: the bare audio.Talker resampling 20
// ms of 24 kHz mono to 48 kHz stereo and encoding one Opus frame.
func BenchmarkTalkerFrame(b *testing.B) {
	t, err := audio.NewTalker(pcm.Mono24k(), playbackEncoder, nil)
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

// BenchmarkReplyFrame is a reply's output path per 20 ms delta: handle the
// delta, hand it over to the replying goroutine, Playback (resample,
// encode, pacing bookkeeping), sender.
func BenchmarkReplyFrame(b *testing.B) {
	sender := &signalSender{out: make(chan time.Time, 1)}
	p := newReplyPath(b, sender)
	p.start()
	frame := tone(20 * time.Millisecond)
	for range 10 {
		p.delta("item_1", frame)
		<-sender.out
	}
	b.ReportAllocs()
	for b.Loop() {
		p.delta("item_1", frame)
		<-sender.out
	}
	b.StopTimer()
	p.finish()
}

// TestReplyFrameAllocs locks in the steady state of a reply's output path:
// an audio delta handled, handed over, resampled, encoded and sent
// allocates nothing.
func TestReplyFrameAllocs(t *testing.T) {
	sender := &signalSender{out: make(chan time.Time, 1)}
	p := newReplyPath(t, sender)
	p.start()
	frame := tone(20 * time.Millisecond)
	for range 20 { // warm up: buffers reach their size
		p.delta("item_1", frame)
		<-sender.out
	}
	if n := testing.AllocsPerRun(500, func() {
		p.delta("item_1", frame)
		<-sender.out
	}); n != 0 {
		t.Errorf("%.1f allocations per 20 ms delta, want 0", n)
	}
	p.finish()
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

// firstDeltaToFrame measures, per iteration a new reply, the time from the
// reply's first audio delta (100 ms, as the realtime API sends them)
// reaching the Bridge to its first frame accepted by next (nil: at once).
func firstDeltaToFrame(b *testing.B, next voice.Sender) {
	sender := &signalSender{next: next, out: make(chan time.Time, 1)}
	p := newReplyPath(b, sender)
	delta := tone(100 * time.Millisecond)
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		p.start()
		start := time.Now()
		p.delta("item_1", delta)
		lat = append(lat, (<-sender.out).Sub(start))
		p.finish()
		for len(sender.out) > 0 { // frames after the first
			<-sender.out
		}
	}
	reportMedian(b, lat)
}

// BenchmarkFirstDeltaToFrame: first delta of a reply to its first Opus frame
// at the Playback's sender; median reported.
func BenchmarkFirstDeltaToFrame(b *testing.B) { firstDeltaToFrame(b, nil) }

// BenchmarkFirstDeltaDirect is the same-run baseline: the first frame of
// the same delta encoded inline by a bare Talker (no hand-off, no Playback).
func BenchmarkFirstDeltaDirect(b *testing.B) {
	tk, err := audio.NewTalker(pcm.Mono24k(), playbackEncoder, nil)
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
