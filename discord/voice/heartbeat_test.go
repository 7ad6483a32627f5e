package voice

import (
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// TestHeartbeatsKeepSessionAlive: with a 25 ms Hello interval and a server
// that times out silent clients after 300 ms (4009), the connection's
// heartbeats (with seq_ack) keep it up for a second (a connection without
// them would be closed three times over).
func TestHeartbeatsKeepSessionAlive(t *testing.T) {
	checkGoroutines(t)
	s := voicetest.Serve(t, voicesim.WithHeartbeat(25*time.Millisecond, 300*time.Millisecond))
	m := newMetrics()
	c := dial(t, simConfig(t, s, testBot, m))
	time.Sleep(time.Second)
	if c.Err() != nil || c.State() != StateReady || value(m.reconnects) != 0 {
		t.Fatalf("err %v state %v reconnects %v", c.Err(), c.State(), value(m.reconnects))
	}
}

// TestMissedHeartbeatACKsResume black-holes the WebSocket path: no close,
// no ACKs. After MissedHeartbeats unacknowledged beats the connection drops
// the socket itself and resumes on a new one.
func TestMissedHeartbeatACKsResume(t *testing.T) {
	checkGoroutines(t)
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
