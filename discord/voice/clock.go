package voice

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"
)

// SendClock sends the frames of many connections on one clock: a timer wheel
// whose buckets are Resolution wide, one goroutine, one wake-up per bucket
// that has frames due, and with SharedSocket one sendmmsg per bucket for
// all of its connections. Connections configured with a SendClock
// (Config.Clock) queue their frames in SendOpus (encoded and, with DAVE,
// end-to-end encrypted ahead of their slot, up to Lookahead frames) and the
// clock seals and sends each when its slot comes.
//
// A talk spurt starts on the clock's next wake-up (SendOpus kicks it, so the
// first frame goes out at once), and its later slots fall on the
// connection's bucket: the first interval is up to Resolution longer than
// 20 ms, after that the grid is exact. The clock's goroutine stops on Close;
// close the connections first.
type SendClock struct {
	opts ClockOptions
	log  *slog.Logger
	nb   int64 // buckets per interval
	res  time.Duration
	t0   time.Time // tick 0 (monotonic)
	mux  *udpMux   // SharedSocket: the connections' one socket

	mu    sync.Mutex // guards kicks
	kicks []kick
	wake  chan struct{} // capacity 1

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// owned by the run goroutine
	wheel   [][]*Conn
	tick    int64 // next tick to process
	early   int64 // the last tick whose bucket was served early (within Lead)
	now     time.Time
	started []kick // the kicks taken by a wake-up
	batch   []ipv4.Message
	pending []*Conn // connections with a packet in batch

	stats clockCounters
}

// ClockOptions configures a SendClock.
type ClockOptions struct {
	// Resolution is the width of a timer-wheel bucket [1 ms]: the most a
	// talk spurt's first interval exceeds 20 ms, and the wake-up spacing
	// when every bucket has a connection. It must divide 20 ms.
	Resolution time.Duration
	// Lead is how long before its slot a queued frame may leave [2 ms]:
	// the clock wakes that much ahead of a bucket, so a wake-up the
	// scheduler delays by up to Lead is still on time. A frame not queued
	// by then leaves at its slot. Negative: none. At most 5 ms.
	Lead time.Duration
	// Lookahead is how many frames a connection may queue ahead of its
	// slot [10, 200 ms]. SendOpus blocks while the queue is full and
	// wakes again when it is half empty.
	Lookahead int
	// SharedSocket makes every IPv4 connection of the clock send and
	// receive through one UDP socket (bound to LocalAddr), so a bucket's
	// frames leave in one sendmmsg. The voice servers then see all of the
	// process's connections from one address and port, which Discord does
	// not document as supported; off, each connection keeps its own
	// socket (one send syscall per frame, still one wake-up per bucket).
	SharedSocket bool
	// LocalAddr is the shared socket's address [0.0.0.0:0].
	LocalAddr string
	// Logger receives clock-level events (never per frame). Nil discards.
	Logger *slog.Logger
}

// ClockStats counts what a SendClock did since it started.
type ClockStats struct {
	// Wakeups of the clock goroutine (timer or kick).
	Wakeups uint64
	// Writes are send system calls: one sendmmsg per bucket with
	// SharedSocket, else one per frame.
	Writes uint64
	// Frames sent, and those handed to the kernel more than 2 ms and 5 ms
	// after their slot (a batch: when its sendmmsg starts).
	Frames, Late2ms, Late5ms uint64
	// Skipped slots: due with no frame queued (an underrun), or missed by
	// a whole interval or more (a stall).
	Skipped uint64
	// Dropped frames: queued under a context that ended (barge-in).
	Dropped uint64
	// MaxBatch is the most packets one write carried.
	MaxBatch uint64
}

type clockCounters struct {
	wakeups, writes, frames, late2, late5, skipped, dropped, maxBatch atomic.Uint64
}

type kick struct {
	c     *Conn
	delay bool // the connection's first spurt: its first slot is one interval later
}

