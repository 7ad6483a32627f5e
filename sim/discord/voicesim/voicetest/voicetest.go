// Package voicetest holds the testing.TB helpers for the Discord voice
// simulator (package voicesim). Only tests import it, so the production
// binary does not link the testing package.
package voicetest

import (
	"testing"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// Serve starts a voice simulator for a test and closes it in t.Cleanup. It
// fails the test if the server cannot start.
func Serve(t testing.TB, opts ...voicesim.Option) *voicesim.Server {
	t.Helper()
	var o voicesim.Options
	for _, f := range opts {
		f(&o)
	}
	s, err := voicesim.New(o)
	if err != nil {
		t.Fatalf("voicesim: start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("voicesim: close: %v", err)
		}
	})
	return s
}
