package store

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestUnembedded: the backfill's pages hold, newest first and a page after another, what has
// no vector of the model (or of the length asked): not bots', deleted, blank, paused members'
// or another guild's messages, nor retired facts; a member's rows said before their forget-me
// watermark are left out even if they were still stored, though the page's end counts them.
func TestUnembedded(t *testing.T) { forEachDriver(t, testUnembedded) }

func testUnembedded(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	save := func(id, guild, author, content string, minute int, bot bool) {
		t.Helper()
		if err := s.SaveMessage(ctx, Message{ID: id, ChannelID: "c", GuildID: guild, AuthorID: author, IsBot: bot,
			Content: content, CreatedAt: base.Add(time.Duration(minute) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	save("1", "g1", "u1", "one", 1, false)
	save("2", "g1", "u1", "two", 2, false)
	save("3", "g1", "u1", "three", 3, false)
	save("4", "g1", "u1", "four", 4, false)
	save("5", "g1", "u9", "five, of a forgotten member", 5, false)
	save("6", "g1", "u1", "six", 6, false)
	save("b", "g1", "bot", "a bot's", 7, true)
	save("d", "g1", "u1", "deleted", 8, false)
	save("w", "g1", "u1", "   ", 9, false)
	save("p", "g1", "u5", "a paused member's", 10, false)
	save("x", "g2", "u1", "another guild's", 11, false)
	if err := s.DeleteMessage(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMemoryPaused(ctx, "g1", "u5", true, base); err != nil {
		t.Fatal(err)
	}
	// u9's watermark is after message 5: as if it had been stored despite it.
	fs := factsOf(s)
	if err := recordForget(ctx, fs.db, "g1", "u9", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMessageEmbeddings(ctx, []MessageEmbedding{
		{MessageID: "2", Content: "two", Embedding: Embedding{Model: "a", Vector: []float32{1, 0, 0}}},
		{MessageID: "3", Content: "three", Embedding: Embedding{Model: "b", Vector: []float32{1, 0, 0}}},
	}); err != nil {
		t.Fatal(err)
	}
	pages := func(q BackfillQuery) [][]string {
		t.Helper()
		var out [][]string
		for range 10 {
			ms, end, err := s.UnembeddedMessages(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if end.At.IsZero() {
				return out
			}
			var ids []string
			for _, m := range ms {
				ids = append(ids, m.ID)
			}
			out = append(out, ids)
			q.From = end
		}
		t.Fatal("pages never end")
		return nil
	}
	q := BackfillQuery{GuildID: "g1", Model: "a", Limit: 2}
	if got, want := pages(q), [][]string{{"6"}, {"4", "3"}, {"1"}}; !equalPages(got, want) {
		t.Errorf("pages of model a = %v, want %v (5 forgotten, its page's end counted)", got, want)
	}
	q.Length = 4
	if got, want := pages(q), [][]string{{"6"}, {"4", "3"}, {"2", "1"}}; !equalPages(got, want) {
		t.Errorf("pages of model a, length 4 = %v, want %v (2's vector is 3 long)", got, want)
	}
	q.Length, q.NotAfter = 0, base.Add(3*time.Minute)
	if got, want := pages(q), [][]string{{"3", "1"}}; !equalPages(got, want) {
		t.Errorf("pages up to minute 3 = %v, want %v", got, want)
	}

	add := func(subject, statement string, minute int) Fact {
		t.Helper()
		f, err := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: subject, Statement: statement, CreatedAt: base.Add(time.Duration(minute) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	old := add("u1", "likes tea", 1)
	add("u5", "a paused member's fact", 2)
	if _, err := s.ReplaceFact(ctx, old.ID, Fact{GuildID: "g1", SubjectID: "u1", Statement: "likes coffee", CreatedAt: base.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	add(FactServer, "the server has a book club", 4)
	var got []string
	for from := (BackfillCursor{}); ; {
		page, end, err := s.UnembeddedFacts(ctx, BackfillQuery{GuildID: "g1", Model: "a", Limit: 1, From: from})
		if err != nil {
			t.Fatal(err)
		}
		if end.At.IsZero() {
			break
		}
		for _, f := range page {
			got = append(got, f.Statement)
		}
		from = end
	}
	if want := []string{"the server has a book club", "likes coffee"}; !slices.Equal(got, want) {
		t.Errorf("unembedded facts = %q, want %q (current ones, newest first, not the paused member's)", got, want)
	}

	if gs, err := s.EmbeddingGuilds(ctx); err != nil || !slices.Equal(gs, []string{"g1", "g2"}) {
		t.Errorf("guilds = %v, %v", gs, err)
	}
}

// equalPages compares pages of ids.
func equalPages(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

// factsOf is the facts logic of a store opened by the tests.
func factsOf(s Store) factsSQL {
	switch s := s.(type) {
	case *SQLite:
		return s.factsSQL
	case *Postgres:
		return s.factsSQL
	}
	panic("not a store of this package")
}

// TestBackfillLease: a guild's lease is the holder's until it ends or is released; the holder
// renews it, another takes it only once it has run out.
func TestBackfillLease(t *testing.T) { forEachDriver(t, testBackfillLease) }

func testBackfillLease(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	claim := func(holder string, at time.Time) bool {
		t.Helper()
		ok, err := s.ClaimBackfill(ctx, "g1", holder, at.Add(time.Minute), at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	steps := []struct {
		name   string
		holder string
		at     time.Duration
		want   bool
	}{
		{"first claim", "a", 0, true},
		{"another while held", "b", 30 * time.Second, false},
		{"the holder renews", "a", 50 * time.Second, true},
		{"another before the renewed end", "b", 100 * time.Second, false},
		{"another after it ran out", "b", 3 * time.Minute, true},
		{"the old holder now", "a", 3 * time.Minute, false},
	}
	for _, st := range steps {
		if got := claim(st.holder, now.Add(st.at)); got != st.want {
			t.Errorf("%s: claim = %v, want %v", st.name, got, st.want)
		}
	}
	if err := s.ReleaseBackfill(ctx, "g1", "a"); err != nil { // not a's: nothing happens
		t.Fatal(err)
	}
	if claim("a", now.Add(3*time.Minute)) {
		t.Error("a took b's lease after releasing a lease it did not hold")
	}
	if err := s.ReleaseBackfill(ctx, "g1", "b"); err != nil {
		t.Fatal(err)
	}
	if !claim("a", now.Add(3*time.Minute)) {
		t.Error("a could not take the lease b released")
	}
}

// TestEmbeddingOfRowDeletedMeanwhile: on Postgres, a vector saved while another connection
// deletes its message or fact (forget-me, in its transaction) waits for the delete and is then
// skipped like any vector of a row no longer stored, not an error (the foreign key's check).
func TestEmbeddingOfRowDeletedMeanwhile(t *testing.T) {
	s, _ := openPostgres(t)
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	if err := s.SaveMessage(ctx, Message{ID: "1", ChannelID: "c", GuildID: "g1", AuthorID: "u1", Content: "one", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	f, err := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "u1", Statement: "likes tea", CreatedAt: base})
	if err != nil {
		t.Fatal(err)
	}
	vec := Embedding{Model: "a", Vector: []float32{1, 0}}
	for _, c := range []struct {
		name, del string
		save      func() error
	}{
		{"message", `DELETE FROM messages WHERE id = '1'`, func() error {
			return s.SaveMessageEmbeddings(ctx, []MessageEmbedding{{MessageID: "1", Content: "one", Embedding: vec}})
		}},
		{"fact", `DELETE FROM facts WHERE id = ` + strconv.FormatInt(f.ID, 10), func() error { return s.SaveFactEmbedding(ctx, f.ID, vec) }},
	} {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, c.del); err != nil {
			t.Fatal(err)
		}
		saved := make(chan error, 1)
		go func() { saved <- c.save() }()
		for waiting := 0; waiting == 0; { // until the save waits for the delete's row lock
			if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-saved; err != nil {
			t.Errorf("%s: saving the vector of a row deleted meanwhile: %v, want it skipped", c.name, err)
		}
	}
	if n := rawCount(t, s, `SELECT (SELECT COUNT(*) FROM message_embeddings) + (SELECT COUNT(*) FROM fact_embeddings)`); n != 0 {
		t.Errorf("%d vectors stored of rows deleted", n)
	}
}
