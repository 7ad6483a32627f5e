package voice

import (
	"bytes"
	"context"
	"testing"
)

// TestOutQueueDiscardKeepsThePoppedFrame: a barge-in (discard) while the
// clock is sealing a popped frame, then a new reply filling the queue,
// never overwrites the frame being sealed (the race CI found in
// TestClockInterrupt: discard moved the head so the producer's next writes
// reached the popped slot).
func TestOutQueueDiscardKeepsThePoppedFrame(t *testing.T) {
	for _, size := range []int{2, 3, 4, 8} {
		var q outQueue
		q.init(size)
		ctx := context.Background()
		done := make(chan struct{})
		sealing := []byte("frame being sealed")
		if _, err := q.push(ctx, done, sealing); err != nil {
			t.Fatal(err)
		}
		f, _, _ := q.pop()
		if f == nil {
			t.Fatalf("size %d: nothing popped", size)
		}
		// The producer fills every slot it may use, the barge-in drops
		// them, and the next reply fills them again.
		for round := range 2 {
			for i := range size - 1 {
				if _, err := q.push(ctx, done, []byte{byte(round), byte(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if got := q.discard(); got != size-1 {
				t.Fatalf("size %d: discard dropped %d, want %d", size, got, size-1)
			}
		}
		for i := range size - 1 {
			if _, err := q.push(ctx, done, []byte{9, byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(f.data(), sealing) {
			t.Fatalf("size %d: the popped frame now holds %q", size, f.data())
		}
		q.release()
		// What follows the release is the last reply, in order.
		for i := range size - 1 {
			g, _, _ := q.pop()
			if g == nil || !bytes.Equal(g.data(), []byte{9, byte(i)}) {
				t.Fatalf("size %d: frame %d is %v", size, i, g)
			}
			q.release()
		}
	}
}
