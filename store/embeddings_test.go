package store

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// vec is a unit vector at angle deg in the plane of the first two of four dimensions: the
// nearer two angles, the more similar.
func vec(deg float64) []float32 {
	r := deg * math.Pi / 180
	return []float32{float32(math.Cos(r)), float32(math.Sin(r)), 0, 0}
}

const testModel = "text-embedding-3-small"

// forEachVectorStore runs test on SQLite, on Postgres with pgvector (required when
// BANTER_REQUIRE_POSTGRES is set, as make test does after make pgvector-deps) and on Postgres
// searching in process (store.pgvector off).
func forEachVectorStore(t *testing.T, test func(t *testing.T, s Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s, _ := openTemp(t)
		if s.VectorSearch() != VectorSearchInProcess {
			t.Fatalf("sqlite searches %s", s.VectorSearch())
		}
		test(t, s)
	})
	t.Run("postgres-pgvector", func(t *testing.T) {
		s, _ := openPostgres(t)
		if s.VectorSearch() != VectorSearchPGVector {
			if os.Getenv("BANTER_REQUIRE_POSTGRES") != "" {
				t.Fatalf("pgvector not in use (run make pgvector-deps): %s", s.VectorUnavailable())
			}
			t.Skipf("pgvector not installed on the test server (make pgvector-deps): %s", s.VectorUnavailable())
		}
		test(t, s)
	})
	t.Run("postgres-in-process", func(t *testing.T) {
		s, _ := openPostgresWith(t, PostgresOptions{PGVector: PGVectorOff})
		if s.VectorSearch() != VectorSearchInProcess {
			t.Fatalf("store.pgvector off searches %s", s.VectorSearch())
		}
		test(t, s)
	})
}

