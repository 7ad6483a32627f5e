package voice

import (
	"context"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// TestUDPFaults plays audio to the bot through a forwarding path with loss,
// reordering, duplication and garbage datagrams. Nothing crashes, every
// datagram is accounted for in exactly one counter, loss equals what the
// simulator dropped, and frames are delivered once each.
func TestUDPFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults voicesim.Faults
	}{
		{"loss", voicesim.Faults{LossPercent: 15, Seed: 1}},
		{"reorder", voicesim.Faults{ReorderPercent: 20, Seed: 2}},
		{"duplicate", voicesim.Faults{DuplicatePercent: 20, Seed: 3}},
		{"garbage", voicesim.Faults{GarbagePercent: 20, Seed: 4}},
		{"everything", voicesim.Faults{LossPercent: 10, ReorderPercent: 10, DuplicatePercent: 10, GarbagePercent: 10, Seed: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := voicetest.Serve(t)
			m := newMetrics()
			cfg := simConfig(t, s, testBot, m)
			cfg.StreamDepth = 512 // the test reads after the burst
			cfg.KeepaliveInterval = time.Hour
			c := dial(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman, FrameInterval: 200 * time.Microsecond})
			if err != nil {
				t.Fatal(err)
			}
			st := nextStream(t, c, testHuman)
			s.SetFaults(testBot, voicesim.FromServer, tt.faults)
			in0 := int(value(m.packetsIn)) // the IP discovery response
			done0 := processed(m, st)
			fwd0 := s.Stats().Forwarded
			const n = 300
			frames := make([][]byte, n)
			for i := range frames {
				frames[i] = []byte{0xFC, byte(i), byte(i >> 8)}
			}
			if err := member.PlayOpus(ctx, frames); err != nil {
				t.Fatal(err)
			}
			sent := n + 5 // PlayOpus adds five silence frames
			// Wait until the simulator has forwarded the whole burst (its RTP
			// count takes a packet once the packet's forwards are counted), the
			// bot's socket has received every datagram it was sent, and the bot
			// has finished with each (a frame in the stream or a counted drop).
			// Then end the stream: nothing is in flight.
			waitFor(t, "the burst forwarded", func() bool { return s.Stats().RTP == uint64(sent) })
			fwd := int(s.Stats().Forwarded - fwd0)
			waitFor(t, "the burst received and handled", func() bool {
				in := int(value(m.packetsIn)) - in0
				return in == fwd && processed(m, st)-done0 == in
			})
			member.Leave() // op 13 ends the stream and settles the loss window
			seen := map[uint16]bool{}
			late := 0
			var last uint16
			for f := range st.Frames() {
				if seen[f.Sequence] {
					t.Fatalf("sequence %d delivered twice", f.Sequence)
				}
				if len(seen) > 0 && int16(f.Sequence-last) < 0 {
					late++
				}
				seen[f.Sequence] = true
				last = f.Sequence
			}
			delivered := len(seen)
			stats := s.Stats()
			lost := int(value(m.lost))
			if lost != int(stats.FaultDropped) || delivered+lost != sent {
				t.Errorf("lost %d (simulator dropped %d), delivered %d, sent %d", lost, stats.FaultDropped, delivered, sent)
			}
			dups := int(counterOf(m.dropped, dropDuplicate))
			garbage := int(value(m.malformed) + value(m.decryptFailures) + counterOf(m.dropped, dropUnknownSSRC) +
				counterOf(m.dropped, dropNotOpus) + counterOf(m.dropped, dropRTCP) + counterOf(m.dropped, dropShort))
			in := int(value(m.packetsIn)) - in0
			if in != delivered+dups+garbage+int(counterOf(m.dropped, dropTooOld)) {
				t.Errorf("packets in %d != delivered %d + duplicates %d + garbage %d + too old", in, delivered, dups, garbage)
			}
			if slow := counterOf(m.dropped, dropSlowConsumer); slow != 0 {
				t.Errorf("slow-consumer drops %v", slow)
			}
			f := tt.faults
			if (f.LossPercent > 0) != (lost > 0) || (f.DuplicatePercent > 0) != (dups > 0) ||
				(f.GarbagePercent > 0) != (garbage > 0) || (f.ReorderPercent > 0) != (late > 0) {
				t.Errorf("fault effects: lost %d dups %d garbage %d late %d for %+v", lost, dups, garbage, late, f)
			}
			if c.State() != StateReady {
				t.Errorf("state %v", c.State())
			}
			t.Logf("sent %d delivered %d lost %d late %d dups %d garbage %d", sent, delivered, lost, late, dups, garbage)
		})
	}
}

// processed counts the datagrams the connection has finished with: frames
// waiting in st (the test reads them only at the end) and every drop,
// malformed packet and decrypt failure.
func processed(m *Metrics, st *Stream) int {
	return len(st.Frames()) + int(value(m.dropped)+value(m.malformed)+value(m.decryptFailures))
}
