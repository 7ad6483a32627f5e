// Package simtest holds the testing.TB helpers for the Discord simulator
// (package discordsim). Only tests import it, so the production binary,
// which embeds the simulator for `banter sim` and `banter sandbox`, does not
// link the testing package.
package simtest

import (
	"context"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// Serve starts a Discord simulator on a loopback ephemeral port and closes
// it when the test ends. It fails the test if the simulator cannot start.
func Serve(t testing.TB, opts ...discordsim.Option) *discordsim.Server {
	t.Helper()
	s := discordsim.New(opts...)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("discordsim: start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// WaitHeartbeat waits (up to a minute, a failure guard) until the bot's
// current gateway connection, the last one that identified or resumed, has
// sent a heartbeat. Inject a gateway fault only after it: discordgo (v0.29)
// starts a connection's heartbeat goroutine after READY or RESUMED, and a
// goroutine that has not sent its first heartbeat when the connection is
// closed writes on the closed socket and then closes the session, which by
// then is the next connection (a spurious second disconnect that a test
// sees as "no connected gateway session"). Once the first heartbeat is
// out, the goroutine waits on the connection's own close and ends with it.
func WaitHeartbeat(t testing.TB, s *discordsim.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		events := s.GatewayEvents()
		conn, beats := 0, 0
		for _, e := range events {
			switch {
			case e.User != s.BotID():
			case e.Kind == discordsim.GatewayIdentified || e.Kind == discordsim.GatewayResumed:
				conn = e.Conn
			}
			if e.Kind == discordsim.GatewayHeartbeat {
				beats++
			}
		}
		for _, e := range events {
			if conn != 0 && e.Kind == discordsim.GatewayHeartbeat && e.Conn == conn {
				return
			}
		}
		if _, err := s.WaitGateway(ctx, discordsim.GatewayHeartbeat, beats+1); err != nil {
			t.Fatalf("discordsim: no heartbeat on the bot's gateway connection %d: %v", conn, err)
		}
	}
}
