package store

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Embedding backfill (docs/memory.md, "Backfill"): facts and messages stored while embeddings
// were off, while the embeddings provider failed, or under another embeddings model have no
// embedding of the current model. The backfill worker (memory.Backfill) pages through them,
// newest first, and embeds them. Several processes on one Postgres database share the work
// by guild: a process embeds a guild only while it holds the guild's lease (table
// embedding_backfill_leases), so two processes never embed the same rows at once.

// BackfillCursor is where a page of the backfill ended: the time and id of the last row it
// read (a message id, or a fact id in decimal). Zero: from the newest, or (a page's end) none
// is left.
type BackfillCursor struct {
	At time.Time
	ID string
}

// BackfillQuery selects one page of a guild's facts or messages that have no embedding of
// Model, newest first, strictly older than From.
type BackfillQuery struct {
	GuildID string
	Model   string
	// Length, when above 0, also counts a vector of Model of another length as missing (the
	// dimensions asked of the model changed).
	Length int
	// NotAfter leaves out what was created after it (the normal path still embeds it).
	NotAfter time.Time
	// From is where the previous page ended (zero: from the newest).
	From BackfillCursor
	// Limit caps the page (0: 100; at most 2048).
	Limit int
}

func (q BackfillQuery) limit() int {
	if q.Limit <= 0 {
		return 100
	}
	return min(q.Limit, 2048)
}

func (q BackfillQuery) valid() error {
	if q.GuildID == "" || q.Model == "" {
		return errors.New("guild and model are required")
	}
	return nil
}

// Backfill is the embedding backfill's part of the Store.
type Backfill interface {
	// UnembeddedMessages returns the page q selects of the guild's messages with no embedding
	// of q.Model: not deleted, not a bot's, not empty, not of a member who paused memory in
	// the guild; and where the page ended (zero: none is left). A message its author asked to
	// forget (forget-me after saying it) is left out, though the page's end counts it.
	UnembeddedMessages(ctx context.Context, q BackfillQuery) ([]Message, BackfillCursor, error)
	// UnembeddedFacts is UnembeddedMessages for the guild's current facts, leaving out the
	// facts about a member who paused memory in the guild or asked to be forgotten after the
	// fact was noted.
	UnembeddedFacts(ctx context.Context, q BackfillQuery) ([]Fact, BackfillCursor, error)
	// EmbeddingGuilds lists the guilds that have stored messages or facts.
	EmbeddingGuilds(ctx context.Context) ([]string, error)
	// ClaimBackfill takes, or renews, holder's lease on a guild's backfill until `until`; it
	// reports false when another holder's lease runs past now.
	ClaimBackfill(ctx context.Context, guildID, holder string, until, now time.Time) (bool, error)
	// ReleaseBackfill gives up holder's lease on a guild's backfill (if it holds it).
	ReleaseBackfill(ctx context.Context, guildID, holder string) error
}

// backfillMigration is the leases' table and the index the pages are read by (SQLite's 10th
// migration, Postgres's 12th).
const backfillMigration = `CREATE TABLE embedding_backfill_leases (
			guild_id TEXT PRIMARY KEY,
			holder   TEXT NOT NULL,
			until_ms BIGINT NOT NULL
		);
		CREATE INDEX messages_guild_created ON messages (guild_id, created_at);`

// missingVector is the condition that alias (e.message_id = key) has no embedding of the
// model (and length), with its two or four arguments.
func missingVector(table, key string, q BackfillQuery) (string, []any) {
	cond := `NOT EXISTS (SELECT 1 FROM ` + table + ` e WHERE e.` + key + ` AND e.model = ?`
	args := []any{q.Model}
	if q.Length > 0 {
		cond += ` AND length(e.vector) = ?`
		args = append(args, 4*q.Length)
	}
	return cond + `)`, args
}

// page adds the NotAfter bound and the cursor to a where clause on alias's created_at and id
// (idArg: the cursor's id as the column compares it).
func (q BackfillQuery) page(alias string, where []string, args []any, idArg any) ([]string, []any) {
	if !q.NotAfter.IsZero() {
		where, args = append(where, alias+"created_at <= ?"), append(args, ms(q.NotAfter))
	}
	if !q.From.At.IsZero() {
		where = append(where, "("+alias+"created_at < ? OR ("+alias+"created_at = ? AND "+alias+"id < ?))")
		args = append(args, ms(q.From.At), ms(q.From.At), idArg)
	}
	return where, args
}

func (m factsSQL) UnembeddedMessages(ctx context.Context, q BackfillQuery) ([]Message, BackfillCursor, error) {
	out, err := m.unembeddedMessages(ctx, q)
	if err != nil || len(out) == 0 {
		return nil, BackfillCursor{}, wrapEmbed("unembedded messages of "+q.GuildID, err)
	}
	end := BackfillCursor{At: out[len(out)-1].CreatedAt, ID: out[len(out)-1].ID}
	marks, err := watermarks(ctx, m, q.GuildID, out, func(msg Message) string { return msg.AuthorID })
	if err != nil {
		return nil, BackfillCursor{}, wrapEmbed("unembedded messages of "+q.GuildID, err)
	}
	return slices.DeleteFunc(out, func(msg Message) bool { return forgottenAt(marks, msg.AuthorID, msg.CreatedAt) }), end, nil
}

