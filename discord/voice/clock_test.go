package voice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/voice/pace"
	"github.com/banterbot/banter/discord/voice/transport"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

func newClock(t testing.TB, opts ClockOptions) *SendClock {
	t.Helper()
	if opts.LocalAddr == "" {
		opts.LocalAddr = "127.0.0.1:0"
	}
	k, err := NewSendClock(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// TestClockSendsLikeThePacer: connections on one send clock (its shared
// socket, and each its own socket) deliver exactly the frames the old
// per-connection pacer delivers, in order, then the five silence frames;
// with the shared socket the frames of a slot leave in one write.
func TestClockSendsLikeThePacer(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			s := voicetest.Serve(t)
			// One bucket: every connection is due on the same wake-up.
			k := newClock(t, ClockOptions{Resolution: frameDuration, SharedSocket: shared, Lookahead: 8})
			const bots = 6
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman})
			if err != nil {
				t.Fatal(err)
			}
			defer member.Leave()
			var conns []*Conn
			for i := range bots {
				cfg := simConfig(t, s, fmt.Sprintf("bot%d", i), newMetrics())
				cfg.Clock = k
				c := dial(t, cfg)
				if (c.udp == nil) != shared {
					t.Fatalf("connection on its own socket: %v, want %v", c.udp != nil, !shared)
				}
				conns = append(conns, c)
			}
			out := opusFrames(t, 30)
			done := make(chan error, bots)
			for _, c := range conns {
				go func() {
					for _, f := range out {
						if err := c.SendOpus(ctx, f); err != nil {
							done <- err
							return
						}
					}
					done <- c.StopSpeaking(ctx)
				}()
			}
			for range bots {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			for i := range bots {
				user := fmt.Sprintf("bot%d", i)
				if err := member.WaitHeard(ctx, user, len(out)); err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				if heard := member.Heard(user); !slices.EqualFunc(heard, out, bytes.Equal) {
					t.Fatalf("%s: heard %d frames, not the %d sent", user, len(heard), len(out))
				}
			}
			waitFor(t, "silence frames", func() bool { return member.Stats().Silence >= bots*silenceFrames })
			st := k.Stats()
			if want := uint64(bots * (len(out) + silenceFrames)); st.Frames != want {
				t.Errorf("clock sent %d frames, want %d", st.Frames, want)
			}
			if shared && st.Writes*2 > st.Frames {
				t.Errorf("shared socket: %d writes for %d frames, want batches (%+v)", st.Writes, st.Frames, st)
			}
			if !shared && st.Writes != st.Frames {
				t.Errorf("own sockets: %d writes for %d frames, want one each", st.Writes, st.Frames)
			}
			if ms := member.Stats(); ms.DecryptFailures != 0 || ms.Malformed != 0 || ms.DecodeErrors != 0 {
				t.Errorf("member stats %+v", ms)
			}
		})
	}
}

