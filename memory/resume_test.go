package memory

import (
	"context"
	"testing"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestResumeAfterStop: a stop whose deadline passes with a batch still at the model (Close
// cancels it) leaves the channel's cursor before the batch; the next extractor on the store
// queues those messages again at Resume and extracts them; a Resume after that queues nothing,
// in the same extractor (already queued) or the next one (the cursor moved past them).
func TestResumeAfterStop(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			gate := openaitest.NewGate()
			h := newHarnessOn(t, 2, driver, gate.Option())
			held := openaisim.Rule{Name: "held", Match: openaisim.Match{Model: "memory-model"}, Times: 1,
				Latency: openaisim.Latency{TimeToFirstToken: openaitest.HeldDelay}}
			if err := h.sim.AddRule(held); err != nil {
				t.Fatal(err)
			}
			h.say("1", "g1", "u1", "Alice", "I live in Berlin")
			h.say("2", "g1", "u2", "Bob", "I play bass")
			ctx := context.Background()
			if !gate.Arrived(ctx) {
				t.Fatal("the batch never reached the model")
			}
			stopped, cancel := context.WithCancel(ctx)
			cancel() // the stop's deadline has passed
			if err := h.ex.Close(stopped); err == nil {
				t.Error("Close past its deadline with a batch at the model reported no error")
			}
			gate.Release()

			next := h.extractor(t)
			h.answer(`{"facts":[{"subject":"u1","statement":"Alice lives in Berlin","source_message_ids":["1"],"supersedes":0,"same_as":0}]}`)
			if n := next.Resume(ctx, "g1"); n != 2 {
				t.Fatalf("Resume queued %d messages, want the 2 the stopped extractor had not extracted", n)
			}
			next.Flush()
			if got := h.current("g1"); got != "Alice lives in Berlin" {
				t.Errorf("facts after the resumed batch: %q", got)
			}
			if n := next.Resume(ctx, "g1"); n != 0 {
				t.Errorf("a second Resume queued %d messages again", n)
			}
			if n := h.extractor(t).Resume(ctx, "g1"); n != 0 {
				t.Errorf("the extractor after that queued %d extracted messages again", n)
			}
			if n := h.extractor(t).Resume(ctx, "g2"); n != 0 {
				t.Errorf("a guild without cursors: %d", n)
			}
			if reqs := h.memoryRequests(); len(reqs) != 2 {
				t.Errorf("%d extraction calls, want 2 (the cancelled one and the resumed one)", len(reqs))
			}
		})
	}
}

// TestObserveQueuesOnce: a message observed twice with the same words is extracted once; an
// edit (DropMessage, then Observe) queues it again even when its words did not change, as a
// MESSAGE_UPDATE re-extracts.
func TestObserveQueuesOnce(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	h.answer(`{"facts":[]}`)
	h.say("1", "g1", "u1", "Alice", "I live in Berlin")
	m, err := h.st.Message(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if h.ex.Observe(ctx, m) {
		t.Error("the same message with the same words was queued twice")
	}
	h.ex.DropMessage("1")
	h.answer(`{"facts":[]}`)
	if !h.ex.Observe(ctx, m) {
		t.Error("an edited message was not queued again")
	}
	h.ex.Flush()
	if reqs := h.memoryRequests(); len(reqs) != 2 {
		t.Errorf("%d extraction calls, want 2", len(reqs))
	}
}

// extractor is a new Extractor on the harness's store and simulator, as the next process's.
func (h *harness) extractor(t *testing.T) *Extractor {
	t.Helper()
	client, err := llm.New(llm.Options{BaseURL: h.sim.BaseURL(), APIKey: "sk", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := New(Options{Config: func() *config.Config { return h.cfg }, Store: h.st, Model: client, Metrics: NewMetrics(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close(context.Background()) })
	return ex
}
