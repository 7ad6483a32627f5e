package voice

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/discord/dave"
)

// Sender is what playback needs from a voice connection; *voice.Conn of
// discord/voice implements it.
type Sender interface {
	// SendOpus sends one 20 ms frame, blocking until its pacing slot.
	SendOpus(ctx context.Context, opus []byte) error
	// StopSpeaking ends the talk spurt.
	StopSpeaking(ctx context.Context) error
}

// senderBox holds a Sender for atomic swaps.
type senderBox struct{ Sender }

// Playback is the bot's mouth in one session: PCM in (24 kHz mono TTS or
// realtime audio, any chunking; encoded as it is, 24 kHz mono), paced Opus
// out through a Sender. A Responder
// writes a reply's audio into it; the session cancels the context given to
// WritePCM to stop playback at the next frame (barge-in).
//
// Playback is used by one goroutine at a time (the reply in progress); the
// session hands it from one reply to the next. WritePCM does not allocate.
type Playback struct {
	conn    atomic.Pointer[senderBox] // swapped when the session gets a fresh connection
	talker  *audio.Talker
	metrics *Metrics
	now     func() time.Time

	// frames counts the current reply's frames handed to the connection (written by the
	// writing goroutine), dropped those the connection discarded unsent on Interrupt; read by
	// anyone (Played: a barge-in logs how much had played at the cut).
	frames, dropped atomic.Int64

	// per reply, owned by the writing goroutine
	ctx     context.Context
	first   time.Time
	slot    time.Time // due time of the next frame on the current grid
	onFirst func(time.Time)
	emitFn  func([]byte) error
	err     error
	// noKey: this reply's first frame waited e2eeWait for DAVE's first key in vain; every
	// later frame of the reply fails at once (the reply ends) instead of waiting again.
	noKey bool
}

// NewPlayback returns a Playback for PCM in format in (llm.SpeechSampleRate
// mono for TTS) sending through conn, with the reply encoder's default
// settings (ReplyEncoder). m may be nil; now nil means time.Now.
func NewPlayback(conn Sender, in pcm.Format, m *Metrics, now func() time.Time) (*Playback, error) {
	return newPlayback(conn, in, opus.EncoderConfig{}, m, now)
}

// ReplyEncoder returns enc with its zero fields set to the reply encoder's
// defaults: the audio application, 64 kb/s, complexity 5 (chosen by
// measurement: bench/voice/encoder, docs/voice.md), and the input format
// as it is when libopus takes it (Rate and Channels zero: 24 kHz mono TTS is
// encoded at 24 kHz mono, not resampled and upmixed to 48 kHz stereo;
// audio.NewTalker).
func ReplyEncoder(enc opus.EncoderConfig) opus.EncoderConfig {
	if enc.Application == opus.ApplicationUnknown {
		enc.Application = opus.ApplicationAudio
	}
	if enc.Bitrate == 0 {
		enc.Bitrate = 64000
	}
	if enc.Complexity == 0 {
		enc.Complexity = 5
	}
	return enc
}

