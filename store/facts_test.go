package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/store/storetest"
)

// forEachDriverAt is forEachDriver with the driver's name and DSN, for tests that look inside
// the database (storetest.Scan).
func forEachDriverAt(t *testing.T, test func(t *testing.T, s Store, driver, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		s, path := openTemp(t)
		test(t, s, "sqlite", path)
	})
	t.Run("postgres", func(t *testing.T) {
		s, dsn := openPostgres(t)
		test(t, s, "postgres", dsn)
	})
}

func statements(fs []Fact) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Statement)
	}
	return strings.Join(out, "; ")
}

func TestFactsLifecycle(t *testing.T) { forEachDriver(t, testFactsLifecycle) }

func testFactsLifecycle(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	cat, err := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "u1", SubjectName: "Alice", Statement: "has a cat named Miso",
		SourceIDs: []string{"m1", "m1", ""}, CreatedAt: base})
	if err != nil || cat.ID == 0 {
		t.Fatalf("add = %+v, %v", cat, err)
	}
	city, _ := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "u1", SubjectName: "Alice", Statement: "lives in Berlin",
		SourceIDs: []string{"m2"}, CreatedAt: base.Add(time.Minute)})
	s.AddFact(ctx, Fact{GuildID: "g2", SubjectID: "u1", SubjectName: "Alice", Statement: "lives in Lisbon", SourceIDs: []string{"x1"}, CreatedAt: base})
	s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: FactServer, Statement: "movie night is on Fridays", SourceIDs: []string{"m3"}, CreatedAt: base})

	// A duplicate merges into the fact it repeats.
	if err := s.AddFactSources(ctx, "g1", cat.ID, []string{"m4", "m1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AddFactSources(ctx, "g2", cat.ID, []string{"m9"}, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("sources added across guilds: %v", err)
	}
	// A correction retires the old fact: history keeps it, current facts do not show it.
	moved, err := s.ReplaceFact(ctx, city.ID, Fact{GuildID: "g1", SubjectID: "u1", SubjectName: "Alice",
		Statement: "moved to Paris", SourceIDs: []string{"m5"}, CreatedAt: base.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReplaceFact(ctx, city.ID, Fact{GuildID: "g1", SubjectID: "u1", Statement: "again"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a retired fact superseded again: %v", err)
	}
	if _, err := s.ReplaceFact(ctx, moved.ID, Fact{GuildID: "g2", SubjectID: "u1", Statement: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a fact superseded from another guild: %v", err)
	}
	cur, err := s.Facts(ctx, FactQuery{GuildID: "g1", SubjectIDs: []string{"u1"}})
	if err != nil || statements(cur) != "moved to Paris; has a cat named Miso" {
		t.Fatalf("current = %q, %v", statements(cur), err)
	}
	if got := cur[1].SourceIDs; strings.Join(got, ",") != "m1,m4" {
		t.Errorf("merged sources = %v", got)
	}
	all, _ := s.Facts(ctx, FactQuery{GuildID: "g1", SubjectIDs: []string{"u1"}, History: true})
	if len(all) != 3 || all[1].Statement != "lives in Berlin" || all[1].SupersededBy != moved.ID || all[1].Current() {
		t.Errorf("history = %+v", all)
	}
	// Words find facts by statement and subject name, most words first, never across guilds.
	found, _ := s.Facts(ctx, FactQuery{GuildID: "g1", Text: "What is Alice's CAT called?"})
	if len(found) == 0 || found[0].Statement != "has a cat named Miso" {
		t.Errorf("search = %q", statements(found))
	}
	if found, _ := s.Facts(ctx, FactQuery{GuildID: "g1", Text: "Lisbon"}); len(found) != 0 {
		t.Errorf("search crossed guilds: %q", statements(found))
	}
	if found, _ := s.Facts(ctx, FactQuery{GuildID: "g1", Text: "%_' OR 1=1 --"}); len(found) != 0 {
		t.Errorf("syntax in a query matched: %q", statements(found))
	}
	if _, err := s.Facts(ctx, FactQuery{}); err == nil {
		t.Error("facts without a guild")
	}
	// Locked facts are not superseded.
	locked, _ := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "u2", Statement: "is vegetarian", Locked: true, CreatedAt: base})
	if _, err := s.ReplaceFact(ctx, locked.ID, Fact{GuildID: "g1", SubjectID: "u2", Statement: "eats meat"}); !errors.Is(err, ErrFactLocked) {
		t.Errorf("locked fact superseded: %v", err)
	}
	if err := s.DeleteFact(ctx, "g2", locked.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("fact deleted from another guild: %v", err)
	}
	if err := s.DeleteFact(ctx, "g1", locked.ID); err != nil {
		t.Error(err)
	}
	if _, err := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "u1", Statement: "  "}); err == nil {
		t.Error("empty statement stored")
	}
}

