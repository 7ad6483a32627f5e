package realtime

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/banterbot/banter/audio"
)

// errInterrupted stops a Talker write whose audio was interrupted.
var errInterrupted = errors.New("realtime: playback interrupted")

// frameBytes is 20 ms of the model's audio (pcm16 24 kHz mono).
const frameBytes = 24000 / 50 * 2

// defaultMaxQueue bounds the model audio waiting to be played: 120 s.
const defaultMaxQueue = 120 * 24000 * 2

// player turns the model's audio deltas into 20 ms Opus frames and hands
// them to the sink on its own goroutine, so the socket's read loop never
// waits for pacing. It counts the frames the sink accepted for the current
// item: that is what listeners heard, the audio_end_ms of a truncation.
//
// Goroutines: run is started and waited for by the Bridge. enqueue, end,
// expect, stopNow and waitIdle may be called from any goroutine; the sink
// and the stop callback are only ever called from run, never concurrently.
type player struct {
	talker *audio.Talker
	sink   func(ctx context.Context, opus []byte) error
	stop   func(ctx context.Context) error
	m      *Metrics
	log    *slog.Logger
	now    func() time.Time
	max    int
	base   context.Context // the Bridge's context

	wake chan struct{} // capacity 1: work queued

	// Owned by run.
	emitFn  func([]byte) error
	chunk   []byte // one 20 ms input chunk copied out of buf
	curGen  uint64 // the generation run is playing
	inSpurt bool   // frames went out since the last stop
	sinkErr bool   // the sink failed during this item (logged once)

	sinkMu sync.Mutex // held around each sink call: stopNow waits for the call in flight

	mu            sync.Mutex // guards following
	ctx           context.Context
	cancel        context.CancelFunc
	gen           uint64 // bumped by stopNow
	buf           []byte // queued PCM; buf[off:] is unplayed
	off           int
	item          string // the item buf belongs to
	played        uint64 // frames of item the sink accepted
	ended         bool   // item's audio is complete: flush once drained
	reset         bool   // interrupted: run resets the talker and ends the spurt
	busy          bool   // audio queued, playing, or a spurt to end
	idle          chan struct{}
	queuedAt      time.Time // first delta of item queued; zero once its first frame went out
	requestedAt   time.Time // response.create of item's response
	nextRequested time.Time // set by expect for the next item
}

func newPlayer(ctx context.Context, t *audio.Talker, sink func(context.Context, []byte) error,
	stop func(context.Context) error, m *Metrics, log *slog.Logger, now func() time.Time) *player {
	p := &player{talker: t, sink: sink, stop: stop, m: m, log: log, now: now, max: defaultMaxQueue,
		base: ctx, wake: make(chan struct{}, 1), chunk: make([]byte, frameBytes),
		buf: make([]byte, 0, 10*frameBytes*50)}
	p.emitFn = p.emit
	p.ctx, p.cancel = context.WithCancel(ctx)
	p.idle = make(chan struct{})
	close(p.idle)
	return p
}

// expect notes when the response whose audio comes next was requested.
func (p *player) expect(at time.Time) {
	p.mu.Lock()
	p.nextRequested = at
	p.mu.Unlock()
}

// enqueue queues one audio delta of item. pcm is copied. It does not
// allocate once the queue has grown to the reply's size.
func (p *player) enqueue(item string, pcm []byte) {
	p.mu.Lock()
	if item != p.item {
		p.item, p.played, p.ended = item, 0, false
		p.queuedAt, p.requestedAt, p.nextRequested = p.now(), p.nextRequested, time.Time{}
	}
	if len(p.buf)-p.off+len(pcm) > p.max {
		p.mu.Unlock()
		p.m.audioDropped(len(pcm))
		return
	}
	if p.off > 0 && len(p.buf)+len(pcm) > cap(p.buf) {
		p.buf = p.buf[:copy(p.buf, p.buf[p.off:])]
		p.off = 0
	}
	p.buf = append(p.buf, pcm...)
	if !p.busy {
		p.busy = true
		p.idle = make(chan struct{})
	}
	p.mu.Unlock()
	p.signal()
}

// end marks the current item's audio complete: the last partial frame is
// flushed and the talk spurt ended once everything queued has played.
func (p *player) end() {
	p.mu.Lock()
	if p.busy {
		p.ended = true
	}
	p.mu.Unlock()
	p.signal()
}

func (p *player) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// stopped is what an interruption cut: the item and how much of it played.
type stopped struct {
	item   string
	played uint64 // 20 ms frames
	busy   bool   // something was playing or queued
}

