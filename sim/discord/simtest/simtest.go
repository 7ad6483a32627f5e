// Package simtest holds the testing.TB helpers for the Discord simulator
// (package discordsim). Only tests import it, so the production binary,
// which embeds the simulator for `banter sim` and `banter sandbox`, does not
// link the testing package.
package simtest

import (
	"testing"

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
