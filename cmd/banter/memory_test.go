package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store/storetest"
)

// memoryExtraction is the scripted memoryLlm: every "I have a KIND named NAME" line of the
// batch becomes the fact "AUTHOR has a KIND named NAME" about its author; nothing else does.
func memoryExtraction(r openaisim.Request) openaisim.Reply {
	line := regexp.MustCompile(`(?m)^\[msg (\S+)\] (.+?) \(user id (\d+)\): .*?\bI have an? (\w+) named (\w+)`)
	var facts []string
	for _, m := range line.FindAllStringSubmatch(r.LastUser, -1) {
		facts = append(facts, fmt.Sprintf(`{"subject":%q,"statement":"%s has a %s named %s","source_message_ids":[%q],"supersedes":0,"same_as":0}`,
			m[3], m[2], m[4], m[5], m[1]))
	}
	return openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: `{"facts":[` + strings.Join(facts, ",") + `]}`}}}
}

const memoryConfig = `memoryLlm:
  model: memory-model
embeddings:
  enabled: true
memory:
  enabled: true
  batchMessages: 2
  quietSeconds: 86400
activity:
  replyLevelInitiative: 0
  replyLevelNonInitiative: 0
  replyCoalesceWindowSeconds: 0
`

// TestMemoryEndToEnd runs `banter run` with memory and embeddings on, on SQLite and on Postgres
// (with pgvector where the server has it): a fact alice
// tells in #general reaches the prompt of bob's question in #random; a deleted message takes its
// fact with it; a paused member's words never reach the memory model; and after alice's
// /memory forget-me, no table of the database holds her id or the words of her messages, nor an
// embedding of them.
func TestMemoryEndToEnd(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			testMemoryEndToEnd(t, driver)
		})
	}
}

