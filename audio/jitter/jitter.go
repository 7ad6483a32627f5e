// Package jitter reorders one speaker's incoming Opus packets by RTP
// sequence number within a short window, drops duplicates and late
// arrivals, and reports gaps as losses so the decoder can conceal them.
//
// The buffer has no clock. A missing packet is declared lost once packets
// Window ahead of it have arrived (with Discord's 20 ms frames the default
// 60 ms window is three packets), or when the owner calls Drain because the
// stream went quiet. Memory is fixed at New: Capacity payload slots of
// MaxPayload bytes; Push copies the payload into a slot.
//
// Sequence numbers are compared modulo 2^16 (RFC 3550 §A.1), so wraparound
// at 65535 is seamless. A new SSRC, or a jump that cannot be reordering
// (more than MaxJump packets ahead, or three packets in a row far behind),
// restarts the stream: the next output has Restart set and the owner resets
// its decoder.
//
// A Buffer is not safe for concurrent use; one goroutine owns a speaker.
package jitter

import (
	"fmt"
	"time"
)

// Packet is one received RTP payload of a speaker's stream.
type Packet struct {
	SSRC      uint32
	Seq       uint16
	Timestamp uint32 // RTP timestamp, 48 kHz clock for Opus
	Payload   []byte // Opus packet; Push copies it
}

// Config sizes a Buffer. Zero fields take the defaults.
type Config struct {
	// Window is how long a gap may wait for a reordered packet before it is
	// declared lost, measured in packets of FrameDuration. Default 60 ms.
	Window time.Duration
	// FrameDuration is the nominal packet duration. Default 20 ms.
	FrameDuration time.Duration
	// Capacity is the number of packets held (a power of two, more than
	// the window's packets). Default 16.
	Capacity int
	// MaxPayload is the largest payload accepted, in bytes. Default 1500.
	MaxPayload int
	// MaxJump is the largest forward sequence jump treated as loss rather
	// than a stream restart. Default 1000 packets (20 s).
	MaxJump int
}

func (c Config) withDefaults() Config {
	if c.Window == 0 {
		c.Window = 60 * time.Millisecond
	}
	if c.FrameDuration == 0 {
		c.FrameDuration = 20 * time.Millisecond
	}
	if c.Capacity == 0 {
		c.Capacity = 16
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = 1500
	}
	if c.MaxJump == 0 {
		c.MaxJump = 1000
	}
	return c
}

// PushResult says what Push did with a packet.
type PushResult int

// Push results.
const (
	PushUnknown   PushResult = iota
	PushAccepted             // held for output
	PushRestarted            // accepted as the first packet of a new stream
	PushDuplicate            // same sequence number already held: dropped
	PushLate                 // already output or declared lost: dropped
	PushInvalid              // empty or larger than MaxPayload: dropped
)

// String returns a lower-case name for metrics labels.
func (r PushResult) String() string {
	switch r {
	case PushAccepted:
		return "accepted"
	case PushRestarted:
		return "restarted"
	case PushDuplicate:
		return "duplicate"
	case PushLate:
		return "late"
	case PushInvalid:
		return "invalid"
	default:
		return "unknown"
	}
}

// Kind is the kind of an Output.
type Kind int

// Output kinds.
const (
	KindUnknown Kind = iota
	KindPacket       // a packet, in sequence order
	KindLost         // Lost consecutive packets that will not arrive
)

// String returns "packet", "lost" or "unknown".
func (k Kind) String() string {
	switch k {
	case KindPacket:
		return "packet"
	case KindLost:
		return "lost"
	default:
		return "unknown"
	}
}

// Output is the next item of the reordered stream.
type Output struct {
	Kind Kind
	// Seq is the packet's sequence number, or the first lost one.
	Seq uint16
	// Timestamp is the packet's RTP timestamp, or for a loss the estimate
	// previous timestamp + one frame.
	Timestamp uint32
	// Lost is the number of consecutive lost packets (KindLost).
	Lost int
	// Payload is the packet (KindPacket). For KindLost it is the packet
	// that follows the loss when already held (for Opus FEC), else nil.
	// Either way it is owned by the Buffer and valid until the next Push.
	Payload []byte
	// Restart is set on the first output of a new stream: reset the decoder.
	Restart bool
}

