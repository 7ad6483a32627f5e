package voice

import (
	"context"
	"encoding/binary"
	"net"
	"slices"
	"testing"
	"time"
)

// TestClockStallSendsEveryFrame: after a stall of the clock's goroutine (a wake-up 19 ms
// late), one wake-up serves a connection's late slot and, within Lead, its next one: two of
// its frames are sealed for the shared socket in one wake-up. Each must leave as itself. Both
// once went into one batch, each entry the connection's one seal buffer, so the later frame
// went out twice and the earlier one never: a member heard a reply a frame short under load
// (voice's TestReplyAudioSameOnSendClock, TestBargeInPlayedIsHeard).
func TestClockStallSendsEveryFrame(t *testing.T) {
	k, conns := clockRig(t, 1, true)
	c := conns[0]
	capture, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer capture.Close()
	to := capture.LocalAddr().(*net.UDPAddr)
	c.server, c.serverUDP = to.AddrPort(), to

	frame := opusFrames(t, 1)[0]
	ctx := context.Background()
	for range 4 {
		if kick, err := c.q.push(ctx, nil, frame, false); err != nil {
			t.Fatal(err)
		} else if kick {
			k.kick(c, false)
		}
	}
	ms := func(n int) time.Time { return k.t0.Add(time.Duration(n) * time.Millisecond) }
	k.serve(ms(0))  // the spurt starts: its first frame leaves at once
	k.serve(ms(39)) // 19 ms late for the slot at 20 ms; the slot at 40 ms is within Lead
	if st := k.Stats(); st.Frames != 3 || st.Wakeups != 2 {
		t.Fatalf("%d frames sent in %d wake-ups, want 3 in 2 (the stall's two slots in one): %+v", st.Frames, st.Wakeups, st)
	}

	var seqs []uint16
	buf := make([]byte, 2048)
	for range 3 {
		if err := capture.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil { // a failure guard
			t.Fatal(err)
		}
		n, _, err := capture.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("after %d packets (sequence numbers %v): %v", len(seqs), seqs, err)
		}
		if n < 12 {
			t.Fatalf("a %d-byte packet", n)
		}
		seqs = append(seqs, binary.BigEndian.Uint16(buf[2:4]))
	}
	if want := []uint16{0, 1, 2}; !slices.Equal(seqs, want) {
		t.Errorf("RTP sequence numbers received %v, want %v: a frame lost, another sent twice", seqs, want)
	}
}
