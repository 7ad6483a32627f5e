package discord

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

// TestOpenStoppable: a log-in blocked on a gateway that accepted the connection and sends
// nothing (discordgo's Open waits for Hello without a deadline) ends when its context is
// cancelled, and on its own after OpenTimeout; both leave no session open.
func TestOpenStoppable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		want    string
	}{
		{"cancelled", time.Hour, true, "context canceled"},
		{"silent gateway", 50 * time.Millisecond, false, "no READY within 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := simtest.Serve(t)
			sim.SetGatewayLatency(time.Hour) // Hello and everything after it are held back
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			sh, err := NewShards(ctx, ShardOptions{Session: SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL()},
				OpenTimeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- sh.Open(ctx) }()
			guard, stop := context.WithTimeout(t.Context(), 60*time.Second)
			defer stop()
			if tc.cancel {
				// Cancel once the socket is up and waiting for its Hello.
				if _, err := simtest.WaitGateway(guard, sim, discordsim.GatewayConnected, 1); err != nil {
					t.Fatal(err)
				}
				cancel()
			}
			select {
			case err = <-done:
			case <-guard.Done():
				t.Fatal("Open did not return")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want an error saying %q", err, tc.want)
			}
			if tc.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("Open = %v, want it to wrap context.Canceled", err)
			}
		})
	}
}