func TestForgetMessage(t *testing.T) { forEachDriver(t, testForgetMessage) }

func testForgetMessage(t *testing.T, s Store) {
	ctx := context.Background()
	s.AddFact(ctx, Fact{GuildID: "g", SubjectID: "u1", Statement: "only from m1", SourceIDs: []string{"m1"}})
	s.AddFact(ctx, Fact{GuildID: "g", SubjectID: "u1", Statement: "from m1 and m2", SourceIDs: []string{"m1", "m2"}})
	s.AddFact(ctx, Fact{GuildID: "g", SubjectID: "u1", Statement: "from m3", SourceIDs: []string{"m3"}})
	n, err := s.ForgetMessage(ctx, "m1")
	if err != nil || n != 1 {
		t.Fatalf("forget message = %d, %v; want 1", n, err)
	}
	fs, _ := s.Facts(ctx, FactQuery{GuildID: "g"})
	if statements(fs) != "from m3; from m1 and m2" && statements(fs) != "from m1 and m2; from m3" {
		t.Errorf("left = %q", statements(fs))
	}
	for _, f := range fs {
		for _, src := range f.SourceIDs {
			if src == "m1" {
				t.Errorf("m1 still a source of %q", f.Statement)
			}
		}
	}
}

func TestMemoryPause(t *testing.T) { forEachDriver(t, testMemoryPause) }

func testMemoryPause(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		paused bool
		g1, g2 bool
	}{{true, true, false}, {true, true, false}, {false, false, false}} {
		if err := s.SetMemoryPaused(ctx, "g1", "u1", step.paused, now); err != nil {
			t.Fatal(err)
		}
		p1, _ := s.MemoryPaused(ctx, "g1", "u1")
		p2, _ := s.MemoryPaused(ctx, "g2", "u1")
		if p1 != step.g1 || p2 != step.g2 {
			t.Errorf("after paused=%v: g1 %v, g2 %v", step.paused, p1, p2)
		}
	}
}

func TestPruneFacts(t *testing.T) { forEachDriver(t, testPruneFacts) }

func testPruneFacts(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	s.AddFact(ctx, Fact{GuildID: "g", SubjectID: "u", Statement: "old", SourceIDs: []string{"m1"}, CreatedAt: base})
	s.AddFact(ctx, Fact{GuildID: "g", SubjectID: "u", Statement: "new", CreatedAt: base.Add(48 * time.Hour)})
	n, err := s.PruneFacts(ctx, base.Add(24*time.Hour))
	if fs, _ := s.Facts(ctx, FactQuery{GuildID: "g"}); err != nil || n != 1 || statements(fs) != "new" {
		t.Errorf("prune = %d, %v; left %q", n, err, statements(fs))
	}
}

// TestForgetMember: every fact about the member, or from their messages, every message of
// theirs and what points at them leave the guild; a look at every table of the database finds
// neither their id nor their words. Another guild, and other members, keep theirs.
func TestForgetMember(t *testing.T) { forEachDriverAt(t, testForgetMember) }

