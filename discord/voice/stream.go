package voice

import (
	"sync"
)

// Frame is one received Opus frame from one speaker.
type Frame struct {
	UserID    string
	SSRC      uint32
	Sequence  uint16 // RTP sequence number
	Timestamp uint32 // RTP timestamp (48 kHz)
	// Lost is the number of sequence numbers skipped just before this frame
	// (packets not, or not yet, received): the consumer's cue for loss
	// concealment. A frame that arrives late (reordered) after its gap was
	// reported has Lost 0 and a Sequence below its predecessor's.
	Lost int
	// Opus is the decrypted Opus frame. It aliases a buffer of the stream
	// and is valid until the next receive from Stream.Frames; use Clone to
	// keep it longer.
	Opus []byte
}

// Clone returns a copy of f whose Opus the caller owns.
func (f Frame) Clone() Frame {
	f.Opus = append([]byte(nil), f.Opus...)
	return f
}

// Stream is one speaker's frames, in arrival order, from one SSRC. It ends
// (Frames is closed) when the user disconnects, the SSRC is reassigned, or the
// connection closes.
type Stream struct {
	UserID string
	SSRC   uint32

	frames chan Frame
	done   chan struct{}

	// Owned by the connection's UDP read goroutine.
	ring  [][]byte
	pos   int
	track seqTracker

	mu     sync.Mutex // guards following
	closed bool
}

const maxFrame = 1500

func newStream(userID string, ssrc uint32, depth int) *Stream {
	s := &Stream{
		UserID: userID,
		SSRC:   ssrc,
		frames: make(chan Frame, depth),
		done:   make(chan struct{}),
		ring:   make([][]byte, depth+2),
	}
	// The ring holds depth+2 buffers: when slot i is rewritten, the frame it
	// held was sent depth+2 frames earlier and, because the channel had room,
	// the consumer has already received a later frame, so the documented
	// lifetime ("until the next receive") holds.
	backing := make([]byte, maxFrame*len(s.ring))
	for i := range s.ring {
		s.ring[i] = backing[i*maxFrame : i*maxFrame : (i+1)*maxFrame]
	}
	return s
}

// Frames returns the stream's frames. The channel is closed when the stream
// ends. Frames the consumer does not take in time are dropped and counted
// (banter_voice_packets_dropped_total{reason="slow_consumer"}).
func (s *Stream) Frames() <-chan Frame { return s.frames }

// Done is closed when the stream ends.
func (s *Stream) Done() <-chan struct{} { return s.done }

// buffer returns the next ring buffer to decrypt into.
func (s *Stream) buffer() []byte { return s.ring[s.pos][:0] }