// stopNow stops output at once: queued audio is dropped, the sink call in
// flight is cancelled (and waited for, so played is exact), later frames
// of the item are never sent.
func (p *player) stopNow() stopped {
	p.mu.Lock()
	busy := p.busy
	p.gen++
	p.cancel()
	p.ctx, p.cancel = context.WithCancel(p.base)
	p.buf, p.off, p.ended = p.buf[:0], 0, false
	if busy {
		p.reset = true
	}
	p.mu.Unlock()
	p.sinkMu.Lock() // the sink call in flight, if any, has returned
	p.sinkMu.Unlock()
	p.mu.Lock()
	s := stopped{item: p.item, played: p.played, busy: busy}
	p.item, p.played = "", 0
	p.mu.Unlock()
	p.signal()
	return s
}

// position returns the current item and the frames of it played so far.
func (p *player) position() (string, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.item, p.played
}

// waitIdle waits until nothing is queued or playing.
func (p *player) waitIdle(ctx context.Context) error {
	p.mu.Lock()
	ch := p.idle
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run plays until ctx ends.
func (p *player) run(ctx context.Context) {
	defer func() {
		p.mu.Lock()
		p.cancel()
		p.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		p.drain(ctx)
	}
}

// drain plays everything queued.
func (p *player) drain(ctx context.Context) {
	for ctx.Err() == nil {
		p.mu.Lock()
		if p.reset {
			p.reset = false
			p.curGen = p.gen
			p.mu.Unlock()
			p.talker.Reset()
			p.endSpurt(ctx)
			p.mu.Lock()
			if len(p.buf) == p.off {
				p.setIdleLocked()
			}
			p.mu.Unlock()
			continue
		}
		p.curGen = p.gen
		n := min(len(p.buf)-p.off, len(p.chunk))
		if n == 0 {
			flush := p.ended
			p.ended = false
			p.mu.Unlock()
			if !flush {
				return // more audio of the item is coming
			}
			if err := p.talker.Flush(p.emitFn); err != nil {
				p.writeFailed(err)
			}
			p.talker.Reset()
			p.endSpurt(ctx)
			p.mu.Lock()
			done := len(p.buf) == p.off && !p.reset
			if done {
				p.setIdleLocked()
			}
			p.mu.Unlock()
			if done {
				return
			}
			continue
		}
		copy(p.chunk, p.buf[p.off:p.off+n])
		p.off += n
		if p.off == len(p.buf) {
			p.buf, p.off = p.buf[:0], 0
		}
		p.mu.Unlock()
		if err := p.talker.WriteBytes(p.chunk[:n], p.emitFn); err != nil {
			p.writeFailed(err)
		}
	}
}

// writeFailed handles a failed Talker write: an interruption (nothing to
// do, stopNow set reset) or a sink failure, which drops the item's rest.
func (p *player) writeFailed(err error) {
	if errors.Is(err, errInterrupted) {
		return
	}
	p.mu.Lock()
	item := p.item
	p.buf, p.off = p.buf[:0], 0
	p.reset = true
	p.mu.Unlock()
	if !p.sinkErr {
		p.sinkErr = true
		p.log.Warn("realtime_playback_failed", "item_id", item, "err", err)
	}
}

func (p *player) setIdleLocked() {
	if p.busy {
		p.busy = false
		close(p.idle)
	}
}

func (p *player) endSpurt(ctx context.Context) {
	p.sinkErr = false
	if !p.inSpurt {
		return
	}
	p.inSpurt = false
	if p.stop != nil {
		if err := p.stop(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("realtime_stop_speaking_failed", "err", err)
		}
	}
}

// emit hands one Opus frame to the sink (called by the Talker on run).
func (p *player) emit(pkt []byte) error {
	p.sinkMu.Lock()
	defer p.sinkMu.Unlock()
	p.mu.Lock()
	if p.curGen != p.gen {
		p.mu.Unlock()
		return errInterrupted
	}
	ctx := p.ctx
	queued, requested := p.queuedAt, p.requestedAt
	p.queuedAt = time.Time{}
	p.mu.Unlock()
	if !queued.IsZero() {
		now := p.now()
		p.m.firstFrameLatency(now.Sub(queued).Seconds())
		if !requested.IsZero() {
			p.m.firstAudioLatency(now.Sub(requested).Seconds())
		}
	}
	if err := p.sink(ctx, pkt); err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	p.inSpurt = true
	p.mu.Lock()
	p.played++
	p.mu.Unlock()
	p.m.frameSent()
	return nil
}