func testMemoryEndToEnd(t *testing.T, driver string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var random discordsim.ChannelID
	b := startBot(t, ctx, nil, "", memoryConfig, func(b *botProcess) {
		random = b.dsim.CreateTextChannel(b.guild, "random")
		if driver == "postgres" {
			b.storeDriver, b.storeDSN = "postgres", sharedDatabase(ctx, t)
		}
		b.osim.AddRule(openaisim.Rule{Name: "memory", Match: openaisim.Match{Model: "memory-model"}, Respond: memoryExtraction})
	})
	defer b.stop()
	say := func(u discordsim.UserID, ch discordsim.ChannelID, text string) discordsim.Message {
		t.Helper()
		m, err := b.dsim.Post(ctx, u, ch, text)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// extracted waits for the extraction of the batch holding message id (the gateway's events
	// are handled concurrently: a batch's order is not the posting order).
	extracted := func(id discordsim.MessageID) {
		t.Helper()
		if !b.logs.wait(ctx, func() bool {
			for _, l := range b.logs.since(0) {
				if ids, _ := l["message_ids"].([]any); l.msg() == "memory_extracted" && slices.Contains(ids, any(string(id))) {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("message %s never extracted\n%s", id, b.logs.String())
		}
	}
	memoryPrompts := func() string {
		var all []string
		for _, r := range b.osim.Requests() {
			if r.Model == "memory-model" {
				all = append(all, r.LastUserText)
			}
		}
		return strings.Join(all, "\n")
	}

	// A fact told in #general, asked about by someone else in #random.
	cat := say(b.alice, b.ch, "I have a cat named Miso")
	extracted(say(b.alice, b.ch, "she is orange").ID)
	question := say(b.bob, random, discordsim.MentionUser(b.dsim.BotID())+" what is the name of alice's cat?")
	if _, err := simtest.WaitMessage(ctx, b.dsim, func(m discordsim.Message) bool {
		return m.Author == b.dsim.BotID() && m.ChannelID == random
	}); err != nil {
		t.Fatalf("no reply in #random: %v\n%s", err, b.logs.String())
	}
	prompt := ""
	for _, r := range b.osim.RequestsFor(openaisim.EndpointResponses) {
		if strings.Contains(r.LastUserText, "Message to answer: msg "+string(question.ID)) {
			prompt = r.LastUserText
		}
	}
	if !strings.Contains(prompt, "alice has a cat named Miso") {
		t.Errorf("the reply prompt of bob's question does not carry alice's fact:\n%s", prompt)
	}

	// A deleted message takes its fact with it.
	dog := say(b.alice, b.ch, "I have a dog named Rex")
	extracted(say(b.alice, b.ch, "he is a good boy").ID)
	if hits, _ := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{"named Rex"}); !inTable(hits, "facts") {
		t.Fatalf("the dog was never remembered: %+v", hits)
	}
	if err := b.dsim.Delete(ctx, dog.ID); err != nil {
		t.Fatal(err)
	}
	if !b.logs.wait(ctx, func() bool { return b.logs.count(0, "memory_facts_forgotten") > 0 }) {
		t.Fatalf("the deleted message's fact was not forgotten\n%s", b.logs.String())
	}
	if hits, _ := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{"named Rex"}); inTable(hits, "facts") {
		t.Errorf("the deleted message's fact is still stored: %+v", hits)
	}

	// A paused member's words are never extracted: bob's line would have closed a batch of two
	// with alice's first one, so the batch that goes holds alice's two lines only.
	waitCommands(t, ctx, b)
	invoke(t, ctx, b, b.bob, random, discordsim.CommandOption{Name: "pause", Type: 1})
	say(b.bob, b.ch, "I have a bird named Kiwi")
	say(b.alice, b.ch, "I have a fish named Nemo")
	extracted(say(b.alice, b.ch, "he is tiny").ID)
	if p := memoryPrompts(); strings.Contains(p, "Kiwi") || !strings.Contains(p, "Nemo") {
		t.Errorf("memory prompts (bob paused) =\n%s", p)
	}

	// forget-me: nothing of alice's is left in any table (the scan finds her before).
	if hits, _ := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{string(b.alice)}); !inTable(hits, "messages") || !inTable(hits, "facts") {
		t.Fatalf("before forget-me the scan does not find alice: %+v", hits)
	}
	if hits, _ := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{string(cat.ID)}); !inTable(hits, "message_embeddings") {
		t.Fatalf("before forget-me alice's message has no embedding: %+v", hits)
	}
	invoke(t, ctx, b, b.alice, random, discordsim.CommandOption{Name: "forget-me", Type: 1})
	if hits, _ := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{string(cat.ID)}); inTable(hits, "message_embeddings") {
		t.Errorf("after forget-me alice's message keeps its embedding: %+v", hits)
	}
	needles := []string{string(b.alice), cat.Content, "she is orange", "he is a good boy", "I have a fish named Nemo", "he is tiny", "named Miso"}
	hits, err := storetest.Scan(ctx, b.storeDriver, b.storeDSN, needles)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("after forget-me, %s holds %q: %s", h.Table, h.Needle, h.Row)
	}
	if tables, _ := storetest.Tables(ctx, b.storeDriver, b.storeDSN); len(tables) < 8 {
		t.Errorf("scanned only %v", tables)
	}
}

func inTable(hits []storetest.Hit, table string) bool {
	for _, h := range hits {
		if h.Table == table {
			return true
		}
	}
	return false
}

// waitCommands waits until the bot has registered its slash commands.
func waitCommands(t *testing.T, ctx context.Context, b *botProcess) {
	t.Helper()
	if !b.logs.wait(ctx, func() bool {
		for _, c := range b.dsim.Commands("") {
			if c.Name == "memory" {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the memory command was never registered")
	}
}

// invoke runs /memory SUB as u and waits for the answer.
func invoke(t *testing.T, ctx context.Context, b *botProcess, u discordsim.UserID, ch discordsim.ChannelID, sub discordsim.CommandOption) {
	t.Helper()
	ix, err := b.dsim.InvokeCommand(u, ch, "memory", sub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitInteractionResponse(ctx, b.dsim, ix.ID); err != nil {
		t.Fatalf("no answer to /memory %s: %v", sub.Name, err)
	}
}
