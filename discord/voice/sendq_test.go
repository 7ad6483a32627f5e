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
		if _, err := q.push(ctx, done, sealing, false); err != nil {
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
				if _, err := q.push(ctx, done, []byte{byte(round), byte(i)}, false); err != nil {
					t.Fatal(err)
				}
			}
			if got := q.discard(); got != size-1 {
				t.Fatalf("size %d: discard dropped %d, want %d", size, got, size-1)
			}
		}
		for i := range size - 1 {
			if _, err := q.push(ctx, done, []byte{9, byte(i)}, false); err != nil {
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

// TestOutQueueCountsAudioApart: the closing silence frames StopSpeaking queues behind a reply
// are neither audio waiting (Conn.Queued) nor audio dropped (Conn.Interrupt), so what a
// barge-in records as played (frames handed over, less audio queued and dropped) does not
// depend on whether the spurt's silence was queued yet when it looked.
func TestOutQueueCountsAudioApart(t *testing.T) {
	tests := []struct {
		name                 string
		audio, silence, pops int
		wantLen, wantAudio   int
		wantDropped          int
	}{
		{"audio only", 4, 0, 1, 3, 3, 3},
		{"audio then silence", 4, 5, 1, 8, 3, 3},
		{"silence popping", 2, 5, 3, 4, 0, 0},
		{"nothing queued", 0, 0, 0, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q outQueue
			q.init(16)
			ctx, done := context.Background(), make(chan struct{})
			for i := range tc.audio + tc.silence {
				if _, err := q.push(ctx, done, []byte{byte(i)}, i >= tc.audio); err != nil {
					t.Fatal(err)
				}
			}
			for range tc.pops {
				if f, _, _ := q.pop(); f != nil {
					q.release()
				}
			}
			if got := q.len(); got != tc.wantLen {
				t.Errorf("len %d, want %d", got, tc.wantLen)
			}
			if got := q.audio(); got != tc.wantAudio {
				t.Errorf("audio %d, want %d", got, tc.wantAudio)
			}
			if got := q.discard(); got != tc.wantDropped {
				t.Errorf("discard dropped %d audio frames, want %d", got, tc.wantDropped)
			}
			if q.len() != 0 || q.audio() != 0 {
				t.Errorf("after discard: len %d, audio %d", q.len(), q.audio())
			}
		})
	}
}