func testForgetMember(t *testing.T, s Store, driver, dsn string) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	const who, secret = "424242424242", "zanzibar marmalade"
	save := func(id, guild, author, content, replyTo string) {
		t.Helper()
		if err := s.SaveMessage(ctx, Message{ID: id, ChannelID: "c-" + guild, GuildID: guild, AuthorID: author, AuthorName: "name-" + author,
			Content: content, CreatedAt: base, ReplyToID: replyTo}); err != nil {
			t.Fatal(err)
		}
	}
	save("m1", "g1", who, "I love "+secret, "")
	save("m2", "g1", "bob", "nice", "m1")
	save("m3", "g2", who, "other guild", "")
	if err := s.SaveMessage(ctx, Message{ID: "m4", ChannelID: "c-g1", GuildID: "g1", AuthorID: "bot", IsSelf: true,
		Content: "so you love " + secret + "?", CreatedAt: base, ReplyToID: "m1"}); err != nil {
		t.Fatal(err)
	}
	s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: who, SubjectName: "name-" + who, Statement: "loves " + secret, SourceIDs: []string{"m1"}})
	s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: FactServer, Statement: "server likes " + secret, SourceIDs: []string{"m1"}})
	s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: "bob", Statement: "bob says nice", SourceIDs: []string{"m2"}})
	s.AddFact(ctx, Fact{GuildID: "g2", SubjectID: who, Statement: "kept elsewhere", SourceIDs: []string{"m3"}})
	s.RecordPrompt(ctx, Prompt{ChannelID: "c-g1", UserID: who, Kind: PromptExplicit, At: base})
	s.OpenTurn(ctx, Turn{MessageID: "m1", ChannelID: "c-g1", GuildID: "g1", AdmittedAt: base})
	embedAll(t, s, "g1", "g2")

	r, err := s.ForgetMember(ctx, "g1", who, base.Add(time.Hour))
	if err != nil || r.Facts != 2 || r.Messages != 1 || r.Replies != 1 {
		t.Fatalf("forget = %+v, %v; want 2 facts, 1 message, 1 reply", r, err)
	}
	hits, err := storetest.Scan(ctx, driver, dsn, []string{secret, "marmalade"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("%s still holds %q: %s", h.Table, h.Needle, h.Row)
	}
	// Their id remains only with what they keep in the other guild.
	hits, _ = storetest.Scan(ctx, driver, dsn, []string{who})
	for _, h := range hits {
		if !strings.Contains(h.Row, "g2") && !strings.Contains(h.Row, "kept elsewhere") && !strings.Contains(h.Row, "other guild") {
			t.Errorf("%s still holds their id: %s", h.Table, h.Row)
		}
	}
	if m, _ := s.Message(ctx, "m2"); m.ReplyToID != "" || m.Content != "nice" {
		t.Errorf("bob's reply = %+v, want kept without the link", m)
	}
	if fs, _ := s.Facts(ctx, FactQuery{GuildID: "g1"}); statements(fs) != "bob says nice" {
		t.Errorf("g1 left = %q", statements(fs))
	}
	if fs, _ := s.Facts(ctx, FactQuery{GuildID: "g2"}); statements(fs) != "kept elsewhere" {
		t.Errorf("g2 left = %q", statements(fs))
	}
	// Their messages' and facts' embeddings went with them; bob's stay.
	if got := rawCount(t, s, `SELECT COUNT(*) FROM message_embeddings WHERE guild_id='g1'`); got != 1 {
		t.Errorf("%d message embeddings left in g1, want bob's 1", got)
	}
	if got := rawCount(t, s, `SELECT COUNT(*) FROM fact_embeddings WHERE guild_id='g1'`); got != 1 {
		t.Errorf("%d fact embeddings left in g1, want bob's 1", got)
	}
	tables, _ := storetest.Tables(ctx, driver, dsn)
	for _, want := range []string{"messages", "facts", "fact_sources", "prompt_ledger", "turns", "memory_pauses", "memory_forgets", "message_embeddings", "fact_embeddings"} {
		if !strings.Contains(","+strings.Join(tables, ",")+",", ","+want+",") {
			t.Errorf("scan did not read %s (read %v)", want, tables)
		}
	}
	if _, err := s.ForgetMember(ctx, "", who, base); err == nil {
		t.Error("forget without a guild")
	}
}

// TestRankFacts: a fact is found by its words in other forms ("live" finds "lives"); the
// glue of a question ("what", "is", the s of "alice's") finds nothing; a rarer shared word
// outweighs a common one; ties go to the newest.
func TestRankFacts(t *testing.T) {
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	fs := []Fact{
		{ID: 1, SubjectName: "alice", Statement: "alice lives in Berlin", CreatedAt: base},
		{ID: 2, SubjectName: "bob", Statement: "bob's favourite food is ramen", CreatedAt: base.Add(time.Hour)},
		{ID: 3, SubjectName: "carol", Statement: "carol's favourite food is tacos", CreatedAt: base.Add(2 * time.Hour)},
		{ID: 4, SubjectName: "alice", Statement: "alice works as a nurse", CreatedAt: base.Add(3 * time.Hour)},
	}
	for _, tc := range []struct{ q, want string }{
		{"where does alice live?", "alice lives in Berlin; alice works as a nurse"},
		{"what is bob's favourite food?", "bob's favourite food is ramen; carol's favourite food is tacos"},
		{"what is it?", ""},
		{"who is working?", "alice works as a nurse"},
	} {
		if got := statements(rankFacts(fs, factTerms(tc.q), 5)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.q, got, tc.want)
		}
	}
}