// openPostgresWith opens a Postgres store with opts on a fresh database of the test cluster.
func openPostgresWith(t *testing.T, opts PostgresOptions) (*Postgres, string) {
	t.Helper()
	if pgCluster == nil {
		t.Skip("no PostgreSQL server binaries (install postgresql, or run make test)")
	}
	ctx := context.Background()
	dsn, err := pgCluster.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenPostgres(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dsn
}

// rawCount runs a COUNT query on the store's database, under the interface.
func rawCount(t *testing.T, s Store, q string) int {
	t.Helper()
	var n int
	var err error
	switch db := s.(type) {
	case *SQLite:
		err = db.db.QueryRow(q).Scan(&n)
	case *Postgres:
		err = db.pool.QueryRow(context.Background(), q).Scan(&n)
	default:
		t.Fatalf("rawCount on %T", s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// embedAll gives every stored message and fact of the guilds an embedding (angle by order).
func embedAll(t *testing.T, s Store, guilds ...string) {
	t.Helper()
	ctx := context.Background()
	for _, g := range guilds {
		recent, err := s.RecentMessages(ctx, "c-"+g, time.Time{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		var es []MessageEmbedding
		for i, m := range recent {
			es = append(es, MessageEmbedding{MessageID: m.ID, Content: m.Content, Embedding: Embedding{testModel, vec(float64(10 * i))}})
		}
		if err := s.SaveMessageEmbeddings(ctx, es); err != nil {
			t.Fatal(err)
		}
		fs, err := s.Facts(ctx, FactQuery{GuildID: g})
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range fs {
			if err := s.SaveFactEmbedding(ctx, f.ID, Embedding{testModel, vec(float64(10 * i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func ids(ms []ScoredMessage) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return strings.Join(out, ",")
}

func factStatements(fs []ScoredFact) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Statement)
	}
	return strings.Join(out, "; ")
}

// TestNearestMessages: messages come back nearest first, within their guild, the channels,
// the time bound and without the excluded authors; an edited or deleted message loses its
// embedding, an embedding of words the message no longer says is not stored, and vectors of
// another model or length are never compared.
func TestNearestMessages(t *testing.T) { forEachVectorStore(t, testNearestMessages) }

func testNearestMessages(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for i, m := range []Message{
		{ID: "a", ChannelID: "c1", GuildID: "g1", AuthorID: "u1", Content: "my cat is called Miso"},
		{ID: "b", ChannelID: "c1", GuildID: "g1", AuthorID: "u2", Content: "I work at a bakery"},
		{ID: "c", ChannelID: "c2", GuildID: "g1", AuthorID: "u1", Content: "I have a kitten"},
		{ID: "d", ChannelID: "c9", GuildID: "g2", AuthorID: "u1", Content: "a cat in another guild"},
		{ID: "e", ChannelID: "c1", GuildID: "g1", AuthorID: "u3", Content: "later words"},
	} {
		m.CreatedAt = base.Add(time.Duration(i) * time.Minute)
		if err := s.SaveMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	save := func(id, content string, e Embedding) {
		t.Helper()
		if err := s.SaveMessageEmbeddings(ctx, []MessageEmbedding{{MessageID: id, Content: content, Embedding: e}}); err != nil {
			t.Fatal(err)
		}
	}
	save("a", "my cat is called Miso", Embedding{testModel, vec(5)})
	save("b", "I work at a bakery", Embedding{testModel, vec(80)})
	save("c", "I have a kitten", Embedding{testModel, vec(15)})
	save("d", "a cat in another guild", Embedding{testModel, vec(0)})
	save("e", "what it said before", Embedding{testModel, vec(0)}) // not its words: skipped
	save("404", "never stored", Embedding{testModel, vec(0)})      // not stored: skipped
	q := VectorQuery{GuildID: "g1", Model: testModel, Vector: vec(0), Limit: 10}
	near := func(q VectorQuery) string {
		t.Helper()
		got, err := s.NearestMessages(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Similarity > got[i-1].Similarity+1e-6 {
				t.Errorf("not nearest first: %+v", got)
			}
		}
		return ids(got)
	}
	if got := near(q); got != "a,c,b" {
		t.Errorf("nearest = %s, want a,c,b (d in another guild, e embedded from other words)", got)
	}
	if got, _ := s.NearestMessages(ctx, q); len(got) > 0 && math.Abs(got[0].Similarity-math.Cos(5*math.Pi/180)) > 1e-3 {
		t.Errorf("similarity of a = %v, want cos 5°", got[0].Similarity)
	}
	narrowed := q
	narrowed.ChannelIDs, narrowed.ExcludeAuthorIDs, narrowed.Before = []string{"c1", "c2"}, []string{"u2"}, base.Add(150*time.Second)
	if got := near(narrowed); got != "a,c" {
		t.Errorf("narrowed = %s, want a,c", got)
	}
	other := q
	other.Model = "another-model"
	if got := near(other); got != "" {
		t.Errorf("another model's query found %s", got)
	}
	short := q
	short.Vector = []float32{1, 0}
	if got := near(short); got != "" {
		t.Errorf("a shorter vector's query found %s", got)
	}
	if err := s.EditMessage(ctx, "a", "my dog is called Rex", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMessage(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if got := near(q); got != "b" {
		t.Errorf("after an edit and a delete = %s, want b", got)
	}
	if n := rawCount(t, s, `SELECT COUNT(*) FROM message_embeddings WHERE message_id IN ('a','c')`); n != 0 {
		t.Errorf("%d embeddings of the edited and the deleted message left", n)
	}
	if _, err := s.NearestMessages(ctx, VectorQuery{GuildID: "g1", Vector: vec(0)}); err == nil {
		t.Error("a query without a model was accepted")
	}
	if err := s.SaveMessageEmbeddings(ctx, []MessageEmbedding{{MessageID: "b", Content: "I work at a bakery",
		Embedding: Embedding{testModel, []float32{float32(math.NaN())}}}}); err == nil {
		t.Error("a NaN vector was accepted")
	}
}

// TestNearestFacts: current facts of the guild nearest first, with their sources; a retired
// fact, a deleted fact and another guild's never; replacing an embedding moves the fact.
func TestNearestFacts(t *testing.T) { forEachVectorStore(t, testNearestFacts) }

func testNearestFacts(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	add := func(guild, statement string, deg float64) Fact {
		t.Helper()
		f, err := s.AddFact(ctx, Fact{GuildID: guild, SubjectID: "u1", Statement: statement, SourceIDs: []string{"m-" + statement}, CreatedAt: base})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveFactEmbedding(ctx, f.ID, Embedding{testModel, vec(deg)}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	cat := add("g1", "has a cat", 10)
	add("g1", "works at a bakery", 70)
	old := add("g1", "lives in Lyon", 30)
	add("g2", "has a cat elsewhere", 0)
	gone := add("g1", "likes kittens", 5)
	if _, err := s.ReplaceFact(ctx, old.ID, Fact{GuildID: "g1", SubjectID: "u1", Statement: "lives in Paris", CreatedAt: base.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteFact(ctx, "g1", gone.ID); err != nil {
		t.Fatal(err)
	}
	q := VectorQuery{GuildID: "g1", Model: testModel, Vector: vec(0), Limit: 10}
	got, err := s.NearestFacts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if factStatements(got) != "has a cat; works at a bakery" || len(got[0].SourceIDs) != 1 {
		t.Errorf("nearest = %q (%+v), want the current g1 facts with an embedding, nearest first", factStatements(got), got)
	}
	if err := s.SaveFactEmbedding(ctx, cat.ID, Embedding{testModel, vec(90)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.NearestFacts(ctx, q); factStatements(got) != "works at a bakery; has a cat" {
		t.Errorf("after a new embedding = %q", factStatements(got))
	}
	if n := rawCount(t, s, `SELECT COUNT(*) FROM fact_embeddings`); n != 4 {
		t.Errorf("%d fact embeddings stored, want 4 (the deleted fact's went with it)", n)
	}
}

// TestPGVectorBackfill: embeddings stored while pgvector was off are found by pgvector once
// it is on, and one replaced while it was off again is not found by its old vector.
func TestPGVectorBackfill(t *testing.T) {
	s, dsn := openPostgresWith(t, PostgresOptions{PGVector: PGVectorOff})
	ctx := context.Background()
	f, err := s.AddFact(ctx, Fact{GuildID: "g", SubjectID: "u", Statement: "has a cat"})
	if err != nil {
		t.Fatal(err)
	}
	s.SaveFactEmbedding(ctx, f.ID, Embedding{testModel, vec(0)})
	reopen := func(mode string) *Postgres {
		t.Helper()
		p, err := OpenPostgres(ctx, dsn, PostgresOptions{PGVector: mode})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	on := reopen(PGVectorAuto)
	if on.VectorSearch() != VectorSearchPGVector {
		if os.Getenv("BANTER_REQUIRE_POSTGRES") != "" {
			t.Fatalf("pgvector not in use: %s", on.VectorUnavailable())
		}
		t.Skipf("pgvector not installed: %s", on.VectorUnavailable())
	}
	q := VectorQuery{GuildID: "g", Model: testModel, Vector: vec(0)}
	if got, err := on.NearestFacts(ctx, q); err != nil || len(got) != 1 || got[0].Similarity < 0.99 {
		t.Fatalf("after the backfill: %+v, %v", got, err)
	}
	off := reopen(PGVectorOff)
	off.SaveFactEmbedding(ctx, f.ID, Embedding{testModel, vec(90)})
	again := reopen(PGVectorAuto)
	if got, err := again.NearestFacts(ctx, q); err != nil || len(got) != 1 || got[0].Similarity > 0.01 {
		t.Fatalf("the vector replaced while pgvector was off: %+v, %v (want similarity 0 to the old one)", got, err)
	}
}
