package store

import (
	"context"
	"testing"
	"time"
)

// TestMemoryChangesAcrossProcesses: two processes on one Postgres database. The one listening
// hears, once it listens (""), the guild of each memory change the other commits: a fact
// learned, corrected and deleted, a pause, a forget-me; and nothing of a transaction that did
// not commit (a fact refused after forget-me). On SQLite there is nothing to listen to.
func TestMemoryChangesAcrossProcesses(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		s, _ := openTemp(t)
		if err := s.MemoryChanges(context.Background(), func(string) { t.Error("a SQLite store reported a change") }); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		writer, dsn := openPostgres(t)
		listener, err := OpenPostgres(context.Background(), dsn, PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { listener.Close() })
		testMemoryChanges(t, writer, listener)
	})
}

func testMemoryChanges(t *testing.T, writer Store, listener *Postgres) {
	ctx, cancel := context.WithCancel(context.Background())
	heard := make(chan string, 64)
	done := make(chan error, 1)
	go func() { done <- listener.MemoryChanges(ctx, func(g string) { heard <- g }) }()
	next := func(what string) string {
		t.Helper()
		select {
		case g := <-heard:
			return g
		case err := <-done:
			t.Fatalf("%s: listening ended: %v", what, err)
		case <-time.After(30 * time.Second): // a bound on a test gone wrong, not a measure
			t.Fatalf("%s: no notification", what)
		}
		return ""
	}
	expect := func(what, want string) {
		t.Helper()
		if g := next(what); g != want {
			t.Errorf("%s: heard %q, want %q", what, g, want)
		}
	}
	expect("listening", "")
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cat, err := writer.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "u1", Statement: "has a cat", SourceIDs: []string{"m1"}, CreatedAt: base})
	must(err)
	expect("fact added", "g1")
	_, err = writer.ReplaceFact(ctx, cat.ID, Fact{GuildID: "g1", SubjectID: "u1", Statement: "has two cats", SourceIDs: []string{"m2"}, CreatedAt: base})
	must(err)
	expect("fact corrected (one transaction, one notification)", "g1")
	must(writer.SetMemoryPaused(ctx, "g2", "u2", true, base))
	expect("pause", "g2")
	dog, err := writer.AddFact(ctx, Fact{GuildID: "g3", SubjectID: "u3", Statement: "has a dog", SourceIDs: []string{"m3"}, CreatedAt: base})
	must(err)
	expect("fact added", "g3")
	must(writer.DeleteFact(ctx, "g3", dog.ID))
	expect("fact deleted", "g3")
	_, err = writer.AddFact(ctx, Fact{GuildID: "g4", SubjectID: "u4", Statement: "likes tea", SourceIDs: []string{"m4"}, CreatedAt: base})
	must(err)
	expect("fact added", "g4")
	_, err = writer.ForgetMember(ctx, "g4", "u4", base.Add(time.Hour))
	must(err)
	expect("forget-me", "g4")
	if _, err := writer.AddFact(ctx, Fact{GuildID: "g4", SubjectID: "u4", Statement: "likes coffee", SourceIDs: []string{"m5"}, CreatedAt: base}); err == nil {
		t.Fatal("a fact about a forgotten member from before forget-me was stored")
	}
	_, err = writer.AddFact(ctx, Fact{GuildID: "g5", SubjectID: "u5", Statement: "plays bass", SourceIDs: []string{"m6"}, CreatedAt: base})
	must(err)
	expect("fact added after a refused one (which notified nothing)", "g5")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("listening ended with %v when its context ended, want nil", err)
	}
}
