package voicesim

import "errors"

// seqBuffer numbers and keeps the server messages of one voice session for
// buffered resume (voice gateway v8,
// https://discord.com/developers/docs/topics/voice-connections#buffered-resume).
//
// Sequence numbers are 16 bits on the wire (binary frames carry a u16) and
// wrap; internally they are counted in 64 bits so that ordering is never
// ambiguous. JSON and binary messages share one counter, starting at 1.
// The buffer drops entries the client acknowledged (heartbeat seq_ack) and,
// past its capacity, the oldest entries; a resume that needs a dropped
// entry fails.
//
// seqBuffer is not safe for concurrent use; the Server's mutex guards it.
type seqBuffer struct {
	entries []seqEntry // oldest first, consecutive numbers
	next    uint64     // number of the next message; starts at 1
	acked   uint64     // every message <= acked is known to be delivered
	cap     int
}

type seqEntry struct {
	n     uint64
	frame outFrame
}

// outFrame is one WebSocket message ready to write, or a batch of them
// (a resume replay, which may be longer than the send queue).
type outFrame struct {
	binary bool
	data   []byte
	batch  []outFrame
}

var errResumeGap = errors.New("resume: missed messages no longer buffered")

func newSeqBuffer(capacity int) seqBuffer {
	return seqBuffer{next: 1, cap: capacity}
}

// wire returns the on-the-wire sequence number of internal number n.
func wire(n uint64) uint16 { return uint16(n) }

// add numbers a message built by build(seq) and buffers it.
func (b *seqBuffer) add(build func(seq uint16) outFrame) outFrame {
	n := b.next
	b.next++
	f := build(wire(n))
	b.entries = append(b.entries, seqEntry{n: n, frame: f})
	if len(b.entries) > b.cap {
		drop := len(b.entries) - b.cap
		b.entries = append(b.entries[:0], b.entries[drop:]...)
	}
	return f
}

// resolve maps a client's seq_ack (a wire value, or -1/absent for "none")
// to an internal number, picking the most recent message with that wire
// value that was sent. ok is false if seq_ack names no message sent.
func (b *seqBuffer) resolve(seqAck int) (uint64, bool) {
	last := b.next - 1
	if seqAck < 0 || seqAck > 0xffff {
		return 0, seqAck < 0
	}
	// Walk back from the newest number to the most recent with this wire value.
	d := uint64(uint16(wire(last) - uint16(seqAck)))
	if d > last {
		return 0, false
	}
	return last - d, true
}

// ack records a heartbeat's seq_ack and drops delivered entries.
func (b *seqBuffer) ack(seqAck int) {
	n, ok := b.resolve(seqAck)
	if !ok || n <= b.acked {
		return
	}
	b.acked = n
	i := 0
	for i < len(b.entries) && b.entries[i].n <= n {
		i++
	}
	b.entries = append(b.entries[:0], b.entries[i:]...)
}

// since returns the frames after seqAck for replay on resume, in order.
func (b *seqBuffer) since(seqAck int) ([]outFrame, error) {
	n, ok := b.resolve(seqAck)
	if !ok {
		return nil, errResumeGap
	}
	first := n + 1
	if first < b.next {
		if len(b.entries) == 0 || b.entries[0].n > first {
			return nil, errResumeGap
		}
	}
	var out []outFrame
	for _, e := range b.entries {
		if e.n >= first {
			out = append(out, e.frame)
		}
	}
	return out, nil
}
