package voice

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/config"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/internal/bareopus"
)

// discardSender accepts frames at once: the benchmarks measure the bot's
// own per-frame work, not the 20 ms pacing.
type discardSender struct{ n int }

func (d *discardSender) SendOpus(context.Context, []byte) error { d.n++; return nil }
func (d *discardSender) StopSpeaking(context.Context) error     { return nil }

// fixture48k returns a testdata fixture as 48 kHz stereo.
func fixture48k(tb testing.TB, name string) []int16 {
	tb.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	s, f, err := wav.Decode(nil, b)
	if err != nil || f != pcm.Discord() {
		tb.Fatalf("%s: %v %v", name, f, err)
	}
	return s
}

// mono24k makes crude 24 kHz mono from 48 kHz stereo (downmix, decimate):
// input for the TTS path, where only the cost matters.
func mono24k(s []int16) []byte {
	mono := make([]int16, len(s)/2)
	pcm.Downmix(mono, s)
	out := make([]int16, len(mono)/2)
	for i := range out {
		out[i] = mono[2*i]
	}
	return pcm.AppendBytes(nil, out)
}

// opusFrames encodes 48 kHz stereo into 20 ms packets with bare libopus.
func opusFrames(tb testing.TB, s []int16) [][]byte {
	tb.Helper()
	enc, err := bareopus.NewEncoder(bareopus.VoIP, 64000)
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	var out [][]byte
	pkt := make([]byte, 4000)
	for off := 0; off+1920 <= len(s); off += 1920 {
		n := enc.Encode(s[off:off+1920], pkt)
		if n < 0 {
			tb.Fatalf("encode: libopus error %d", n)
		}
		out = append(out, append([]byte(nil), pkt[:n]...))
	}
	return out
}

// sendPath is the outgoing per-frame path: 20 ms of 24 kHz mono TTS audio
// into Playback (resample, upmix, Opus encode, pacing bookkeeping, send).
type sendPath struct {
	pb  *Playback
	src []byte
	i   int
	ctx context.Context
}

func newSendPath(tb testing.TB) *sendPath {
	pb, err := NewPlayback(&discardSender{}, pcm.Mono24k(), nil, time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	pb.Begin(nil)
	return &sendPath{pb: pb, src: mono24k(fixture48k(tb, "long-story.wav")), ctx: context.Background()}
}

func (p *sendPath) frame() {
	const n = 960 // bytes: 20 ms of 24 kHz mono pcm16
	off := (p.i * n) % (len(p.src) - n)
	_ = p.pb.WritePCM(p.ctx, p.src[off:off+n])
	p.i++
}

// recvPath is the incoming per-frame path of one speaker: a frame from its
// stream taken by the speaker's hearing-clock tick, through the Listener
// (jitter, decode, VAD, Tick), plus the barge-in check against a reply.
type recvPath struct {
	s    *session
	sp   *speaker
	ch   chan dvoice.Frame
	pkts [][]byte
	i    int
}

func newRecvPath(tb testing.TB) *recvPath {
	cfg := config.Default()
	cfg.Voice.BargeIn = config.BargeIn{Policy: "anyone", MinSpeechMs: 1 << 30, EchoGuardMs: 0}
	// The per-frame path alone: no transcript at pauses (speculation and the adaptive end are
	// work per pause, not per frame; BenchmarkSpeculative measures them).
	cfg.Voice.Speculation.Enabled = false
	cfg.Voice.Endpointing.CompleteSilenceMs, cfg.Voice.Endpointing.TrailingSilenceMs = 0, 0
	svc := &Service{opts: Options{Config: func() *config.Config { return cfg }, Now: time.Now}}
	s := &session{svc: svc, speakers: map[string]*speaker{}, ctx: context.Background()}
	ar := &activeReply{id: 1, target: "1"}
	ar.firstPacket.Store(time.Now().UnixNano())
	s.cur.Store(ar)
	ch := make(chan dvoice.Frame, 4)
	sp := &speaker{s: s, userID: "2", frames: ch}
	l, err := audio.NewListener(audio.ListenerConfig{DirectDecode: true}, func(vad.Event) {}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	sp.l = l
	r := &recvPath{s: s, sp: sp, ch: ch, pkts: opusFrames(tb, fixture48k(tb, "long-story.wav"))}
	for range len(r.pkts) { // warm-up: buffers reach their size
		r.frame()
	}
	return r
}

func (r *recvPath) frame() {
	p := r.pkts[r.i%len(r.pkts)]
	r.ch <- dvoice.Frame{UserID: "2", SSRC: 1, Sequence: uint16(r.i), Timestamp: uint32(r.i) * 960, Opus: p}
	r.sp.tick()
	r.i++
}

// BenchmarkSendFrame is the outgoing path per 20 ms frame; its same-run
// baseline "libopus" is bare libopus (internal/bareopus) encoding one 48 kHz
// stereo frame.
func BenchmarkSendFrame(b *testing.B) {
	b.Run("voice", func(b *testing.B) {
		p := newSendPath(b)
		b.ReportAllocs()
		for b.Loop() {
			p.frame()
		}
	})
	b.Run("libopus", func(b *testing.B) {
		s := fixture48k(b, "long-story.wav")
		enc, err := bareopus.NewEncoder(bareopus.Audio, 64000) // the application Playback uses
		if err != nil {
			b.Fatal(err)
		}
		defer enc.Close()
		pkt := make([]byte, 4000)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			off := (i * 1920) % (len(s) - 1920)
			_ = enc.Encode(s[off:off+1920], pkt)
			i++
		}
	})
}

// BenchmarkReceiveFrame is the incoming path per 20 ms frame of a speaker;
// its same-run baseline "libopus" is bare libopus (internal/bareopus)
// decoding the same packet to 48 kHz stereo.
func BenchmarkReceiveFrame(b *testing.B) {
	b.Run("voice", func(b *testing.B) {
		r := newRecvPath(b)
		b.ReportAllocs()
		for b.Loop() {
			r.frame()
		}
	})
	b.Run("libopus", func(b *testing.B) {
		pkts := opusFrames(b, fixture48k(b, "long-story.wav"))
		dec, err := bareopus.NewDecoder(48000, 2)
		if err != nil {
			b.Fatal(err)
		}
		defer dec.Close()
		pcm := make([]int16, 1920)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			_ = dec.Decode(pkts[i%len(pkts)], pcm)
			i++
		}
	})
}

// TestHotPathsAllocFree: the per-frame send and receive paths allocate
// nothing.
func TestHotPathsAllocFree(t *testing.T) {
	p := newSendPath(t)
	for range 100 {
		p.frame()
	}
	if n := testing.AllocsPerRun(500, p.frame); n != 0 {
		t.Errorf("send path: %v allocs per frame", n)
	}
	r := newRecvPath(t)
	if n := testing.AllocsPerRun(500, r.frame); n != 0 {
		t.Errorf("receive path: %v allocs per frame", n)
	}
}