// TestClockHearsOnSharedSocket: a member's audio reaches the connection it
// belongs to through the shared socket (the mux routes by server address
// and SSRC), with two connections to the same server.
func TestClockHearsOnSharedSocket(t *testing.T) {
	s := voicetest.Serve(t)
	k := newClock(t, ClockOptions{SharedSocket: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var conns []*Conn
	for i := range 2 {
		cfg := simConfig(t, s, fmt.Sprintf("bot%d", i), newMetrics())
		cfg.Clock = k
		conns = append(conns, dial(t, cfg))
	}
	member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman, FrameInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Leave()
	frames := opusFrames(t, 10)
	var streams []*Stream
	for _, c := range conns {
		streams = append(streams, nextStream(t, c, testHuman))
	}
	if err := member.PlayOpus(ctx, frames); err != nil {
		t.Fatal(err)
	}
	for i, st := range streams {
		for j := range frames {
			select {
			case f := <-st.Frames():
				if !bytes.Equal(f.Opus, frames[j]) {
					t.Fatalf("connection %d frame %d differs", i, j)
				}
			case <-ctx.Done():
				t.Fatalf("connection %d received %d/%d frames", i, j, len(frames))
			}
		}
	}
}

// TestClockInterrupt: Interrupt drops the frames queued and not yet sent
// (barge-in), the silence frames of StopSpeaking still go out, and the
// member hears exactly what the clock sent; a reply whose context ends
// after its last frame is queued still plays out.
func TestClockInterrupt(t *testing.T) {
	s := voicetest.Serve(t)
	// A second of lookahead: the queue holds the whole reply.
	k := newClock(t, ClockOptions{Lookahead: 50})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Leave()
	cfg := simConfig(t, s, testBot, newMetrics())
	cfg.Clock = k
	c := dial(t, cfg)
	out := opusFrames(t, 50)
	// A reply that ends normally: its context is cancelled as soon as the
	// last frame is queued, and everything is still heard.
	reply, stop := context.WithCancel(ctx)
	for _, f := range out[:10] {
		if err := c.SendOpus(reply, f); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if err := c.SendOpus(reply, out[0]); err == nil {
		t.Error("SendOpus with an ended context queued a frame")
	}
	if err := c.StopSpeaking(ctx); err != nil {
		t.Fatal(err)
	}
	if err := member.WaitHeard(ctx, testBot, 10); err != nil {
		t.Fatal(err)
	}
	// An interrupted one: what was queued when Interrupt came is dropped.
	for _, f := range out {
		if err := c.SendOpus(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	dropped := c.Interrupt()
	if err := c.StopSpeaking(ctx); err != nil {
		t.Fatal(err)
	}
	st := k.Stats()
	sent := st.Frames - 2*silenceFrames - 10
	if dropped == 0 || st.Dropped != uint64(dropped) || sent+st.Dropped != uint64(len(out)) {
		t.Fatalf("sent %d + dropped %d (Interrupt said %d), want %d with some dropped (%+v)", sent, st.Dropped, dropped, len(out), st)
	}
	waitFor(t, "silence frames", func() bool { return member.Stats().Silence >= 2*silenceFrames })
	if heard := member.Heard(testBot); !slices.EqualFunc(heard, append(out[:10:10], out[:sent]...), bytes.Equal) {
		t.Errorf("member heard %d frames, want the first reply's 10 and the second's first %d (what the clock sent)", len(heard), sent)
	}
}

func TestClockOptions(t *testing.T) {
	if _, err := NewSendClock(ClockOptions{Resolution: 3 * time.Millisecond}); err == nil {
		t.Error("3 ms resolution accepted (does not divide 20 ms)")
	}
	if _, err := NewSendClock(ClockOptions{SharedSocket: true, LocalAddr: "not an address"}); err == nil {
		t.Error("bad LocalAddr accepted")
	}
	k := newClock(t, ClockOptions{})
	if k.LocalAddr() != nil {
		t.Error("LocalAddr without a shared socket")
	}
	if st := k.Stats(); st != (ClockStats{}) {
		t.Errorf("idle clock stats %+v", st)
	}
}

// clockRig is n connections attached to a clock whose goroutine does not
// run (the test serves its slots itself), sending real sealed RTP to a
// local UDP sink that discards it: nothing else in the process allocates
// per packet, so the allocation counts are the sender's own.
func clockRig(t testing.TB, n int, shared bool) (*SendClock, []*Conn) {
	t.Helper()
	k, err := newSendClock(ClockOptions{SharedSocket: shared, LocalAddr: "127.0.0.1:0", Lookahead: 4})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := sink.ReadFromUDPAddrPort(buf); errors.Is(err, net.ErrClosed) {
				return
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var conns []*Conn
	t.Cleanup(func() {
		cancel()
		for _, c := range conns {
			if c.udp != nil {
				c.udp.Close()
			}
		}
		if k.mux != nil {
			k.mux.close()
		}
		sink.Close()
		wg.Wait()
	})
	to := sink.LocalAddr().(*net.UDPAddr).AddrPort()
	for i := range n {
		ciph, err := transport.NewCipher(transport.ModeAES256GCM, make([]byte, 32))
		if err != nil {
			t.Fatal(err)
		}
		c := &Conn{ctx: ctx, log: slog.New(slog.DiscardHandler), clock: k, sendCipher: ciph,
			ssrc: uint32(i + 1), sendBuf: make([]byte, 0, 2048), speaking: true}
		c.q.init(k.opts.Lookahead)
		if shared {
			c.shared, c.server, c.serverUDP = true, to, net.UDPAddrFromAddrPort(to)
		} else if c.udp, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(to)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	return k, conns
}

// serveSlot queues one frame per connection and serves one slot of each
// (all buckets of one interval), as the clock goroutine does.
func serveSlot(k *SendClock, conns []*Conn, frame []byte) {
	ctx := context.Background()
	for _, c := range conns {
		if kick, _ := c.q.push(ctx, nil, frame, false); kick {
			c.clk.due = k.tick
			c.clk.onWheel = true
			k.wheel[k.tick%k.nb] = append(k.wheel[k.tick%k.nb], c)
		}
	}
	k.now = k.tickTime(k.tick)
	for range k.nb {
		k.bucket(k.tick, false)
		k.tick++
	}
	k.flush()
}

// TestClockHotPathAllocFree: queueing a frame and serving a slot (seal,
// batch, sendmmsg or write) allocate nothing.
func TestClockHotPathAllocFree(t *testing.T) {
	for _, shared := range []bool{true, false} {
		k, conns := clockRig(t, 8, shared)
		frame := opusFrames(t, 1)[0]
		serveSlot(k, conns, frame) // first slot: the wheel and batch grow
		if n := testing.AllocsPerRun(50, func() { serveSlot(k, conns, frame); k.nextWake() }); n != 0 && !(shared && raceEnabled) {
			t.Errorf("shared=%v: %v allocs per slot of %d connections, want 0", shared, n, len(conns))
		}
		st := k.Stats()
		if st.Frames == 0 {
			t.Fatal("no frames sent")
		}
		if shared && st.Writes*uint64(len(conns)) != st.Frames {
			t.Errorf("shared: %d writes for %d frames of %d connections, want one per slot", st.Writes, st.Frames, len(conns))
		}
	}
}

// BenchmarkClockSlot: one 20 ms slot of n connections (queue a frame each,
// seal, send), with the shared socket (one sendmmsg per bucket, here per
// slot) and with a socket per connection (one write each, as the
// per-connection pacer does) in the same run. Reported per slot: the
// writes (system calls) and frames per write.
func BenchmarkClockSlot(b *testing.B) {
	for _, n := range []int{50, 200} {
		for _, shared := range []bool{true, false} {
			b.Run(fmt.Sprintf("conns=%d/shared=%v", n, shared), func(b *testing.B) {
				k, conns := clockRig(b, n, shared)
				frame := opusFrames(b, 1)[0]
				serveSlot(k, conns, frame)
				w0, f0 := k.Stats().Writes, k.Stats().Frames
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					serveSlot(k, conns, frame)
				}
				st := k.Stats()
				slots := float64(b.N)
				b.ReportMetric(float64(st.Writes-w0)/slots, "writes/slot")
				b.ReportMetric(float64(st.Frames-f0)/float64(st.Writes-w0), "frames/write")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/slots/float64(n), "ns/frame")
			})
		}
	}
}

// BenchmarkSenders: 200 connections each sending 2 s of frames to a local
// sink, the way a reply does (SendOpus per frame, then StopSpeaking), on
// the earlier path (a pacer per connection: each SendOpus sleeps until its
// slot) and on a send clock (shared socket, and a socket each), in the same
// run. Reported per frame: process CPU time (getrusage, robust when other
// processes share the cores), frames sent more than 2 ms late, and for the
// clock its wake-ups and writes per 20 ms.
func BenchmarkSenders(b *testing.B) {
	const n, frames = 200, 100
	frame := opusFrames(b, 1)[0]
	for _, mode := range []string{"pacer", "clock-shared", "clock-own"} {
		b.Run(mode, func(b *testing.B) {
			var cpu time.Duration
			var late, sent float64
			var wakeups, writes uint64
			for b.Loop() {
				k, conns := clockRig(b, n, mode == "clock-shared")
				m := newMetrics()
				if mode == "pacer" {
					for _, c := range conns {
						c.clock, c.pacer, c.announced = nil, pace.New(frameDuration), true
					}
				} else {
					go k.run()
				}
				for _, c := range conns {
					c.m = m
				}
				cpu0 := cpuTime()
				var wg sync.WaitGroup
				for _, c := range conns {
					wg.Go(func() {
						for range frames {
							if err := c.SendOpus(context.Background(), frame); err != nil {
								b.Error(err)
								return
							}
						}
						// the silence frames go out; Op 5 then fails (no
						// WebSocket in the rig)
						_ = c.StopSpeaking(context.Background())
					})
				}
				wg.Wait()
				cpu += cpuTime() - cpu0
				late += lateOver(m, 0.002)
				sent += value(m.packetsOut)
				if mode != "pacer" {
					st := k.Stats()
					wakeups += st.Wakeups
					writes += st.Writes
					k.cancel()
					<-k.done
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/sent, "cpu-ns/frame")
			b.ReportMetric(100*late/sent, "%late>2ms")
			if mode != "pacer" {
				slots := sent / n
				b.ReportMetric(float64(wakeups)/slots, "wakeups/20ms")
				b.ReportMetric(float64(writes)/slots, "writes/20ms")
			}
		})
	}
}

// TestClockLead: a frame already queued leaves up to Lead before its slot
// (the clock wakes that much ahead, so a wake-up the scheduler delays by
// up to Lead is still on time); a connection whose frame is not queued by
// then is served at its slot as before, where an empty queue is an
// underrun. Without a lead the clock wakes at the slot.
func TestClockLead(t *testing.T) {
	tests := []struct {
		name string
		lead time.Duration
		want time.Duration // the lead in effect
	}{
		{"default", 0, 2 * time.Millisecond},
		{"3ms", 3 * time.Millisecond, 3 * time.Millisecond},
		{"none", -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, conns := clockRig(t, 2, true)
			opts, err := newSendClock(ClockOptions{Lead: tt.lead})
			if err != nil {
				t.Fatal(err)
			}
			if k.opts.Lead = opts.opts.Lead; k.opts.Lead != tt.want {
				t.Fatalf("lead %v, want %v", k.opts.Lead, tt.want)
			}
			ms := func(n int) time.Time { return k.t0.Add(time.Duration(n) * time.Millisecond) }
			frame := opusFrames(t, 1)[0]
			ctx := context.Background()
			full, sparse := conns[0], conns[1]
			for range 3 {
				if kick, err := full.q.push(ctx, nil, frame, false); err != nil {
					t.Fatal(err)
				} else if kick {
					k.kick(full, false)
				}
			}
			if kick, _ := sparse.q.push(ctx, nil, frame, false); kick {
				k.kick(sparse, false)
			}
			k.serve(ms(0)) // both spurts start: their first frames leave at once
			if st := k.Stats(); st.Frames != 2 {
				t.Fatalf("after the kicks: %d frames sent, want 2", st.Frames)
			}
			at, ok := k.nextWake()
			if want := ms(20).Add(-tt.want); !ok || !at.Equal(want) {
				t.Fatalf("next wake-up %v after t0, want %v", at.Sub(k.t0), want.Sub(k.t0))
			}
			k.serve(at)
			if tt.want > 0 {
				// Early: the queued frame left, the empty queue waits for its slot.
				if st := k.Stats(); st.Frames != 3 || st.Skipped != 0 {
					t.Fatalf("%v before the slot: %d frames, %d skipped; want 3 and 0 (%+v)", tt.want, st.Frames, st.Skipped, st)
				}
				if at, ok = k.nextWake(); !ok || !at.Equal(ms(20)) {
					t.Fatalf("wake-up for the slot %v after t0, want 20 ms", at.Sub(k.t0))
				}
				k.serve(at)
			}
			if st := k.Stats(); st.Frames != 3 || st.Skipped != 1 {
				t.Fatalf("at the slot: %d frames, %d skipped; want 3 and the empty queue's underrun (%+v)", st.Frames, st.Skipped, st)
			}
			if at, ok = k.nextWake(); !ok || !at.Equal(ms(40).Add(-tt.want)) {
				t.Fatalf("then the wake-up %v after t0, want %v before 40 ms", at.Sub(k.t0), tt.want)
			}
		})
	}
	if _, err := NewSendClock(ClockOptions{Lead: 6 * time.Millisecond}); err == nil {
		t.Error("a 6 ms lead accepted (at most 5 ms)")
	}
}
