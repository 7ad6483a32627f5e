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

// TestRequestBudgetWaits: a request whose slot is within the wait is told to wait for it (the
// wait the budget computed, observed in banter_llm_budget_wait_seconds), then goes: the first
// of two requests waits nothing, the second waits for the next slot.
func TestRequestBudgetWaits(t *testing.T) {
	const interval = 300 * time.Millisecond
	env := newEnv(t, Options{Budget: &store.LocalBudget{Interval: interval}}, openaisim.Rule{Name: "ok", Reply: openaisim.Reply{Text: "hi"}})
	for range 2 {
		if _, err := env.client.Generate(context.Background(), convo); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(env.sim.Requests()); n != 2 {
		t.Errorf("simulator received %d requests, want 2", n)
	}
	mfs, err := env.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var count uint64
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == "banter_llm_budget_wait_seconds" {
			for _, m := range mf.GetMetric() {
				count += m.GetHistogram().GetSampleCount()
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	if count != 2 || sum <= 0 || sum > interval.Seconds() {
		t.Errorf("budget waits: %d observed, %v s in all; want 2, the second waiting for its slot (0 < wait <= %v)", count, sum, interval)
	}
}