// unembeddedMessages reads UnembeddedMessages' page, forgotten messages included.
func (m factsSQL) unembeddedMessages(ctx context.Context, q BackfillQuery) ([]Message, error) {
	if err := q.valid(); err != nil {
		return nil, err
	}
	missing, margs := missingVector("message_embeddings", "message_id = m.id", q)
	where := []string{"m.guild_id = ?", "NOT m.deleted", "NOT m.is_bot", "NOT m.is_self", "trim(m.content) <> ''",
		"NOT EXISTS (SELECT 1 FROM memory_pauses p WHERE p.guild_id = m.guild_id AND p.user_id = m.author_id)", missing}
	args := append([]any{q.GuildID}, margs...)
	where, args = q.page("m.", where, args, q.From.ID)
	rows, err := m.db.query(ctx, `SELECT `+qualified("m.", messageColumns)+` FROM messages m WHERE `+strings.Join(where, " AND ")+
		` ORDER BY m.created_at DESC, m.id DESC LIMIT ?`, append(args, q.limit())...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		msg, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, msg)
	}
	return out, rows.Err()
}

func (m factsSQL) UnembeddedFacts(ctx context.Context, q BackfillQuery) ([]Fact, BackfillCursor, error) {
	out, err := m.unembeddedFacts(ctx, q)
	if err != nil || len(out) == 0 {
		return nil, BackfillCursor{}, wrapEmbed("unembedded facts of "+q.GuildID, err)
	}
	last := out[len(out)-1]
	end := BackfillCursor{At: last.CreatedAt, ID: strconv.FormatInt(last.ID, 10)}
	marks, err := watermarks(ctx, m, q.GuildID, out, func(f Fact) string { return f.SubjectID })
	if err == nil {
		out = slices.DeleteFunc(out, func(f Fact) bool { return forgottenAt(marks, f.SubjectID, f.CreatedAt) })
		err = m.fillSources(ctx, out)
	}
	if err != nil {
		return nil, BackfillCursor{}, wrapEmbed("unembedded facts of "+q.GuildID, err)
	}
	return out, end, nil
}

// unembeddedFacts reads UnembeddedFacts' page, forgotten facts included, without sources.
func (m factsSQL) unembeddedFacts(ctx context.Context, q BackfillQuery) ([]Fact, error) {
	if err := q.valid(); err != nil {
		return nil, err
	}
	missing, margs := missingVector("fact_embeddings", "fact_id = f.id", q)
	where := []string{"f.guild_id = ?", "f.retired_at = 0",
		"NOT EXISTS (SELECT 1 FROM memory_pauses p WHERE p.guild_id = f.guild_id AND p.user_id = f.subject_id)", missing}
	args := append([]any{q.GuildID}, margs...)
	var from int64
	if q.From.ID != "" {
		var err error
		if from, err = strconv.ParseInt(q.From.ID, 10, 64); err != nil {
			return nil, errors.New("the cursor's id is not a fact id")
		}
	}
	where, args = q.page("f.", where, args, from)
	return m.scanFacts(ctx, `SELECT `+qualified("f.", factColumns)+` FROM facts f WHERE `+strings.Join(where, " AND ")+
		` ORDER BY f.created_at DESC, f.id DESC LIMIT ?`, append(args, q.limit())...)
}

// watermarks reads the forget-me watermarks of the members xs name (by member), for those
// who have one.
func watermarks[T any](ctx context.Context, m factsSQL, guildID string, xs []T, member func(T) string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, x := range xs {
		id := member(x)
		if _, seen := out[id]; seen || id == FactServer {
			continue
		}
		var at int64
		err := m.db.queryRow(ctx, `SELECT forgot_at FROM memory_forgets WHERE member_key = ?`, memberKey(guildID, id)).Scan(&at)
		switch {
		case isNoRows(err):
			out[id] = time.Time{}
		case err != nil:
			return nil, err
		default:
			out[id] = fromMS(at)
		}
	}
	return out, nil
}

// forgottenAt reports whether member's watermark (marks) is at or after t.
func forgottenAt(marks map[string]time.Time, member string, t time.Time) bool {
	w := marks[member]
	return !w.IsZero() && !w.Before(t)
}

func (m factsSQL) EmbeddingGuilds(ctx context.Context) ([]string, error) {
	rows, err := m.db.query(ctx, `SELECT guild_id FROM messages WHERE guild_id <> '' GROUP BY guild_id
		UNION SELECT guild_id FROM facts GROUP BY guild_id`)
	if err != nil {
		return nil, wrapEmbed("embedding guilds", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, wrapEmbed("embedding guilds", err)
		}
		out = append(out, g)
	}
	slices.Sort(out)
	return out, wrapEmbed("embedding guilds", rows.Err())
}

func (m factsSQL) ClaimBackfill(ctx context.Context, guildID, holder string, until, now time.Time) (bool, error) {
	n, err := m.db.exec(ctx, `INSERT INTO embedding_backfill_leases (guild_id, holder, until_ms) VALUES (?, ?, ?)
		ON CONFLICT (guild_id) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms
		WHERE embedding_backfill_leases.holder = excluded.holder OR embedding_backfill_leases.until_ms < ?`,
		guildID, holder, ms(until), ms(now))
	if err != nil {
		return false, wrapEmbed("claim backfill of "+guildID, err)
	}
	return n == 1, nil
}

func (m factsSQL) ReleaseBackfill(ctx context.Context, guildID, holder string) error {
	_, err := m.db.exec(ctx, `DELETE FROM embedding_backfill_leases WHERE guild_id = ? AND holder = ?`, guildID, holder)
	return wrapEmbed("release backfill of "+guildID, err)
}
