// Package openaitest holds the testing.TB helpers for the OpenAI simulator
// (package openaisim). Only tests import it, so the production binary,
// which embeds the simulator for `banter sim` and `banter sandbox`, does not
// link the testing package.
package openaitest

import (
	"testing"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// Serve starts an OpenAI simulator on 127.0.0.1 with a free port and closes
// it when the test ends. It fails the test if the simulator cannot start.
func Serve(t testing.TB, opts ...openaisim.Option) *openaisim.Server {
	t.Helper()
	s, err := openaisim.Start("127.0.0.1:0", opts...)
	if err != nil {
		t.Fatalf("openaisim: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("openaisim: close: %v", err)
		}
	})
	return s
}
