package voice

import "math/bits"

// seqTracker follows one SSRC's RTP sequence numbers (RFC 3550 A.1 style
// extension to 64 bits) with a 64-entry window of what arrived, so that
// duplicates are recognised, late (reordered) packets are still delivered,
// and loss is counted exactly once: when an unreceived number leaves the
// window, or when the stream ends.
type seqTracker struct {
	started bool
	max     uint64 // highest extended sequence number seen
	window  uint64 // bit i: max-i arrived
	span    uint64 // valid window positions (≤ 64): numbers since the first
}

// maxJump is the forward jump beyond which the sender is assumed to have
// restarted its sequence (about 20 s of 20 ms frames); no loss is counted.
const maxJump = 1000

type seqVerdict uint8

const (
	seqNew       seqVerdict = iota // in order (possibly after a gap)
	seqLate                        // older than max, not seen before: delivered
	seqDuplicate                   // seen before: dropped
	seqTooOld                      // older than the window: dropped
)

// update records seq and returns the verdict, the gap before it (numbers
// skipped since the previous highest, for marking loss to the consumer), and
// how many numbers were finally counted lost by this update.
func (t *seqTracker) update(seq uint16) (v seqVerdict, gap int, lost int) {
	if !t.started {
		t.started, t.max, t.window, t.span = true, uint64(seq)+1<<16, 1, 1
		return seqNew, 0, 0
	}
	delta := int64(int16(seq - uint16(t.max)))
	if delta > maxJump || delta < -maxJump {
		t.started = false
		v, _, _ = t.update(seq)
		return v, 0, 0
	}
	if delta > 0 {
		d := uint64(delta)
		if d >= 64 {
			lost = int(t.span) - bits.OnesCount64(t.window&spanMask(t.span)) + int(d-64)
			t.window = 0
		} else {
			lost = countLeaving(t.window, t.span, d)
			t.window <<= d
		}
		t.window |= 1
		t.max += d
		t.span = min(t.span+d, 64)
		return seqNew, int(d - 1), lost
	}
	back := uint64(-delta)
	if back >= 64 || back >= t.span {
		return seqTooOld, 0, 0
	}
	if t.window&(1<<back) != 0 {
		return seqDuplicate, 0, 0
	}
	t.window |= 1 << back
	return seqLate, 0, 0
}

// check classifies seq without recording it: seqDuplicate or seqTooOld for
// packets update would drop, seqNew otherwise. It lets the receive path skip
// E2EE work (and its replay errors) for duplicates.
func (t *seqTracker) check(seq uint16) seqVerdict {
	if !t.started {
		return seqNew
	}
	delta := int64(int16(seq - uint16(t.max)))
	if delta > 0 || delta < -maxJump {
		return seqNew
	}
	back := uint64(-delta)
	if back >= 64 || back >= t.span {
		return seqTooOld
	}
	if t.window&(1<<back) != 0 {
		return seqDuplicate
	}
	return seqLate
}

// countLeaving counts the unreceived valid positions that leave a window of
// the given span when it shifts by d (< 64).
func countLeaving(window, span, d uint64) int {
	n := 0
	for i := 64 - d; i < 64; i++ {
		if i < span && window&(1<<i) == 0 {
			n++
		}
	}
	return n
}

// flush counts the unreceived positions still in the window (stream end).
func (t *seqTracker) flush() int {
	if !t.started {
		return 0
	}
	n := int(t.span) - bits.OnesCount64(t.window&spanMask(t.span))
	t.window = spanMask(t.span)
	return n
}

func spanMask(n uint64) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}