// Stats counts what the buffer has seen since New.
type Stats struct {
	Accepted, Duplicate, Late, Invalid uint64
	Lost                               uint64 // packets declared lost
	Restarts                           uint64 // stream restarts (incl. the first packet)
	Overflow                           uint64 // held packets discarded by a long forward jump
}

type slot struct {
	present bool
	seq     uint16
	ts      uint32
	n       int
	data    []byte
}

// Buffer is one speaker's reorder buffer.
type Buffer struct {
	cfg    Config
	window int // packets
	mask   uint16
	slots  []slot
	stats  Stats

	started     bool
	ssrc        uint32
	next        uint16 // next sequence number to output
	lastTS      uint32 // timestamp of the last output
	frameTS     uint32 // RTP ticks per FrameDuration
	held        int
	ahead       int    // largest held distance from next, -1 when empty
	pendingLoss int    // loss to report before anything else (after a jump)
	pendingSeq  uint16 // its first sequence number
	pendingTS   uint32 // and estimated timestamp
	restart     bool
	behind      int // consecutive far-behind packets
}

// New returns an empty Buffer.
func New(cfg Config) (*Buffer, error) {
	cfg = cfg.withDefaults()
	if cfg.FrameDuration <= 0 || cfg.Window < 0 {
		return nil, fmt.Errorf("jitter: new: window %v, frame %v", cfg.Window, cfg.FrameDuration)
	}
	window := int((cfg.Window + cfg.FrameDuration - 1) / cfg.FrameDuration)
	if cfg.Capacity&(cfg.Capacity-1) != 0 || cfg.Capacity <= window || cfg.Capacity > 1024 {
		return nil, fmt.Errorf("jitter: new: capacity %d must be a power of two in (%d, 1024]", cfg.Capacity, window)
	}
	if cfg.MaxPayload <= 0 || cfg.MaxJump < cfg.Capacity || cfg.MaxJump > 30000 {
		return nil, fmt.Errorf("jitter: new: max payload %d, max jump %d", cfg.MaxPayload, cfg.MaxJump)
	}
	b := &Buffer{cfg: cfg, window: window, mask: uint16(cfg.Capacity - 1), slots: make([]slot, cfg.Capacity), ahead: -1}
	b.frameTS = uint32(cfg.FrameDuration * 48000 / time.Second)
	store := make([]byte, cfg.Capacity*cfg.MaxPayload)
	for i := range b.slots {
		b.slots[i].data = store[i*cfg.MaxPayload : (i+1)*cfg.MaxPayload : (i+1)*cfg.MaxPayload]
	}
	return b, nil
}

// Stats returns the counters.
func (b *Buffer) Stats() Stats { return b.stats }

// Len returns the number of packets held.
func (b *Buffer) Len() int { return b.held }

// Reset forgets the stream; the next packet starts a new one.
func (b *Buffer) Reset() {
	for i := range b.slots {
		b.slots[i].present = false
	}
	b.started, b.held, b.ahead, b.pendingLoss, b.behind = false, 0, -1, 0, 0
}

