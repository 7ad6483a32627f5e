package main

import (
	"context"
	"strings"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestRequestBudgetDeclinesWithApology: `banter run` with llm.requestsPerMinute 1 (SQLite: the
// process's own budget). The first addressed message is answered; the second, asked right
// after, has no slot within the wait (the next one is a minute away): its model request is
// never sent, it is logged (llm_over_budget, reply_failed) and the asker gets the apology of a
// failed model call.
func TestRequestBudgetDeclinesWithApology(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startBot(t, ctx, nil, "", "  requestsPerMinute: 1\n", nil)
	defer b.stop()
	replyTo := func(id discordsim.MessageID) discordsim.Message {
		t.Helper()
		m, err := simtest.WaitMessage(ctx, b.dsim, func(m discordsim.Message) bool {
			return m.Author == b.dsim.BotID() && m.ReplyTo() == id
		})
		if err != nil {
			t.Fatalf("no reply to %s: %v\n%s", id, err, b.logs.String())
		}
		return m
	}
	first, err := b.post(ctx, b.alice, true, "what's the capital of France?")
	if err != nil {
		t.Fatal(err)
	}
	replyTo(first)
	second, err := b.post(ctx, b.alice, true, "and of Italy?")
	if err != nil {
		t.Fatal(err)
	}
	if r := replyTo(second); !strings.HasPrefix(r.Content, "Sorry") {
		t.Errorf("the turn over budget got %q, want the apology", r.Content)
	}
	if n := b.logs.count(0, "llm_over_budget"); n != 1 {
		t.Errorf("%d llm_over_budget lines, want 1\n%s", n, b.logs.String())
	}
	if n := len(b.osim.RequestsFor(openaisim.EndpointResponses)); n != 1 {
		t.Errorf("the model got %d requests, want 1 (the second was over budget)", n)
	}
}
