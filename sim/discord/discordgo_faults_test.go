package discordsim

import (
	"context"
	"testing"
	"time"
)

// waitHeartbeat waits until the bot's current connection (the last that
// identified or resumed) has sent a heartbeat, as simtest.WaitHeartbeat
// does (that package imports this one): discordgo v0.29 starts a
// connection's heartbeat goroutine after READY or RESUMED, and one that has
// not sent its first heartbeat when a fault closes the connection writes on
// the closed socket and then closes the session's next connection.
func waitHeartbeat(t *testing.T, ctx context.Context, s *Server) {
	t.Helper()
	for {
		conn, beats, beat := 0, 0, false
		for _, e := range s.GatewayEvents() {
			if e.User == s.BotID() && (e.Kind == GatewayIdentified || e.Kind == GatewayResumed) && e.Conn != conn {
				conn, beat = e.Conn, false // (discordgo answers op 9 with an Identify on the same socket)
			}
			if e.Kind == GatewayHeartbeat {
				beats++
				beat = beat || (conn != 0 && e.Conn == conn)
			}
		}
		if beat {
			return
		}
		more := func() bool {
			n := 0
			for _, e := range s.GatewayEvents() {
				if e.Kind == GatewayHeartbeat {
					n++
				}
			}
			return n > beats
		}
		if err := s.Await(ctx, more); err != nil {
			t.Fatalf("no heartbeat on the bot's connection %d: %v", conn, err)
		}
	}
}

// TestDiscordgoFaults drives discordgo through each gateway fault and
// checks it recovers the way the reference says it does. Each fault waits
// for the connection's first heartbeat (waitHeartbeat).
func TestDiscordgoFaults(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	dg, ev := openDiscordgo(t, w.sim)
	post := func(content string) {
		t.Helper()
		if _, err := w.sim.Post(ctx, w.alice, w.text, content); err != nil {
			t.Fatal(err)
		}
		ev.wait(t, ctx, isMessage(content))
	}
	post("before")

	t.Run("DropGateway resumes with replay", func(t *testing.T) {
		n := w.sim.CountGateway(GatewayResumed)
		waitHeartbeat(t, ctx, w.sim)
		if err := w.sim.DropGateway(); err != nil {
			t.Fatal(err)
		}
		// Posted while the socket is down or reconnecting: must be replayed.
		if _, err := w.sim.Post(ctx, w.alice, w.text, "while down"); err != nil {
			t.Fatal(err)
		}
		e, err := waitGateway(ctx, w.sim, GatewayResumed, n+1)
		if err != nil {
			t.Fatal(err)
		}
		ev.wait(t, ctx, isMessage("while down"))
		t.Logf("resumed after seq %d, replayed %d", e.Seq, e.Replayed)
		post("after drop")
	})
	t.Run("ForceReconnect", func(t *testing.T) {
		n := w.sim.CountGateway(GatewayResumed)
		waitHeartbeat(t, ctx, w.sim)
		if err := w.sim.ForceReconnect(); err != nil {
			t.Fatal(err)
		}
		if _, err := waitGateway(ctx, w.sim, GatewayResumed, n+1); err != nil {
			t.Fatal(err)
		}
		post("after reconnect")
	})
	t.Run("ForceInvalidSession re-identifies on the same socket", func(t *testing.T) {
		for _, resumable := range []bool{false, true} {
			n := w.sim.CountGateway(GatewayIdentified)
			conns := w.sim.CountGateway(GatewayConnected)
			waitHeartbeat(t, ctx, w.sim)
			if err := w.sim.ForceInvalidSession(resumable); err != nil {
				t.Fatal(err)
			}
			e, err := waitGateway(ctx, w.sim, GatewayIdentified, n+1)
			if err != nil {
				t.Fatal(err)
			}
			if w.sim.CountGateway(GatewayConnected) != conns {
				t.Errorf("discordgo opened a new socket; it re-identifies on the same one")
				for _, e := range w.sim.GatewayEvents() {
					if e.Kind != GatewayHeartbeat {
						t.Logf("%+v", e)
					}
				}
			}
			if e.Compression != "payload" || e.Intents&IntentMessageContent == 0 {
				t.Errorf("identify %+v", e)
			}
			post("after invalid session " + map[bool]string{true: "resumable", false: "final"}[resumable])
		}
	})
	if dg.State.User.ID != string(w.sim.BotID()) {
		t.Fatal("state lost")
	}
}

// TestDiscordgoMissedACKs: with ACKs withheld discordgo gives up after 5
// heartbeat intervals and resumes, missing nothing.
func TestDiscordgoMissedACKs(t *testing.T) {
	w := newWorld(t, WithHeartbeatInterval(100*time.Millisecond))
	ctx := testCtx(t)
	_, ev := openDiscordgo(t, w.sim)
	if err := w.sim.WithholdACKs(1000); err != nil {
		t.Fatal(err)
	}
	if _, err := w.sim.Post(ctx, w.alice, w.text, "while unacknowledged"); err != nil {
		t.Fatal(err)
	}
	// Under heavy load discordgo may also have reconnected before; count
	// from what was recorded when the fault started.
	if _, err := waitGateway(ctx, w.sim, GatewayResumed, 1); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, isMessage("while unacknowledged"))
	if _, err := w.sim.Post(ctx, w.alice, w.text, "after missed acks"); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, isMessage("after missed acks"))
}
