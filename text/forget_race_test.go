package text_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/storetest"
)

// TestForgetMeWhileReplying: alice asks banter something; while its reply is with the model
// she runs /memory forget-me. banter still answers her on Discord, but its reply (derived from
// her words) is not stored after forget-me, neither from the send nor from its gateway echo;
// a message of hers said before forget-me and delivered only after it (a late gateway event:
// the clock set back) is neither stored nor answered; what she says after is stored as usual.
// Nothing of hers is left in the database.
func TestForgetMeWhileReplying(t *testing.T) {
	gate := openaitest.NewGate()
	held := toolReply("Miso", "reply", "", "Poor Miso! A vet visit sounds wise.")
	held.Latency = openaisim.Latency{TimeToFirstToken: openaitest.HeldDelay}
	noFacts := openaisim.Rule{Match: openaisim.Match{Model: "memory-model"}, Respond: func(openaisim.Request) openaisim.Reply {
		return openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: `{"facts":[]}`}}}
	}}
	h := newHarnessSims(t, false, nil, []openaisim.Option{gate.Option()}, func(c *config.Config) { memoryOn(c) }, noFacts, held)
	ctx := context.Background()
	asked := h.post(h.alice, "bants, my cat Miso is sick, what should I do?")
	if !gate.Arrived(h.ctx) {
		t.Fatalf("the reply never reached the model; logs:\n%s", h.tail())
	}
	if text, _ := h.slashMemory(h.alice, "forget-me"); !strings.Contains(text, "I forgot") {
		t.Fatalf("forget-me = %q", text)
	}
	gate.Release()
	reply := h.waitBot(1)
	if reply.ReplyTo() != asked.ID {
		t.Errorf("the reply answers %s, want her question %s", reply.ReplyTo(), asked.ID)
	}
	if h.settled(reply.ID, "ingest") {
		t.Error("banter's reply to her words, sent after forget-me, was stored")
	}
	h.clock.Advance(-time.Minute) // a message she sent before forget-me, delivered only now
	late := h.post(h.alice, "also Miso hates the carrier")
	if h.settled(late.ID, "ingest") {
		t.Error("her message from before forget-me was stored after it")
	}
	h.clock.Advance(2 * time.Minute)
	after := h.post(h.alice, "I adopted a dog named Rex")
	h.waitStored(after.ID, "after forget-me", func(store.Message) bool { return true })
	if n := len(h.botMessages()); n != 1 {
		t.Errorf("banter sent %d messages, want its one reply (not to the late message)", n)
	}
	hits, err := storetest.Scan(ctx, "sqlite", h.dbPath, []string{"Miso", "vet visit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range hits {
		t.Errorf("%s still holds %q after forget-me: %s", hit.Table, hit.Needle, hit.Row)
	}
	// Her id is only on what she said after forget-me.
	hits, _ = storetest.Scan(ctx, "sqlite", h.dbPath, []string{string(h.alice)})
	for _, hit := range hits {
		if !strings.Contains(hit.Row, string(after.ID)) && !strings.Contains(hit.Row, "Rex") {
			t.Errorf("%s still holds her id: %s", hit.Table, hit.Row)
		}
	}
}

// TestForgetMeThenHistory: Discord still has alice's messages after her forget-me; when a new
// process fetches the channel's history again (its catch-up, the first turn's backfill), her
// messages from before are not stored again.
func TestForgetMeThenHistory(t *testing.T) {
	h := newHarness(t, memoryOn, openaisim.Rule{Match: openaisim.Match{Model: "memory-model"}, Respond: func(openaisim.Request) openaisim.Reply {
		return openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: `{"facts":[]}`}}}
	}}, toolReply("hello", "reply", "", "Hi bob!"))
	said := h.post(h.alice, "my cat Miso loves the windowsill")
	h.waitStored(said.ID, "before forget-me", func(store.Message) bool { return true })
	if text, _ := h.slashMemory(h.alice, "forget-me"); !strings.Contains(text, "I forgot") {
		t.Fatalf("forget-me = %q", text)
	}
	h.restart()
	asked := h.post(h.bob, "bants, hello there")
	if r := h.waitBot(1); r.ReplyTo() != asked.ID {
		t.Fatalf("the reply answers %s, want %s", r.ReplyTo(), asked.ID)
	}
	if h.settled(said.ID, "") {
		t.Error("her message from before forget-me was stored again from Discord's history")
	}
	hits, err := storetest.Scan(context.Background(), "sqlite", h.dbPath, []string{"Miso", string(h.alice)})
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range hits {
		t.Errorf("%s holds %q after forget-me and a history fetch: %s", hit.Table, hit.Needle, hit.Row)
	}
}

// settled waits until message id is stored or its save refused (memory_write_refused by op, or
// by any with op "") and reports whether it is stored.
func (h *harness) settled(id discordsim.MessageID, op string) bool {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a failure guard, not a timing assertion
	for {
		if _, err := h.st.Message(h.ctx, string(id)); err == nil {
			return true
		}
		for _, line := range strings.Split(h.logs.String(), "\n") {
			if strings.Contains(line, `"msg":"memory_write_refused"`) && (op == "" || strings.Contains(line, `"op":"`+op+`"`)) && strings.Contains(line, string(id)) {
				return false
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("message %s neither stored nor refused; logs:\n%s", id, h.tail())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
