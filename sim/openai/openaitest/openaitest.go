// Package openaitest holds the testing.TB helpers for the OpenAI simulator
// (package openaisim). Only tests import it, so the production binary,
// which embeds the simulator for `banter sim` and `banter sandbox`, does not
// link the testing package.
package openaitest

import (
	"sync"
	"testing"

	"github.com/banterbot/banter/sim/conform"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// Serve starts an OpenAI simulator on 127.0.0.1 with a free port and closes
// it when the test ends. It fails the test if the simulator cannot start.
//
// Every request it receives under /v1 and every Realtime client event is
// checked against OpenAI's official OpenAPI spec (package conform): at
// cleanup, after the simulator has closed, each one off the spec fails the
// test. A test that sends off-spec requests on purpose passes
// openaisim.WithoutConformance(). Benchmarks (a *testing.B) run without the
// check: they measure, and the check's CPU would be counted in what they
// measure.
func Serve(t testing.TB, opts ...openaisim.Option) *openaisim.Server {
	t.Helper()
	var mu sync.Mutex
	var violations []error
	report := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		violations = append(violations, err)
	}
	if _, bench := t.(*testing.B); !bench {
		spec, err := conform.OpenAI()
		if err != nil {
			t.Fatalf("openaitest: %v", err)
		}
		opts = append([]openaisim.Option{openaisim.WithConformance(spec, report)}, opts...)
	}
	s, err := openaisim.Start("127.0.0.1:0", opts...)
	if err != nil {
		t.Fatalf("openaisim: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("openaisim: close: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, err := range violations {
			t.Errorf("openaisim: a request off OpenAI's API spec: %v", err)
		}
	})
	return s
}
