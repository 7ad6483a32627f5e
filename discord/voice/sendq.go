package voice

import (
	"context"
	"errors"
	"sync"
	"time"
)

// outQueue holds a connection's frames between SendOpus (the producer, which
// encodes and end-to-end encrypts ahead of the slot) and the SendClock
// (which seals and sends each in its slot). Frames are copied into fixed
// storage: no allocation per frame.
type outQueue struct {
	mu       sync.Mutex
	frames   []outFrame // ring
	head, n  int
	onWheel  bool          // the clock serves this queue (set by a kick, cleared by the clock)
	stopping bool          // StopSpeaking waits for the queue to drain
	low      int           // space is signalled when n drops to low
	space    chan struct{} // capacity 1: room in the queue
	drained  chan struct{} // capacity 1: stopping and empty
	popped   *outFrame     // the frame the clock is sealing (until release)
	dropped  int           // discarded since the clock last looked
	silences int           // queued frames that are a spurt's closing silence, not audio
}

// outFrame is one queued frame.
type outFrame struct {
	buf     [maxQueuedFrame]byte
	n       int
	silence bool // a spurt's closing silence frame (StopSpeaking), not audio
}

var errFrameTooLarge = errors.New("voice: send: frame larger than 1400 bytes")

// maxQueuedFrame bounds a queued frame: an Opus frame is at most 1275 bytes,
// DAVE adds its supplemental data (tag, nonce, ranges, magic).
const maxQueuedFrame = 1400

func (f *outFrame) data() []byte { return f.buf[:f.n] }

func (q *outQueue) init(size int) {
	q.frames = make([]outFrame, size)
	q.low = size / 2
	q.space = make(chan struct{}, 1)
	q.drained = make(chan struct{}, 1)
}

// push queues b (silence: a spurt's closing silence frame), waiting while the queue is full.
// It reports whether the caller must kick the clock (the queue was not being served).
func (q *outQueue) push(ctx context.Context, connDone <-chan struct{}, b []byte, silence bool) (kick bool, err error) {
	if len(b) > maxQueuedFrame {
		return false, errFrameTooLarge
	}
	for {
		q.mu.Lock()
		room := len(q.frames)
		if q.popped != nil {
			room-- // the clock is sealing the frame in the last free slot
		}
		if q.n < room {
			break
		}
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-ctx.Done():
			return false, ctx.Err()
		case <-connDone:
			return false, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			// Room came with the end of the producer's context (a
			// barge-in cancels, then Interrupt empties the queue): the
			// frame must not be heard.
			return false, err
		}
	}
	if err := ctx.Err(); err != nil {
		// Checked under the lock that Interrupt takes: a producer whose context ended (a
		// barge-in cancels, then Interrupt empties the queue) queues nothing after the discard.
		q.mu.Unlock()
		return false, err
	}
	f := &q.frames[(q.head+q.n)%len(q.frames)]
	f.n = copy(f.buf[:], b)
	f.silence = silence
	q.n++
	if silence {
		q.silences++
	}
	kick = !q.onWheel
	q.onWheel = true
	q.mu.Unlock()
	return kick, nil
}

// stop marks the end of a spurt: once the queue is empty the clock takes it
// off the wheel and signals drained. It reports whether the caller must
// kick the clock.
func (q *outQueue) stop() (kick bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	select { // a stale signal from an earlier spurt
	case <-q.drained:
	default:
	}
	q.stopping = true
	kick = !q.onWheel
	q.onWheel = true
	return kick
}

// pop takes the next frame, which stays valid until release, and the
// count of frames discard dropped since the last pop. With no frame, keep
// says whether the connection stays on the wheel (still speaking); a
// drained queue of a stopping spurt leaves it and signals drained.
func (q *outQueue) pop() (f *outFrame, dropped int, keep bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	dropped, q.dropped = q.dropped, 0
	if q.n > 0 {
		f = &q.frames[q.head]
		q.head = (q.head + 1) % len(q.frames)
		q.n--
		if f.silence {
			q.silences--
		}
		if q.n == q.low {
			select {
			case q.space <- struct{}{}:
			default:
			}
		}
		q.popped = f
		return f, dropped, true
	}
	select {
	case q.space <- struct{}{}:
	default:
	}
	if q.stopping {
		q.stopping, q.onWheel = false, false
		select {
		case q.drained <- struct{}{}:
		default:
		}
		return nil, dropped, false
	}
	return nil, dropped, true
}

// release ends the clock's use of the popped frame.
func (q *outQueue) release() {
	q.mu.Lock()
	q.popped = nil
	q.mu.Unlock()
	select {
	case q.space <- struct{}{}:
	default:
	}
}

// len returns how many frames wait for their slot.
func (q *outQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// audio returns how many of the frames waiting for their slot are audio (not a spurt's
// closing silence).
func (q *outQueue) audio() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n - q.silences
}

// leave takes the queue off the wheel (the connection ended).
func (q *outQueue) leave() {
	q.mu.Lock()
	q.onWheel = false
	q.mu.Unlock()
}

// leaveIfEmpty takes an idle queue off the wheel unless a frame arrived
// meanwhile (the producer then did not kick: the clock must stay).
func (q *outQueue) leaveIfEmpty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n > 0 || q.stopping {
		return false
	}
	q.onWheel = false
	return true
}

// discard drops every queued frame (a barge-in: nothing more of the
// reply may be heard) and returns how many were audio (the rest are a
// spurt's closing silence).
func (q *outQueue) discard() (audio int) {
	q.mu.Lock()
	n := q.n
	audio = n - q.silences
	// The head stays: the frame the clock may be sealing is the one just
	// behind it, and push never writes there while it is popped (its room
	// counts one slot fewer). Moving the head past the dropped frames would
	// put that slot in the producer's way.
	q.n, q.silences = 0, 0
	q.dropped += n
	q.mu.Unlock()
	select {
	case q.space <- struct{}{}:
	default:
	}
	return audio
}

// clockState is a connection's place on its SendClock's wheel, owned by the
// clock goroutine.
type clockState struct {
	onWheel  bool
	due      int64     // tick of the next slot
	idle     int       // empty slots in a row
	lastSlot time.Time // the last slot served
	bufs     [1][]byte // the batch entry's buffers
	dueAt    time.Time // the batched frame's slot
	skipped  int       // and the slots skipped before it
	batched  bool      // bufs[0] is in the clock's batch, not yet written
}