func newPlayback(conn Sender, in pcm.Format, enc opus.EncoderConfig, m *Metrics, now func() time.Time) (*Playback, error) {
	t, err := audio.NewTalker(in, ReplyEncoder(enc), nil)
	if err != nil {
		return nil, fmt.Errorf("voice: playback: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	p := &Playback{talker: t, metrics: m, now: now}
	p.conn.Store(&senderBox{conn})
	p.emitFn = p.emit
	return p, nil
}

// Begin starts a reply: onFirst (may be nil) is called with the time the
// first packet of the reply went out.
func (p *Playback) Begin(onFirst func(time.Time)) {
	p.talker.Reset()
	p.frames.Store(0)
	p.dropped.Store(0)
	p.first, p.onFirst, p.err, p.noKey = time.Time{}, onFirst, nil, false
}

// WritePCM converts b (little-endian samples of the input format, split
// anywhere) and sends every complete frame, blocking at the real-time pace.
// It returns ctx's error as soon as ctx ends (within one frame).
func (p *Playback) WritePCM(ctx context.Context, b []byte) error {
	p.ctx = ctx
	err := p.talker.WriteBytes(b, p.emitFn)
	p.ctx = nil
	return err
}

// End flushes the last partial frame and ends the talk spurt. It is called
// after a reply, also an interrupted one (ctx is then a fresh one, so the
// silence frames that close the spurt still go out).
func (p *Playback) End(ctx context.Context, flush bool) error {
	var err error
	if flush {
		p.ctx = ctx
		err = p.talker.Flush(p.emitFn)
		p.ctx = nil
	}
	p.talker.Reset()
	if serr := p.conn.Load().StopSpeaking(ctx); serr != nil && err == nil {
		err = fmt.Errorf("voice: stop speaking: %w", serr)
	}
	return err
}

// e2eeWait bounds how long a reply's first frame waits for DAVE's first key.
const e2eeWait = 10 * time.Second

// errNoKey ends a reply whose first frame found no DAVE key within e2eeWait.
var errNoKey = fmt.Errorf("voice: send: no end-to-end encryption key within %s: %w", e2eeWait, dave.ErrNotReady)

// awaitE2EE retries the first frame of a reply every frame time until the
// E2EE layer can encrypt it, ctx ends or e2eeWait passes.
func (p *Playback) awaitE2EE(pkt []byte) error {
	t := time.NewTicker(pcm.FrameDuration)
	defer t.Stop()
	deadline := time.Now().Add(e2eeWait)
	for {
		select {
		case <-p.ctx.Done():
			return p.ctx.Err()
		case <-t.C:
		}
		err := p.conn.Load().SendOpus(p.ctx, pkt)
		if !errors.Is(err, dave.ErrNotReady) || time.Now().After(deadline) {
			return err
		}
	}
}

// queuer is a Sender that queues frames ahead of their slot (discord/voice
// on a send clock): SendOpus returns before the frame goes out.
type queuer interface {
	// Interrupt drops the frames queued and not yet sent, returning how many.
	Interrupt() int
	// Queued returns how many frames wait for their slot.
	Queued() int
}

// Interrupt drops what the connection has queued and not yet sent (with a
// send clock, SendOpus queues up to 200 ms ahead): called on barge-in,
// from any goroutine, right after cancelling the reply (so that no frame is
// queued after it).
func (p *Playback) Interrupt() {
	if q, ok := p.conn.Load().Sender.(queuer); ok {
		p.dropped.Add(int64(q.Interrupt()))
	}
}

// SetSender switches to a new connection (a move or a fresh voice session).
// Safe to call while a reply plays: the next frame goes to the new one.
func (p *Playback) SetSender(conn Sender) { p.conn.Store(&senderBox{conn}) }

// Played returns how much audio of the current reply has gone out: the frames handed to the
// connection less those still queued for their slot and those Interrupt dropped (on a send
// clock SendOpus returns up to 200 ms ahead of the frame's slot). Safe from any goroutine; it
// is what the timeline keeps of an interrupted reply and where a realtime item is truncated.
func (p *Playback) Played() time.Duration {
	n := p.frames.Load() - p.dropped.Load()
	if q, ok := p.conn.Load().Sender.(queuer); ok {
		// Queued counts the reply's audio only, not the end-of-spurt silence End queues behind
		// it: a barge-in that reads Played after End queued its silence reads the same as one
		// before (it read 100 ms short under load: TestBargeInPlayedIsHeard).
		n -= min(int64(q.Queued()), n)
	}
	return time.Duration(max(n, 0)) * pcm.FrameDuration
}

// First returns when the first packet of the current reply went out (zero
// before).
func (p *Playback) First() time.Time { return p.first }

func (p *Playback) emit(pkt []byte) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	err := p.conn.Load().SendOpus(p.ctx, pkt)
	if errors.Is(err, dave.ErrNotReady) && p.frames.Load() == 0 {
		// DAVE has no sender key yet (right after joining, before the
		// first transition): hold the reply's first frame until it has
		// one rather than lose the start of what the bot says. Once: a
		// reply whose first frame found no key in e2eeWait ends there
		// (each of its frames waiting in turn would hold the session
		// e2eeWait a frame), and the next reply tries again.
		if !p.noKey {
			err = p.awaitE2EE(pkt)
		}
		if errors.Is(err, dave.ErrNotReady) {
			p.noKey = true
			p.metrics.unencrypted()
			return errNoKey
		}
	}
	if errors.Is(err, dave.ErrNotReady) {
		// The key went away mid-reply (a transition): the frame cannot be
		// sent encrypted and must not be sent in clear. Drop and count.
		p.metrics.unencrypted()
		return nil
	}
	if err != nil {
		return fmt.Errorf("voice: send: %w", err)
	}
	at := p.now()
	if p.frames.Load() == 0 {
		p.first, p.slot = at, at
		if p.onFirst != nil {
			p.onFirst(at)
		}
	}
	// Against the 20 ms grid: a whole frame or more behind is an underrun
	// (no audio yet, e.g. between sentences) or a stall; the sender skips
	// the missed slots, so the grid moves on with it. How late each frame
	// left is the transport's banter_voice_send_lateness_seconds, measured
	// where it is sent.
	if late := at.Sub(p.slot); late >= pcm.FrameDuration {
		skip := late / pcm.FrameDuration
		p.slot = p.slot.Add(skip * pcm.FrameDuration)
		p.metrics.skipped(int(skip))
	}
	p.metrics.frame()
	p.slot = p.slot.Add(pcm.FrameDuration)
	p.frames.Add(1)
	return nil
}
