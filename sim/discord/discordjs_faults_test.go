package discordsim

import (
	"io"
	"testing"
	"time"
)

// TestDiscordJSGatewayFaults checks that discord.js survives every gateway
// fault the simulator can inject and keeps receiving messages.
func TestDiscordJSGatewayFaults(t *testing.T) {
	w := newWorld(t, WithHeartbeatInterval(400*time.Millisecond))
	ctx := testCtx(t)
	n := startNode(t, "faults.mjs", "SIM_API="+w.sim.APIBaseURL()+"/api", "SIM_TOKEN="+w.sim.Token())
	n.waitContent("ready", "")
	post := func(content string) {
		t.Helper()
		if _, err := w.sim.Post(ctx, w.alice, w.text, content); err != nil {
			t.Fatal(err)
		}
		n.waitContent("message", content)
	}
	post("before faults")
	tests := []struct {
		name   string
		fault  func() error
		expect GatewayEventKind // what the client must do next
	}{
		{"op 7 reconnect", w.sim.ForceReconnect, GatewayResumed},
		{"dropped socket", w.sim.DropGateway, GatewayResumed},
		{"missed ACK", func() error { return w.sim.WithholdACKs(1) }, GatewayResumed},
		{"op 9 resumable", func() error { return w.sim.ForceInvalidSession(true) }, GatewayResumed},
		{"op 9 not resumable", func() error { return w.sim.ForceInvalidSession(false) }, GatewayIdentified},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := w.sim.CountGateway(tc.expect)
			if err := tc.fault(); err != nil {
				t.Fatal(err)
			}
			if _, err := waitGateway(ctx, w.sim, tc.expect, before+1); err != nil {
				t.Fatal(err)
			}
			post("after " + tc.name)
		})
	}
	if _, err := io.WriteString(n.stdin, "quit\n"); err != nil {
		t.Fatal(err)
	}
	n.waitContent("done", "")
}