// Push offers a packet. It copies the payload and never blocks or
// allocates. Call Pop until it returns false after each Push.
func (b *Buffer) Push(p Packet) PushResult {
	if len(p.Payload) == 0 || len(p.Payload) > b.cfg.MaxPayload {
		b.stats.Invalid++
		return PushInvalid
	}
	res := PushAccepted
	if !b.started || p.SSRC != b.ssrc {
		b.restartAt(p)
		res = PushRestarted
	}
	d := int(int16(p.Seq - b.next))
	switch {
	case d < 0:
		if d < -b.cfg.Capacity*4 {
			b.behind++
			if b.behind >= 3 { // a new sequence, not stragglers
				b.restartAt(p)
				res, d = PushRestarted, 0
				break
			}
		} else {
			b.behind = 0 // an ordinary straggler breaks a run of far-behind ones
		}
		if d < 0 {
			b.stats.Late++
			return PushLate
		}
	case d > b.cfg.MaxJump:
		b.restartAt(p)
		res, d = PushRestarted, 0
	case d >= b.cfg.Capacity:
		// A burst loss longer than the buffer: skip to the packet that
		// still fits, reporting everything before it as lost.
		skip := d - (b.cfg.Capacity - 1)
		for i := range b.slots {
			s := &b.slots[i]
			if s.present && int(int16(s.seq-b.next)) < skip {
				s.present = false
				b.held--
				b.stats.Overflow++
			}
		}
		if b.pendingLoss == 0 {
			b.pendingSeq, b.pendingTS = b.next, b.lastTS+b.frameTS
		}
		b.pendingLoss += skip
		b.stats.Lost += uint64(skip)
		b.next += uint16(skip)
		b.lastTS += uint32(skip) * b.frameTS
		d -= skip
		b.ahead = -1
		for i := range b.slots {
			if s := &b.slots[i]; s.present {
				b.ahead = max(b.ahead, int(int16(s.seq-b.next)))
			}
		}
	}
	b.behind = 0
	s := &b.slots[p.Seq&b.mask]
	if s.present {
		if s.seq == p.Seq {
			b.stats.Duplicate++
			return PushDuplicate
		}
		// Unreachable: held packets lie within Capacity of next.
		b.held--
	}
	s.present, s.seq, s.ts, s.n = true, p.Seq, p.Timestamp, copy(s.data, p.Payload)
	b.held++
	b.ahead = max(b.ahead, d)
	if res == PushRestarted {
		b.stats.Restarts++
	} else {
		b.stats.Accepted++
	}
	return res
}

func (b *Buffer) restartAt(p Packet) {
	b.Reset()
	b.started, b.ssrc, b.next, b.restart = true, p.SSRC, p.Seq, true
	b.lastTS = p.Timestamp - b.frameTS
}

// Pop returns the next output if it is ready: the next packet in sequence,
// or a loss once the window has passed it.
func (b *Buffer) Pop() (Output, bool) { return b.pop(b.window) }

// Drain is Pop without waiting for the window: held packets come out in
// order with losses reported for the gaps. Call it when no packet has
// arrived for the window's duration (the speaker paused or left).
func (b *Buffer) Drain() (Output, bool) { return b.pop(0) }

func (b *Buffer) pop(window int) (Output, bool) {
	if b.pendingLoss > 0 { // next already points past it
		o := Output{Kind: KindLost, Seq: b.pendingSeq, Timestamp: b.pendingTS, Lost: b.pendingLoss, Restart: b.restart}
		if s := &b.slots[b.next&b.mask]; s.present && s.seq == b.next {
			o.Payload = s.data[:s.n]
		}
		b.pendingLoss, b.restart = 0, false
		return o, true
	}
	if b.held == 0 {
		return Output{}, false
	}
	if s := &b.slots[b.next&b.mask]; s.present && s.seq == b.next {
		o := Output{Kind: KindPacket, Seq: s.seq, Timestamp: s.ts, Payload: s.data[:s.n], Restart: b.restart}
		s.present = false
		b.held--
		b.restart = false
		b.next++
		b.lastTS = s.ts
		b.ahead--
		return o, true
	}
	if b.ahead < window {
		return Output{}, false
	}
	n := 1
	for n < b.ahead && !b.present(b.next+uint16(n)) {
		n++
	}
	b.stats.Lost += uint64(n)
	return b.loss(n), true
}

func (b *Buffer) present(seq uint16) bool {
	s := &b.slots[seq&b.mask]
	return s.present && s.seq == seq
}

// loss reports n lost packets starting at next and advances past them.
func (b *Buffer) loss(n int) Output {
	o := Output{Kind: KindLost, Seq: b.next, Timestamp: b.lastTS + b.frameTS, Lost: n, Restart: b.restart}
	b.restart = false
	b.next += uint16(n)
	b.lastTS += uint32(n) * b.frameTS
	b.ahead -= n
	if s := &b.slots[b.next&b.mask]; s.present && s.seq == b.next {
		o.Payload = s.data[:s.n]
	}
	return o
}
