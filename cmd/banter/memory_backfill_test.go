package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/storetest"
)

// TestMemoryBackfillEndToEnd runs `banter run` with embeddings and their backfill on, on a
// store (SQLite, Postgres) that holds messages and a fact from before embeddings were on: the
// backfill embeds them all (newest first, a page a call), logs memory_backfill_done, and
// each is in the embeddings tables; a member's message stored after the member paused memory
// is not sent.
func TestMemoryBackfillEndToEnd(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			testMemoryBackfillEndToEnd(t, driver)
		})
	}
}

// backfillConfig is memoryConfig with the backfill on, a page of two at the fastest pace.
var backfillConfig = strings.Replace(memoryConfig, "embeddings:\n  enabled: true\n",
	"embeddings:\n  enabled: true\n  backfill:\n    enabled: true\n    batchSize: 2\n    batchesPerMinute: 600\n", 1)

func testMemoryBackfillEndToEnd(t *testing.T, driver string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	old := time.Now().Add(-48 * time.Hour)
	seeded := []store.Message{
		{ID: "9001", AuthorName: "alice", Content: "my kitten Miso knocked my coffee over"},
		{ID: "9002", AuthorName: "bob", Content: "I work at the bakery on Main Street"},
		{ID: "9003", AuthorName: "alice", Content: "off to the shops"},
		{ID: "9004", AuthorName: "carol", Content: "falconry is my secret hobby"},
	}
	b := startBot(t, ctx, nil, "", backfillConfig, func(b *botProcess) {
		b.storeDriver, b.storeDSN = "sqlite", filepath.Join(t.TempDir(), "banter.db")
		if driver == "postgres" {
			b.storeDriver, b.storeDSN = "postgres", sharedDatabase(ctx, t)
		}
		st, err := store.OpenDriver(ctx, b.storeDriver, b.storeDSN)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		authors := map[string]string{"alice": string(b.alice), "bob": string(b.bob), "carol": "777000777"}
		for i, m := range seeded {
			m.GuildID, m.ChannelID, m.AuthorID = string(b.guild), string(b.ch), authors[m.AuthorName]
			m.CreatedAt = old.Add(time.Duration(i) * time.Minute)
			if err := st.SaveMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.AddFact(ctx, store.Fact{GuildID: string(b.guild), SubjectID: string(b.alice), SubjectName: "alice",
			Statement: "alice has a kitten named Miso", SourceIDs: []string{"9001"}, CreatedAt: old}); err != nil {
			t.Fatal(err)
		}
		if err := st.SetMemoryPaused(ctx, string(b.guild), "777000777", true, old); err != nil {
			t.Fatal(err)
		}
	})
	defer b.stop()

	if !b.logs.wait(ctx, func() bool {
		for _, l := range b.logs.since(0) {
			if l.msg() == "memory_backfill_done" && l["messages"] == float64(3) && l["facts"] == float64(1) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no memory_backfill_done with 3 messages and 1 fact\n%s", b.logs.String())
	}
	for _, id := range []string{"9001", "9002", "9003"} {
		if hits, _ := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{id}); !inTable(hits, "message_embeddings") {
			t.Errorf("message %s has no embedding after the backfill: %+v", id, hits)
		}
	}
	var sent []string
	for _, r := range b.osim.RequestsFor(openaisim.EndpointEmbeddings) {
		sent = append(sent, r.Prompt)
	}
	all := strings.Join(sent, "\n")
	if strings.Contains(all, "falconry") {
		t.Errorf("a paused member's words were sent to be embedded:\n%s", all)
	}
	if !strings.Contains(all, "off to the shops\nI work at the bakery on Main Street") {
		t.Errorf("the newest two messages were not embedded in one call, newest first:\n%s", all)
	}
}
