package voicesim

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"
)

// expectedCounts replays what the fault path f does to sent packets of the
// sender's burst (the decisions come from f's seeded generator, so the
// replay makes the same ones) and returns how many datagrams the server's
// socket counts (Stats.Packets) and how many reach the receiver rx
// (Stats.Forwarded, and rx's MemberStats.Packets). A packet the reorder
// fault still holds at the end is in neither.
func expectedCounts(dir Direction, f Faults, sent int) (server, toRx uint64) {
	if f.zero() {
		return uint64(sent), uint64(sent)
	}
	fp := newFaultPath(f)
	var emitted, real, dropped uint64
	for i := range sent {
		pkt := []byte{0x80, 0x78, byte(i >> 8), byte(i), 0xfa, 0xce, 0xfa, 0xce, 0xfa, 0xce, 0xfa, 0xce}
		if fp.apply(pkt, func(b []byte) {
			fp.release(time.Now()) // the same draws as the server's
			emitted++
			if len(b) == len(pkt) && bytes.Equal(b[4:], pkt[4:]) {
				real++ // one of the burst's packets, not injected garbage
			}
		}) {
			dropped++
		}
	}
	if dir == ToServer {
		return emitted + dropped, real // garbage is refused, never forwarded
	}
	return uint64(sent), emitted // the server forwards garbage and duplicates too
}

// settle waits until the server has counted every datagram the burst
// leads to and the receiver has every datagram the forwarding unit sent
// it: exact counts from expectedCounts, so nothing is still in flight when
// it returns.
func settle(t *testing.T, s *Server, rx *Member, dir Direction, f Faults, sent int) {
	t.Helper()
	server, toRx := expectedCounts(dir, f, sent)
	waitFor(t, func() bool {
		st := s.Stats()
		return st.Packets == server && st.Forwarded == toRx && rx.Stats().Packets == toRx
	})
}

