package store

import (
	"context"
	"testing"
	"time"
)

// TestSQLiteReadsDoNotWaitForTheWriter holds the store's one write connection (as a long
// transaction or another goroutine's statement would) and reads: every read outside a
// transaction is served by the read-only pool, so it returns, and sees what was committed
// before it. With reads on the write connection, each of them would wait for it.
func TestSQLiteReadsDoNotWaitForTheWriter(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	if err := s.SaveMessage(ctx, Message{ID: "m1", ChannelID: "c1", GuildID: "g1", AuthorID: "u1", Content: "I like green tea", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "u1", Statement: "likes green tea", SourceIDs: []string{"m1"}, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMemoryPaused(ctx, "g1", "u2", true, at); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPrompt(ctx, Prompt{GuildID: "g1", ChannelID: "c1", UserID: "u1", SaidAt: at, Kind: PromptExplicit, At: at}); err != nil {
		t.Fatal(err)
	}

	writer, err := s.db.Conn(ctx) // the pool's only write connection, held to the test's end
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if _, err := writer.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer writer.ExecContext(ctx, "ROLLBACK")

	// A failure guard only: on a store whose reads share the write connection, the reads
	// below wait for it until this ends.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	checks := []struct {
		name string
		read func() (bool, error)
	}{
		{"message", func() (bool, error) { m, err := s.Message(rctx, "m1"); return m.Content == "I like green tea", err }},
		{"recent messages", func() (bool, error) {
			ms, err := s.RecentMessages(rctx, "c1", at.Add(time.Minute), 10)
			return len(ms) == 1, err
		}},
		{"search", func() (bool, error) {
			ms, err := s.SearchMessages(rctx, SearchQuery{GuildID: "g1", Text: "green"})
			return len(ms) == 1, err
		}},
		{"facts", func() (bool, error) {
			fs, err := s.Facts(rctx, FactQuery{GuildID: "g1", Text: "tea"})
			return len(fs) == 1 && fs[0].Statement == "likes green tea", err
		}},
		{"memory paused", func() (bool, error) { p, err := s.MemoryPaused(rctx, "g1", "u2"); return p, err }},
		{"prompt count", func() (bool, error) {
			n, err := s.CountPrompts(rctx, "c1", at.Add(-time.Minute))
			return n[PromptExplicit] == 1, err
		}},
	}
	for _, c := range checks {
		ok, err := c.read()
		if err != nil {
			t.Errorf("%s while the writer is held: %v", c.name, err)
		} else if !ok {
			t.Errorf("%s while the writer is held: does not see what was committed before", c.name)
		}
	}
}

// TestSQLiteReadPoolIsReadOnly: the read pool refuses writes, so a write sent to it by
// mistake fails instead of bypassing the one write connection that the forget-me watermark
// relies on.
func TestSQLiteReadPoolIsReadOnly(t *testing.T) {
	s, _ := openTemp(t)
	if s.rdb == s.db {
		t.Fatal("a file database has no separate read pool")
	}
	_, err := s.rdb.ExecContext(context.Background(), `DELETE FROM messages`)
	if err == nil {
		t.Fatal("a delete through the read pool succeeded")
	}
}

// TestSQLiteInMemoryHasOnePool: ":memory:" is one connection's private database, so reads
// and writes share it, and a read sees a write.
func TestSQLiteInMemoryHasOnePool(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	if err := s.SaveMessage(ctx, Message{ID: "m1", ChannelID: "c1", AuthorID: "u1", Content: "hi", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Message(ctx, "m1"); err != nil || m.Content != "hi" {
		t.Fatalf("read after write in memory: %+v, %v", m, err)
	}
}