const clockMaxBatch = 1024 // sendmmsg's UIO_MAXIOV

// maxLead bounds ClockOptions.Lead: a receiver's jitter buffer takes a
// frame a few milliseconds early as it takes network jitter.
const maxLead = 5 * time.Millisecond

// NewSendClock starts a send clock.
func NewSendClock(opts ClockOptions) (*SendClock, error) {
	k, err := newSendClock(opts)
	if err != nil {
		return nil, err
	}
	go k.run()
	return k, nil
}

// newSendClock builds a clock without starting its goroutine (tests drive
// its slots directly).
func newSendClock(opts ClockOptions) (*SendClock, error) {
	if opts.Resolution == 0 {
		opts.Resolution = time.Millisecond
	}
	if opts.Resolution <= 0 || frameDuration%opts.Resolution != 0 {
		return nil, fmt.Errorf("voice: send clock: resolution %v does not divide %v", opts.Resolution, frameDuration)
	}
	switch {
	case opts.Lead == 0:
		opts.Lead = 2 * time.Millisecond
	case opts.Lead < 0:
		opts.Lead = 0
	case opts.Lead > maxLead:
		return nil, fmt.Errorf("voice: send clock: lead %v over %v", opts.Lead, maxLead)
	}
	if opts.Lookahead <= 0 {
		opts.Lookahead = 10
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	k := &SendClock{
		opts: opts, log: opts.Logger, res: opts.Resolution, nb: int64(frameDuration / opts.Resolution),
		t0: time.Now(), wake: make(chan struct{}, 1), done: make(chan struct{}), early: -1,
	}
	k.wheel = make([][]*Conn, k.nb)
	k.ctx, k.cancel = context.WithCancel(context.Background())
	if opts.SharedSocket {
		addr := opts.LocalAddr
		if addr == "" {
			addr = "0.0.0.0:0"
		}
		m, err := newUDPMux(addr)
		if err != nil {
			return nil, fmt.Errorf("voice: send clock: %w", err)
		}
		k.mux = m
	}
	return k, nil
}

// Close stops the clock (and the shared socket) and waits for its
// goroutines. Frames still queued are not sent.
func (k *SendClock) Close() error {
	k.cancel()
	<-k.done
	if k.mux != nil {
		k.mux.close()
	}
	return nil
}

// Stats returns the clock's counters.
func (k *SendClock) Stats() ClockStats {
	s := &k.stats
	return ClockStats{Wakeups: s.wakeups.Load(), Writes: s.writes.Load(), Frames: s.frames.Load(),
		Late2ms: s.late2.Load(), Late5ms: s.late5.Load(), Skipped: s.skipped.Load(), Dropped: s.dropped.Load(),
		MaxBatch: s.maxBatch.Load()}
}

// LocalAddr returns the shared socket's address, or nil without one.
func (k *SendClock) LocalAddr() net.Addr {
	if k.mux == nil {
		return nil
	}
	return k.mux.conn.LocalAddr()
}

// kick asks the clock to schedule c (its queue has a frame and it is not on
// the wheel).
func (k *SendClock) kick(c *Conn, delay bool) {
	k.mu.Lock()
	k.kicks = append(k.kicks, kick{c, delay})
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

func (k *SendClock) tickTime(t int64) time.Time { return k.t0.Add(time.Duration(t) * k.res) }

// ceilTick is the first tick at or after at.
func (k *SendClock) ceilTick(at time.Time) int64 {
	d := at.Sub(k.t0)
	return int64((d + k.res - 1) / k.res)
}

func (k *SendClock) run() {
	defer close(k.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	k.tick = k.ceilTick(time.Now())
	k.early = k.tick - 1
	for {
		if at, ok := k.nextWake(); ok {
			timer.Reset(time.Until(at))
			select {
			case <-timer.C:
			case <-k.wake:
				timer.Stop()
			case <-k.ctx.Done():
				return
			}
		} else {
			select {
			case <-k.wake:
			case <-k.ctx.Done():
				return
			}
		}
		k.serve(time.Now())
	}
}

// serve is one wake-up of the clock at now: the kicked connections start,
// every bucket whose tick has come is served, then the frames due within
// Lead that are already queued, and the batch is written.
func (k *SendClock) serve(now time.Time) {
	k.stats.wakeups.Add(1)
	k.now = now
	nowTick := int64(k.now.Sub(k.t0) / k.res)
	k.mu.Lock()
	k.started = append(k.started[:0], k.kicks...)
	clear(k.kicks)
	k.kicks = k.kicks[:0]
	k.mu.Unlock()
	for _, kk := range k.started {
		k.start(kk, nowTick)
	}
	clear(k.started)
	// Every bucket whose tick has come, at most one round of the wheel
	// (after a longer stall each connection skips its missed slots).
	from := max(k.tick, nowTick-k.nb+1)
	for t := from; t <= nowTick; t++ {
		k.bucket(t, false)
	}
	k.tick = nowTick + 1
	// The buckets due within Lead: their queued frames leave now.
	last := int64(k.now.Add(k.opts.Lead).Sub(k.t0) / k.res)
	for t := max(k.tick, k.early+1); t <= last; t++ {
		k.bucket(t, true)
	}
	k.early = max(k.early, last)
	k.flush()
}

// nextWake returns when the clock must wake next: Lead before the first
// bucket with connections that has not been served early, or at the tick
// of one that was, for the connections whose frame was not queued then.
func (k *SendClock) nextWake() (time.Time, bool) {
	var at time.Time
	// Two rounds: a bucket served early is next due a round later.
	for i := range 2 * k.nb {
		t := k.tick + i
		b := k.wheel[t%k.nb]
		if len(b) == 0 {
			continue
		}
		var w time.Time
		switch {
		case t > k.early:
			w = k.tickTime(t).Add(-k.opts.Lead)
		case hasDue(b, t):
			w = k.tickTime(t)
		default:
			continue
		}
		if at.IsZero() || w.Before(at) {
			at = w
		}
	}
	return at, !at.IsZero()
}

// hasDue reports whether a connection of bucket b is due at tick t.
func hasDue(b []*Conn, t int64) bool {
	for _, c := range b {
		if c.clk.due <= t {
			return true
		}
	}
	return false
}

// start puts a kicked connection on the wheel; without delay its first
// frame goes out in this wake-up.
func (k *SendClock) start(kk kick, nowTick int64) {
	c := kk.c
	cs := &c.clk
	if cs.onWheel || c.ctx.Err() != nil {
		return
	}
	if !cs.lastSlot.IsZero() {
		// Keep the RTP clock running across the pause.
		c.rtpTS += uint32(k.now.Sub(cs.lastSlot)/frameDuration) * samplesPerFrame
	}
	cs.onWheel, cs.idle = true, 0
	due := k.ceilTick(k.now.Add(frameDuration))
	if kk.delay {
		// The very first Speaking maps our SSRC on the server: one slot
		// on the WebSocket before the first RTP packet races it.
		cs.due = due
	} else {
		k.slot(c, nowTick, 0)
		cs.due = due
	}
	k.wheel[cs.due%k.nb] = append(k.wheel[cs.due%k.nb], c)
}

// bucket serves the connections due at tick t; early (before t), only
// those with a frame queued (the others are served at t).
func (k *SendClock) bucket(t int64, early bool) {
	b := k.wheel[t%k.nb]
	w := 0
	for _, c := range b {
		cs := &c.clk
		if cs.due > t || early && c.q.len() == 0 {
			b[w] = c
			w++
			continue
		}
		skipped := int((t - cs.due) / k.nb)
		if !k.slot(c, t, skipped) {
			cs.onWheel = false
			continue
		}
		cs.due = t + k.nb
		b[w] = c
		w++
	}
	clear(b[w:])
	k.wheel[t%k.nb] = b[:w]
}

// idleSlots is how many empty slots in a row take a connection off the
// wheel while it is still speaking (the next SendOpus kicks it back).
const idleSlots = 50

// slot sends c's next frame, if any, for the slot at tick t; it reports
// whether c stays on the wheel.
func (k *SendClock) slot(c *Conn, t int64, skipped int) bool {
	cs := &c.clk
	if c.ctx.Err() != nil {
		c.q.leave()
		return false
	}
	cs.lastSlot = k.tickTime(t)
	if k.now.Sub(cs.lastSlot) > frameDuration {
		cs.lastSlot = k.now
	}
	c.rtpTS += uint32(skipped) * samplesPerFrame
	f, dropped, keep := c.q.pop()
	if dropped > 0 {
		k.stats.dropped.Add(uint64(dropped))
	}
	if f == nil {
		if !keep {
			return false // the spurt ended
		}
		c.rtpTS += samplesPerFrame
		k.stats.skipped.Add(uint64(skipped) + 1)
		c.m.skippedSlots(skipped + 1)
		cs.idle++
		return cs.idle < idleSlots || !c.q.leaveIfEmpty()
	}
	cs.idle = 0
	if skipped > 0 {
		k.stats.skipped.Add(uint64(skipped))
	}
	if cs.batched {
		// A second slot of c in one wake-up (a late slot, then the next within Lead, after a
		// stall): its packet in the batch lives in c's one seal buffer, which the next seal
		// overwrites. It leaves first.
		k.flush()
	}
	pkt, err := c.seal(f.data())
	c.q.release()
	if err != nil {
		c.log.Warn("voice: rtp header", "err", err)
		return true
	}
	if k.mux != nil && c.shared {
		cs.bufs[0], cs.dueAt, cs.skipped, cs.batched = pkt, k.tickTime(t), skipped, true
		k.batch = append(k.batch, ipv4.Message{Buffers: cs.bufs[:], Addr: c.serverUDP})
		k.pending = append(k.pending, c)
		if len(k.batch) == clockMaxBatch {
			k.flush()
		}
		return true
	}
	k.sent(c, time.Since(k.tickTime(t)), skipped)
	k.stats.writes.Add(1)
	k.stats.maxBatch.CompareAndSwap(0, 1)
	if _, err := c.udp.Write(pkt); err != nil && c.ctx.Err() == nil {
		c.m.sendFailed()
	}
	return true
}

// sent counts a frame handed to the kernel late after its slot.
func (k *SendClock) sent(c *Conn, late time.Duration, skipped int) {
	k.stats.frames.Add(1)
	if late > 2*time.Millisecond {
		k.stats.late2.Add(1)
	}
	if late > 5*time.Millisecond {
		k.stats.late5.Add(1)
	}
	c.m.sent(skipped, late)
}

// flush writes the batch of the shared socket.
func (k *SendClock) flush() {
	if len(k.batch) == 0 {
		return
	}
	now := time.Now()
	for _, c := range k.pending {
		c.clk.batched = false
		k.sent(c, now.Sub(c.clk.dueAt), c.clk.skipped)
	}
	ms := k.batch
	for len(ms) > 0 {
		n, err := k.mux.pc.WriteBatch(ms, 0)
		k.stats.writes.Add(1)
		if err != nil {
			// The whole rest is lost; count it on its connections.
			for _, c := range k.pending[len(k.batch)-len(ms):] {
				c.m.sendFailed()
			}
			break
		}
		ms = ms[n:]
	}
	if n := uint64(len(k.batch)); n > k.stats.maxBatch.Load() {
		k.stats.maxBatch.Store(n)
	}
	clear(k.batch)
	clear(k.pending)
	k.batch, k.pending = k.batch[:0], k.pending[:0]
}