func TestFaults(t *testing.T) {
	const n = 40
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = []byte{0xfc, byte(i), 0xee}
	}
	type result struct {
		s      *Server
		tx, rx *Member
		heard  [][]byte
	}
	run := func(t *testing.T, user string, dir Direction, f Faults) result {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s := serve(t)
		tx, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: "c", UserID: "tx", FrameInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		rx, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: "c", UserID: "rx", FrameInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s.SetFaults(user, dir, f)
		if err := tx.PlayOpus(ctx, frames); err != nil {
			t.Fatal(err)
		}
		settle(t, s, rx, dir, f, n+silenceTrailing)
		return result{s: s, tx: tx, rx: rx, heard: rx.Heard("tx")}
	}
	tests := []struct {
		name  string
		user  string
		dir   Direction
		f     Faults
		check func(t *testing.T, r result)
	}{
		{"no faults", "tx", ToServer, Faults{}, func(t *testing.T, r result) {
			if !slices.EqualFunc(r.heard, frames, bytes.Equal) {
				t.Fatalf("heard %d frames, want %d in order", len(r.heard), n)
			}
		}},
		{"loss 100 to server", "tx", ToServer, Faults{LossPercent: 100}, func(t *testing.T, r result) {
			waitFor(t, func() bool { return r.s.Stats().FaultDropped == n+silenceTrailing })
			if len(r.heard) != 0 {
				t.Fatalf("heard %d, stats %+v", len(r.heard), r.s.Stats())
			}
		}},
		{"loss 30 from server", "rx", FromServer, Faults{LossPercent: 30, Seed: 7}, func(t *testing.T, r result) {
			if len(r.heard) == 0 || len(r.heard) >= n {
				t.Fatalf("heard %d of %d", len(r.heard), n)
			}
			st := r.s.Stats()
			if st.Forwarded+st.FaultDropped != n+silenceTrailing || st.RTP != n+silenceTrailing {
				t.Fatalf("stats %+v", st)
			}
		}},
		{"duplicate 100", "rx", FromServer, Faults{DuplicatePercent: 100}, func(t *testing.T, r result) {
			if len(r.heard) != 2*n {
				t.Fatalf("heard %d, want %d", len(r.heard), 2*n)
			}
			for i := 0; i < n; i++ {
				if !bytes.Equal(r.heard[2*i], frames[i]) || !bytes.Equal(r.heard[2*i+1], frames[i]) {
					t.Fatalf("frame pair %d: %x %x", i, r.heard[2*i], r.heard[2*i+1])
				}
			}
		}},
		{"reorder 100", "tx", ToServer, Faults{ReorderPercent: 100}, func(t *testing.T, r result) {
			if len(r.heard) != n {
				t.Fatalf("heard %d, want %d", len(r.heard), n)
			}
			for i := 0; i+1 < n; i += 2 {
				if !bytes.Equal(r.heard[i], frames[i+1]) || !bytes.Equal(r.heard[i+1], frames[i]) {
					t.Fatalf("pair %d not swapped: %x %x", i, r.heard[i], r.heard[i+1])
				}
			}
		}},
		{"garbage 100 to server", "tx", ToServer, Faults{GarbagePercent: 100, Seed: 3}, func(t *testing.T, r result) {
			st := r.s.Stats()
			if len(r.heard) != n || st.Malformed+st.Keepalives+st.DecryptFailures+st.RTCP+st.UnknownSSRC < n+silenceTrailing {
				t.Fatalf("heard %d, stats %+v", len(r.heard), st)
			}
		}},
		{"jitter 30 ms to server", "tx", ToServer, Faults{Jitter: 30 * time.Millisecond, Seed: 5}, func(t *testing.T, r result) {
			// sent 1 ms apart, each held 0-30 ms and none overtaken: all arrive, in order
			if !slices.EqualFunc(r.heard, frames, bytes.Equal) {
				t.Fatalf("heard %d frames, want the %d sent, in order", len(r.heard), n)
			}
		}},
		{"delay and jitter from server", "rx", FromServer, Faults{Delay: 5 * time.Millisecond, Jitter: 5 * time.Millisecond, LossPercent: 10, Seed: 9}, func(t *testing.T, r result) {
			if len(r.heard) == 0 || len(r.heard) >= n {
				t.Fatalf("heard %d of %d, want some lost", len(r.heard), n)
			}
		}},
		{"garbage 100 from server", "rx", FromServer, Faults{GarbagePercent: 100, Seed: 3}, func(t *testing.T, r result) {
			ms := r.rx.Stats()
			if len(r.heard) != n || ms.Malformed+ms.DecryptFailures+ms.UnknownSSRC != n+silenceTrailing {
				t.Fatalf("heard %d, member stats %+v", len(r.heard), ms)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, run(t, tt.user, tt.dir, tt.f))
		})
	}
	t.Run("deterministic", func(t *testing.T) {
		f := Faults{LossPercent: 20, ReorderPercent: 20, DuplicatePercent: 20, Seed: 42}
		a := run(t, "tx", ToServer, f).heard
		b := run(t, "tx", ToServer, f).heard
		if !slices.EqualFunc(a, b, bytes.Equal) {
			t.Fatalf("same seed, different results: %d vs %d frames", len(a), len(b))
		}
		if slices.EqualFunc(a, frames, bytes.Equal) {
			t.Fatal("faults had no effect")
		}
	})
	t.Run("clear", func(t *testing.T) {
		s := serve(t)
		s.SetFaults("tx", ToServer, Faults{LossPercent: 100})
		s.SetFaults("tx", ToServer, Faults{})
		if len(s.faults) != 0 {
			t.Fatal("zero Faults did not clear")
		}
	})
}

// TestFaultPathRelease: Delay and Jitter hold each packet Delay plus 0 to Jitter after it
// reaches the path, never before the packet ahead of it, and the draws vary.
func TestFaultPathRelease(t *testing.T) {
	const delay, jitter = 40 * time.Millisecond, 100 * time.Millisecond
	fp := newFaultPath(Faults{Delay: delay, Jitter: jitter, Seed: 11})
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var last time.Time
	waited := map[time.Duration]bool{}
	for i := range 200 {
		now := t0.Add(time.Duration(i) * 20 * time.Millisecond)
		at, ok := fp.release(now)
		if !ok {
			t.Fatal("the path holds nothing")
		}
		if w := at.Sub(now); w < delay || w > delay+jitter && !at.Equal(last) {
			t.Fatalf("packet %d held %v, want %v to %v (or until the one ahead of it)", i, w, delay, delay+jitter)
		}
		if at.Before(last) {
			t.Fatalf("packet %d goes on at %v, before the one ahead of it (%v)", i, at, last)
		}
		last = at
		waited[at.Sub(now).Round(20*time.Millisecond)] = true
	}
	if len(waited) < 4 {
		t.Errorf("holds of %d distinct lengths, want the jitter's spread", len(waited))
	}
	if _, ok := newFaultPath(Faults{LossPercent: 5}).release(t0); ok {
		t.Error("a path without Delay or Jitter holds packets")
	}
}
