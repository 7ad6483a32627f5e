package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Search by meaning (docs/memory.md): facts and stored messages may carry an embedding, a
// vector an embeddings model made of their text. A search by meaning embeds the query with the
// same model and returns what lies nearest (cosine similarity). Embeddings are derived data:
// deleting, editing or marking deleted a message deletes its embedding (a trigger), deleting a
// fact or a message deletes theirs (a foreign key), so nothing of a forgotten text stays here.

// Embedding is a text's vector, made by Model.
type Embedding struct {
	Model  string
	Vector []float32
}

// MessageEmbedding is the embedding of a stored message's Content, as it was embedded: it is
// kept only while the message still says that.
type MessageEmbedding struct {
	MessageID string
	Content   string
	Embedding
}

// VectorQuery asks for what is nearest a vector, in one guild, among the embeddings of one
// model.
type VectorQuery struct {
	// GuildID and Model are required: nothing crosses guilds, and vectors of two models do
	// not compare.
	GuildID string
	Model   string
	Vector  []float32
	// ChannelIDs, Before and ExcludeAuthorIDs narrow message searches as in SearchQuery.
	ChannelIDs       []string
	Before           time.Time
	ExcludeAuthorIDs []string
	// Limit caps the results (0: 5; at most MaxSearchResults).
	Limit int
}

func (q VectorQuery) limit() int { return SearchQuery{Limit: q.Limit}.limit() }

func (q VectorQuery) valid() error {
	switch {
	case q.GuildID == "" || q.Model == "":
		return errors.New("guild and model are required")
	case len(q.Vector) == 0:
		return errors.New("no vector")
	}
	return nil
}

// ScoredFact is a fact with its similarity to a query (-1 to 1).
type ScoredFact struct {
	Fact
	Similarity float64

	vector []float32 // as stored, while ranked in process
}

// ScoredMessage is a message with its similarity to a query (-1 to 1).
type ScoredMessage struct {
	Message
	Similarity float64

	vector []float32 // as stored, while ranked in process
}

// Embeddings is the search-by-meaning part of the Store.
type Embeddings interface {
	// SaveFactEmbedding stores (or replaces) a fact's embedding; a fact no longer stored is
	// skipped.
	SaveFactEmbedding(ctx context.Context, factID int64, e Embedding) error
	// SaveMessageEmbeddings stores (or replaces) messages' embeddings; a message no longer
	// stored, deleted, or whose content changed since it was embedded is skipped.
	SaveMessageEmbeddings(ctx context.Context, es []MessageEmbedding) error
	// NearestFacts returns the guild's current facts nearest q.Vector, most similar first.
	NearestFacts(ctx context.Context, q VectorQuery) ([]ScoredFact, error)
	// NearestMessages returns the guild's non-deleted messages nearest q.Vector, most similar
	// first, narrowed as q says.
	NearestMessages(ctx context.Context, q VectorQuery) ([]ScoredMessage, error)
	// VectorSearch names where searches run: "pgvector" (in the database) or "in_process".
	VectorSearch() string
	// Backfill finds what has no embedding of a model yet (backfill.go).
	Backfill
}

// Where vector searches run.
const (
	VectorSearchPGVector  = "pgvector"
	VectorSearchInProcess = "in_process"
)

// embeddingsMigration is the embeddings tables' migration (SQLite's 8th, Postgres's 10th):
// idType refers to facts.id, blobType holds a vector (little-endian float32s). The triggers
// that drop a message's embedding when it changes are each driver's (below).
func embeddingsMigration(idType, blobType string) string {
	return `CREATE TABLE fact_embeddings (
			fact_id  ` + idType + ` PRIMARY KEY REFERENCES facts (id) ON DELETE CASCADE,
			guild_id TEXT NOT NULL,
			model    TEXT NOT NULL,
			vector   ` + blobType + ` NOT NULL
		);
		CREATE INDEX fact_embeddings_guild ON fact_embeddings (guild_id, model);
		CREATE TABLE message_embeddings (
			message_id TEXT PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
			guild_id   TEXT NOT NULL,
			model      TEXT NOT NULL,
			vector     ` + blobType + ` NOT NULL
		);
		CREATE INDEX message_embeddings_guild ON message_embeddings (guild_id, model);`
}

// sqliteEmbeddingsTrigger drops a message's embedding when its content changes or it is
// marked deleted.
const sqliteEmbeddingsTrigger = `
		CREATE TRIGGER message_embeddings_stale AFTER UPDATE OF content, deleted ON messages
		WHEN new.content IS NOT old.content OR new.deleted <> 0
		BEGIN DELETE FROM message_embeddings WHERE message_id = new.id; END;`

// pgEmbeddingsTrigger is sqliteEmbeddingsTrigger for Postgres.
const pgEmbeddingsTrigger = `
		CREATE FUNCTION message_embeddings_stale() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN DELETE FROM message_embeddings WHERE message_id = NEW.id; RETURN NULL; END $$;
		CREATE TRIGGER message_embeddings_stale AFTER UPDATE OF content, deleted ON messages
		FOR EACH ROW WHEN (NEW.content IS DISTINCT FROM OLD.content OR NEW.deleted)
		EXECUTE FUNCTION message_embeddings_stale();`

// encodeVector is a vector as stored: little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector reads a stored vector (nil for a length that is not whole float32s).
func decodeVector(b []byte) []float32 {
	if len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// pgvectorLiteral is a vector in pgvector's text form, "[1,2.5,-3]".
func pgvectorLiteral(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}

// Cosine is the cosine similarity of two vectors (0 when their lengths differ or one is zero).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// validVector refuses a vector that cannot be stored or compared.
func validVector(e Embedding) error {
	if e.Model == "" || len(e.Vector) == 0 {
		return errors.New("an embedding needs a model and a vector")
	}
	for _, x := range e.Vector {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("the vector holds a value that is not a number")
		}
	}
	return nil
}

// topScored sorts by similarity (then newest first) and keeps limit.
func topScored[T any](xs []T, sim func(T) float64, created func(T) time.Time, limit int) []T {
	slices.SortStableFunc(xs, func(a, b T) int {
		if c := cmp.Compare(sim(b), sim(a)); c != 0 {
			return c
		}
		return created(b).Compare(created(a))
	})
	return xs[:min(len(xs), limit)]
}

// wrapEmbed names the operation in an error.
func wrapEmbed(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: %s: %w", op, err)
}
