package llm

import (
	"context"
	"errors"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// TestRequestBudget: every attempt takes a slot of the provider's budget before it is sent; an
// attempt whose slot is further away than BudgetWait is not sent and fails with
// ErrorKindOverBudget, counted as that outcome. Slots an hour apart: the first request goes,
// the next has none within the wait. (store.LocalBudget is the budget of a single process.)
func TestRequestBudget(t *testing.T) {
	tests := []struct {
		name     string
		rule     openaisim.Rule
		calls    int
		sent     int // requests the simulator received
		attempts int // of the last call's error
	}{
		{name: "second request over budget", rule: openaisim.Rule{Name: "ok", Reply: openaisim.Reply{Text: "hi"}},
			calls: 2, sent: 1, attempts: 0},
		{name: "a retry takes a slot too", rule: openaisim.Rule{Name: "fault", Fault: openaisim.Fault{Status: 500}},
			calls: 1, sent: 1, attempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, Options{Budget: &store.LocalBudget{Interval: time.Hour}, BudgetWait: time.Second}, tt.rule)
			var err error
			for range tt.calls {
				_, err = env.client.Generate(context.Background(), convo)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Kind != ErrorKindOverBudget || apiErr.Retryable || apiErr.Attempts != tt.attempts {
				t.Fatalf("last call: %v (%+v), want over_budget after %d attempts", err, apiErr, tt.attempts)
			}
			if n := len(env.sim.Requests()); n != tt.sent {
				t.Errorf("simulator received %d requests, want %d", n, tt.sent)
			}
			if n := env.counter(t, "banter_llm_requests_total", map[string]string{"outcome": "over_budget"}); n != 1 {
				t.Errorf("over_budget outcomes counted: %v, want 1", n)
			}
		})
	}
}

// TestRequestBudgetWaits: a request whose slot is within the wait waits for it, then goes.
func TestRequestBudgetWaits(t *testing.T) {
	const interval = 300 * time.Millisecond
	env := newEnv(t, Options{Budget: &store.LocalBudget{Interval: interval}}, openaisim.Rule{Name: "ok", Reply: openaisim.Reply{Text: "hi"}})
	start := time.Now()
	for range 2 {
		if _, err := env.client.Generate(context.Background(), convo); err != nil {
			t.Fatal(err)
		}
	}
	if elapsed := time.Since(start); elapsed < interval {
		t.Errorf("two requests within %v, want at least the interval %v apart", elapsed, interval)
	}
	if n := env.counter(t, "banter_llm_budget_wait_seconds", map[string]string{"op": "generate"}); n != 2 {
		t.Errorf("budget waits observed: %v, want 2", n)
	}
}
