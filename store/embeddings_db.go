package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The Embeddings methods, written once over either driver (factsSQL). In process (SQLite, or
// Postgres without pgvector) a search reads the guild's vectors of the model and compares
// them here; with pgvector, Postgres orders by its cosine distance operator (<=>) itself.

// param is a placeholder, typed for Postgres where the statement cannot infer it.
func (m factsSQL) param(pgType string) string {
	if m.pg {
		return "?::" + pgType
	}
	return "?"
}

func (m factsSQL) SaveFactEmbedding(ctx context.Context, factID int64, e Embedding) error {
	if err := validVector(e); err != nil {
		return wrapEmbed("save fact embedding", err)
	}
	cols, vals, set := "fact_id, guild_id, model, vector", "id, guild_id, "+m.param("text")+", "+m.param("bytea"),
		"model=excluded.model, vector=excluded.vector"
	args := []any{e.Model, encodeVector(e.Vector)}
	if m.vec {
		cols, vals, set = cols+", vec", vals+", ?::vector", set+", vec=excluded.vec"
		args = append(args, pgvectorLiteral(e.Vector))
	} else if m.staleVec {
		set += ", vec=NULL"
	}
	_, err := m.db.exec(ctx, `INSERT INTO fact_embeddings (`+cols+`) SELECT `+vals+` FROM facts WHERE id=?
		ON CONFLICT (fact_id) DO UPDATE SET `+set, append(args, factID)...)
	if rowGone(err) {
		return nil
	}
	return wrapEmbed("save fact embedding", err)
}

func (m factsSQL) SaveMessageEmbeddings(ctx context.Context, es []MessageEmbedding) error {
	for _, e := range es {
		if err := validVector(e.Embedding); err != nil {
			return wrapEmbed("save message embeddings", err)
		}
	}
	cols, vals, set := "message_id, guild_id, model, vector", "id, guild_id, "+m.param("text")+", "+m.param("bytea"),
		"model=excluded.model, vector=excluded.vector"
	if m.vec {
		cols, vals, set = cols+", vec", vals+", ?::vector", set+", vec=excluded.vec"
	} else if m.staleVec {
		set += ", vec=NULL"
	}
	q := `INSERT INTO message_embeddings (` + cols + `) SELECT ` + vals + ` FROM messages
		WHERE id=? AND content=? AND NOT deleted ON CONFLICT (message_id) DO UPDATE SET ` + set
	// One statement each, not one transaction: each is atomic on its own, and the store's
	// other users (SQLite has one connection) get in between them.
	for _, e := range es {
		args := []any{e.Model, encodeVector(e.Vector)}
		if m.vec {
			args = append(args, pgvectorLiteral(e.Vector))
		}
		if _, err := m.db.exec(ctx, q, append(args, e.MessageID, e.Content)...); err != nil && !rowGone(err) {
			return wrapEmbed("save message embeddings", err)
		}
	}
	return nil
}

// rowGone reports whether a vector's write failed because its fact or message was deleted
// by another connection meanwhile (Postgres: the insert read the row, then the foreign key's
// check waited for the delete and found it gone). Such a vector is skipped, as when the row
// was already gone.
func rowGone(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503" // foreign_key_violation
}

func (m factsSQL) VectorSearch() string {
	if m.vec {
		return VectorSearchPGVector
	}
	return VectorSearchInProcess
}

func (m factsSQL) NearestFacts(ctx context.Context, q VectorQuery) ([]ScoredFact, error) {
	if err := q.valid(); err != nil {
		return nil, wrapEmbed("nearest facts", err)
	}
	cols := qualified("f.", factColumns)
	from := ` FROM fact_embeddings e JOIN facts f ON f.id = e.fact_id
		WHERE e.guild_id=? AND e.model=? AND f.guild_id=? AND f.retired_at=0`
	var out []ScoredFact
	var err error
	if m.vec {
		lit := pgvectorLiteral(q.Vector)
		out, err = m.scanScoredFacts(ctx, false, `SELECT `+cols+`, 1 - (e.vec <=> ?::vector)`+from+
			` AND e.vec IS NOT NULL AND vector_dims(e.vec)=? ORDER BY e.vec <=> ?::vector, f.created_at DESC LIMIT ?`,
			lit, q.GuildID, q.Model, q.GuildID, len(q.Vector), lit, q.limit())
	} else {
		out, err = m.scanScoredFacts(ctx, true, `SELECT `+cols+`, e.vector`+from, q.GuildID, q.Model, q.GuildID)
		out = slices.DeleteFunc(out, func(f ScoredFact) bool { return len(f.vector) != len(q.Vector) })
		for i := range out {
			out[i].Similarity = Cosine(q.Vector, out[i].vector)
			out[i].vector = nil
		}
		out = topScored(out, func(f ScoredFact) float64 { return f.Similarity }, func(f ScoredFact) time.Time { return f.CreatedAt }, q.limit())
	}
	if err == nil {
		fs := make([]Fact, len(out))
		for i := range out {
			fs[i] = out[i].Fact
		}
		if err = m.fillSources(ctx, fs); err == nil {
			for i := range out {
				out[i].Fact = fs[i]
			}
		}
	}
	if err != nil {
		return nil, wrapEmbed("nearest facts of "+q.GuildID, err)
	}
	return out, nil
}

// scanScoredFacts reads facts with their similarity, or (raw) their stored vector.
func (m factsSQL) scanScoredFacts(ctx context.Context, raw bool, q string, args ...any) ([]ScoredFact, error) {
	rows, err := m.db.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ScoredFact
	for rows.Next() {
		var sf ScoredFact
		var blob []byte
		var extra any = &sf.Similarity
		if raw {
			extra = &blob
		}
		if sf.Fact, err = scanFact(rows, extra); err != nil {
			return nil, err
		}
		if raw {
			sf.vector = decodeVector(blob)
		}
		out = append(out, sf)
	}
	return out, rows.Err()
}

func (m factsSQL) NearestMessages(ctx context.Context, q VectorQuery) ([]ScoredMessage, error) {
	if err := q.valid(); err != nil {
		return nil, wrapEmbed("nearest messages", err)
	}
	where := []string{"e.guild_id=?", "e.model=?", "m.guild_id=?", "NOT m.deleted"}
	args := []any{q.GuildID, q.Model, q.GuildID}
	if !q.Before.IsZero() {
		where, args = append(where, "m.created_at < ?"), append(args, ms(q.Before))
	}
	if len(q.ChannelIDs) > 0 {
		where = append(where, "m.channel_id IN (?"+strings.Repeat(",?", len(q.ChannelIDs)-1)+")")
		for _, id := range q.ChannelIDs {
			args = append(args, id)
		}
	}
	if len(q.ExcludeAuthorIDs) > 0 {
		where = append(where, "m.author_id NOT IN (?"+strings.Repeat(",?", len(q.ExcludeAuthorIDs)-1)+")")
		for _, id := range q.ExcludeAuthorIDs {
			args = append(args, id)
		}
	}
	from := ` FROM message_embeddings e JOIN messages m ON m.id = e.message_id WHERE ` + strings.Join(where, " AND ")
	cols := qualified("m.", messageColumns)
	var out []ScoredMessage
	var err error
	if m.vec {
		lit := pgvectorLiteral(q.Vector)
		args = append(append([]any{lit}, args...), len(q.Vector), lit, q.limit())
		out, err = m.scanScoredMessages(ctx, false, `SELECT `+cols+`, 1 - (e.vec <=> ?::vector)`+from+
			` AND e.vec IS NOT NULL AND vector_dims(e.vec)=? ORDER BY e.vec <=> ?::vector, m.created_at DESC LIMIT ?`, args...)
	} else {
		out, err = m.scanScoredMessages(ctx, true, `SELECT `+cols+`, e.vector`+from, args...)
		out = slices.DeleteFunc(out, func(s ScoredMessage) bool { return len(s.vector) != len(q.Vector) })
		for i := range out {
			out[i].Similarity = Cosine(q.Vector, out[i].vector)
			out[i].vector = nil
		}
		out = topScored(out, func(s ScoredMessage) float64 { return s.Similarity }, func(s ScoredMessage) time.Time { return s.CreatedAt }, q.limit())
	}
	if err != nil {
		return nil, wrapEmbed("nearest messages of "+q.GuildID, err)
	}
	return out, nil
}

// scanScoredMessages reads messages with their similarity, or (raw) their stored vector.
func (m factsSQL) scanScoredMessages(ctx context.Context, raw bool, q string, args ...any) ([]ScoredMessage, error) {
	rows, err := m.db.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ScoredMessage
	for rows.Next() {
		var sm ScoredMessage
		var blob []byte
		var extra any = &sm.Similarity
		if raw {
			extra = &blob
		}
		if sm.Message, err = scanMessage(withExtra{rows, extra}); err != nil {
			return nil, err
		}
		if raw {
			sm.vector = decodeVector(blob)
		}
		out = append(out, sm)
	}
	return out, rows.Err()
}

// withExtra scans a row's leading columns into the caller's destinations and the rest into
// extra.
type withExtra struct {
	row   interface{ Scan(...any) error }
	extra any
}

func (w withExtra) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra)...) }

// qualified prefixes each of a comma-separated column list with a table alias.
func qualified(alias, cols string) string {
	fields := strings.Split(cols, ",")
	for i, f := range fields {
		fields[i] = alias + strings.TrimSpace(f)
	}
	return strings.Join(fields, ", ")
}
