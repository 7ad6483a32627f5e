package voice

import (
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// TestHeartbeatsKeepSessionAlive: the connection heartbeats at the Hello
// interval (25 ms here), each heartbeat acknowledging (seq_ack) the last
// sequenced message it received, which is what keeps a voice session
// alive (the simulator closes a silent one with 4009 and trims its resume
// buffer by seq_ack). The test counts the heartbeats the simulator
// received, rather than watching the session survive for a while: how
// long a loaded machine takes to run 25 ms ticks does not matter.
func TestHeartbeatsKeepSessionAlive(t *testing.T) {
	s := voicetest.Serve(t, voicesim.WithHeartbeat(25*time.Millisecond, time.Minute))
	m := newMetrics()
	cfg := simConfig(t, s, testBot, m)
	cfg.MissedHeartbeats = 1 << 20 // late ACKs are TestMissedHeartbeatACKsResume's subject
	c := dial(t, cfg)
	// A member joins: op 11 and op 5 are sequenced messages the heartbeats
	// must acknowledge.
	member, err := s.JoinMember(t.Context(), voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Leave()
	nextStream(t, c, testHuman)
	var hb voicesim.Heartbeats
	waitFor(t, "heartbeats acknowledging everything", func() bool {
		hb, _ = s.Heartbeats(testGuild, testBot)
		return hb.LastSeq > 0 && hb.LastSeqAck == hb.LastSeq
	})
	start := hb.Received
	waitFor(t, "ten more heartbeats", func() bool {
		hb, _ = s.Heartbeats(testGuild, testBot)
		return hb.Received >= start+10
	})
	if c.Err() != nil || c.State() != StateReady || value(m.reconnects) != 0 || hb.LastSeqAck != hb.LastSeq {
		t.Fatalf("err %v state %v reconnects %v heartbeats %+v", c.Err(), c.State(), value(m.reconnects), hb)
	}
}

// TestMissedHeartbeatACKsResume black-holes the WebSocket path: no close,
// no ACKs. After MissedHeartbeats unacknowledged beats the connection drops
// the socket itself and resumes on a new one.
func TestMissedHeartbeatACKsResume(t *testing.T) {
	s := voicetest.Serve(t, voicesim.WithHeartbeat(30*time.Millisecond, 5*time.Second))
	proxy := newTCPProxy(t, s.Endpoint())
	m := newMetrics()
	cfg := simConfig(t, s, testBot, m)
	cfg.Endpoint = proxy.addr()
	c := dial(t, cfg)
	proxy.blackhole()
	waitFor(t, "resume after missed ACKs", func() bool { return counterOf(m.reconnects, "1006") == 1 })
	waitFor(t, "ready again", func() bool { return c.State() == StateReady })
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	// The resumed connection is live: a member's op 5 reaches it.
	member, err := s.JoinMember(t.Context(), voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Leave()
	nextStream(t, c, testHuman)
}
