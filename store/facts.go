package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Long-term memory (docs/memory.md): facts about the members of a guild, or the guild itself,
// extracted from what they said. Every fact belongs to one guild and is never read from
// another. A correction supersedes a fact: the old one is retired (kept as history, never
// current). A fact's sources are the messages it came from; forgetting them forgets it.

// FactServer is the subject of a fact about the server itself rather than a member.
const FactServer = "server"

// ErrFactLocked is returned when a locked fact would be superseded.
var ErrFactLocked = errors.New("store: fact is locked")

// Fact is one thing banter remembers.
type Fact struct {
	ID      int64
	GuildID string
	// SubjectID is the member the fact is about (a user id), or FactServer.
	SubjectID string
	// SubjectName is what the subject was called when the fact was stored.
	SubjectName string
	Statement   string
	// SourceIDs are the messages the fact came from.
	SourceIDs []string
	// Origins, set by a writer that knows them (extraction), are who said the sources and
	// when: the write is refused (ErrForgotten) when one of them, or the subject at CreatedAt,
	// ran forget-me in the guild at or after then. Not read back.
	Origins   []Origin
	CreatedAt time.Time
	// SupersededBy is the fact that replaced this one (0: none); RetiredAt is when it stopped
	// being current (zero: current).
	SupersededBy int64
	RetiredAt    time.Time
	// Locked facts are never superseded by extraction.
	Locked bool

	searchText string   // as stored (factSearchText), read by the word search
	words      []string // searchText's words, split once when read
}

// Current reports whether the fact is current (not retired).
func (f Fact) Current() bool { return f.RetiredAt.IsZero() }

// FactQuery selects facts of one guild.
type FactQuery struct {
	// GuildID is required: facts never cross guilds.
	GuildID string
	// SubjectIDs restricts to these subjects; empty: every subject.
	SubjectIDs []string
	// Text, when set, keeps the facts sharing a word with it (statement or subject name), the
	// most words shared first; else the newest come first.
	Text string
	// History includes retired facts.
	History bool
	// Limit caps the results (0: 50).
	Limit int
}

// ForgetReport counts what ForgetMember deleted.
type ForgetReport struct {
	Facts    int
	Messages int
	// Replies are the bot's own messages that replied to theirs (derived from them).
	Replies int
}

// Memory is the facts part of the Store.
type Memory interface {
	// AddFact stores a new current fact and returns it with its id (ErrForgotten when its
	// origins or subject forgot it: Fact.Origins).
	AddFact(ctx context.Context, f Fact) (Fact, error)
	// ReplaceFact stores f and retires the guild's fact oldID in its favour (ErrNotFound when
	// oldID is not a current fact of the guild, ErrFactLocked when it is locked, ErrForgotten
	// as AddFact).
	ReplaceFact(ctx context.Context, oldID int64, f Fact) (Fact, error)
	// AddFactSources adds messages to a fact's sources (a duplicate merged into it); origins
	// are who said them and when, refused as in AddFact (ErrForgotten).
	AddFactSources(ctx context.Context, guildID string, id int64, sourceIDs []string, origins []Origin) error
	// Facts returns the facts q selects.
	Facts(ctx context.Context, q FactQuery) ([]Fact, error)
	// DeleteFact deletes one fact of the guild (ErrNotFound when it is not there).
	DeleteFact(ctx context.Context, guildID string, id int64) error
	// ForgetMessage deletes the facts whose only source was the message and drops it from the
	// sources of the others; it reports how many facts went.
	ForgetMessage(ctx context.Context, messageID string) (int, error)
	// ForgetMember deletes, in one guild, every fact about the member, every fact one of their
	// messages is a source of, every stored message of theirs and the bot's replies to them,
	// their turns and prompt-ledger rows, and the reply links of other messages to theirs; it
	// blanks their name on the guild's kept voice session (VoiceSession.RequestedBy); and
	// records at as their watermark: from then on, writes of messages and facts refuse what
	// they said at or before it (forgets.go).
	ForgetMember(ctx context.Context, guildID, userID string, at time.Time) (ForgetReport, error)
	// Forgot reports whether the member ran forget-me in the guild at or after at: what they
	// said then is refused (their watermark, forgets.go).
	Forgot(ctx context.Context, guildID, userID string, at time.Time) (bool, error)
	// SetMemoryPaused pauses (or resumes) memory capture of a member in a guild.
	SetMemoryPaused(ctx context.Context, guildID, userID string, paused bool, at time.Time) error
	// MemoryPaused reports whether a member paused memory capture in a guild.
	MemoryPaused(ctx context.Context, guildID, userID string) (bool, error)
	// PruneFacts deletes facts created before cutoff and reports how many went.
	PruneFacts(ctx context.Context, cutoff time.Time) (int, error)
	// MemoryChanges calls changed with the guild of each change to facts or pauses that any
	// process sharing the store commits, and first with "" (any guild), until ctx ends (nil)
	// or it can no longer listen (an error; call it again). A store that one process owns
	// returns nil at once (memchanges.go).
	MemoryChanges(ctx context.Context, changed func(guild string)) error
}

// maxFactResults bounds FactQuery.Limit; maxFactCandidates bounds the newest facts sharing a
// word with a query that are ranked.
const (
	maxFactResults    = 5000
	maxFactCandidates = 200
)

func (q FactQuery) limit() int {
	switch {
	case q.Limit <= 0:
		return 50
	case q.Limit > maxFactResults:
		return maxFactResults
	}
	return q.Limit
}

// factSearchText is what a fact's words are matched against: its subject's name and its
// statement, folded like message search.
func factSearchText(f Fact) string {
	return foldText(f.SubjectName + " " + f.Statement)
}

// validFact refuses a fact that cannot be stored.
func validFact(f Fact) error {
	switch {
	case f.GuildID == "":
		return errors.New("store: add fact: no guild")
	case f.SubjectID == "":
		return errors.New("store: add fact: no subject")
	case strings.TrimSpace(f.Statement) == "":
		return errors.New("store: add fact: empty statement")
	}
	return nil
}

// factsSQL is the facts (and embeddings) logic written once over either driver (factDB adapts
// each). pg marks Postgres (typed placeholders); vec, pgvector's column and operators in use;
// staleVec, a vec column left by an earlier run with pgvector, cleared on write.
type factsSQL struct {
	db       factDB
	pg       bool
	vec      bool
	staleVec bool
}

// factDB is what the facts logic needs of a database: statements with ? placeholders, and
// transactions.
type factDB interface {
	exec(ctx context.Context, q string, args ...any) (int64, error)
	query(ctx context.Context, q string, args ...any) (factRows, error)
	queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error }
	tx(ctx context.Context, fn func(factDB) error) error
}

// factRows is a result set.
type factRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

func (m factsSQL) AddFact(ctx context.Context, f Fact) (Fact, error) {
	if err := validFact(f); err != nil {
		return Fact{}, err
	}
	err := m.db.tx(ctx, func(db factDB) error {
		if err := m.lockGuild(ctx, db, f.GuildID, false); err != nil {
			return err
		}
		var err error
		f, err = insertFact(ctx, db, f)
		return err
	})
	if err != nil {
		return Fact{}, fmt.Errorf("store: add fact: %w", err)
	}
	return f, nil
}

// insertFact inserts f and its sources, unless its origins or subject forgot it (the caller
// holds the guild's lock); f comes back with its id.
func insertFact(ctx context.Context, db factDB, f Fact) (Fact, error) {
	if f.CreatedAt.IsZero() {
		f.CreatedAt = time.Now()
	}
	if gone, err := forgotten(ctx, db, f.GuildID, factOrigins(f)); err != nil || gone {
		return Fact{}, cmp.Or(err, ErrForgotten)
	}
	err := db.queryRow(ctx, `INSERT INTO facts (guild_id, subject_id, subject_name, statement, search_text, created_at, locked)
		VALUES (?,?,?,?,?,?,?) RETURNING id`, f.GuildID, f.SubjectID, f.SubjectName, f.Statement, factSearchText(f),
		ms(f.CreatedAt), boolInt(f.Locked)).Scan(&f.ID)
	if err != nil {
		return Fact{}, err
	}
	f.SupersededBy, f.RetiredAt = 0, time.Time{}
	f.SourceIDs = dedupe(f.SourceIDs)
	return f, addSources(ctx, db, f.ID, f.SourceIDs)
}

func addSources(ctx context.Context, db factDB, id int64, sources []string) error {
	for _, src := range sources {
		if _, err := db.exec(ctx, `INSERT INTO fact_sources (fact_id, message_id) VALUES (?,?) ON CONFLICT DO NOTHING`, id, src); err != nil {
			return err
		}
	}
	return nil
}

func (m factsSQL) ReplaceFact(ctx context.Context, oldID int64, f Fact) (Fact, error) {
	if err := validFact(f); err != nil {
		return Fact{}, err
	}
	err := m.db.tx(ctx, func(db factDB) error {
		if err := m.lockGuild(ctx, db, f.GuildID, false); err != nil {
			return err
		}
		var locked int64
		err := db.queryRow(ctx, `SELECT locked FROM facts WHERE id=? AND guild_id=? AND retired_at=0`, oldID, f.GuildID).Scan(&locked)
		if err != nil {
			if isNoRows(err) {
				return fmt.Errorf("fact %d: %w", oldID, ErrNotFound)
			}
			return err
		}
		if locked != 0 {
			return fmt.Errorf("fact %d: %w", oldID, ErrFactLocked)
		}
		if f, err = insertFact(ctx, db, f); err != nil {
			return err
		}
		_, err = db.exec(ctx, `UPDATE facts SET superseded_by=?, retired_at=? WHERE id=?`, f.ID, ms(f.CreatedAt), oldID)
		return err
	})
	if err != nil {
		return Fact{}, fmt.Errorf("store: replace fact: %w", err)
	}
	return f, nil
}

func (m factsSQL) AddFactSources(ctx context.Context, guildID string, id int64, sourceIDs []string, origins []Origin) error {
	err := m.db.tx(ctx, func(db factDB) error {
		if err := m.lockGuild(ctx, db, guildID, false); err != nil {
			return err
		}
		if gone, err := forgotten(ctx, db, guildID, origins); err != nil || gone {
			return cmp.Or(err, ErrForgotten)
		}
		var n int64
		if err := db.queryRow(ctx, `SELECT COUNT(*) FROM facts WHERE id=? AND guild_id=?`, id, guildID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("fact %d: %w", id, ErrNotFound)
		}
		return addSources(ctx, db, id, dedupe(sourceIDs))
	})
	if err != nil {
		return fmt.Errorf("store: add fact sources: %w", err)
	}
	return nil
}

const factColumns = `id, guild_id, subject_id, subject_name, statement, created_at, superseded_by, retired_at, locked, search_text`

func (m factsSQL) Facts(ctx context.Context, q FactQuery) ([]Fact, error) {
	if q.GuildID == "" {
		return nil, errors.New("store: facts: no guild")
	}
	where := []string{"guild_id = ?"}
	args := []any{q.GuildID}
	if !q.History {
		where = append(where, "retired_at = 0")
	}
	if len(q.SubjectIDs) > 0 {
		where = append(where, "subject_id IN (?"+strings.Repeat(",?", len(q.SubjectIDs)-1)+")")
		for _, id := range q.SubjectIDs {
			args = append(args, id)
		}
	}
	terms := factTerms(q.Text)
	if q.Text != "" && len(terms) == 0 {
		return nil, nil
	}
	var like []string
	for _, t := range terms {
		like = append(like, "search_text LIKE ?")
		args = append(args, "%"+stem(t)+"%") // "lives" finds "live" too; rankFacts decides
	}
	if len(like) > 0 {
		where = append(where, "("+strings.Join(like, " OR ")+")")
	}
	limit := q.limit()
	if len(terms) > 0 {
		limit = maxFactCandidates // ranked below, in Go
	}
	args = append(args, limit)
	fs, err := m.scanFacts(ctx, `SELECT `+factColumns+` FROM facts WHERE `+strings.Join(where, " AND ")+
		` ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err == nil && len(terms) > 0 {
		fs = rankFacts(fs, terms, q.limit())
	}
	if err == nil {
		err = m.fillSources(ctx, fs)
	}
	if err != nil {
		return nil, fmt.Errorf("store: facts of %s: %w", q.GuildID, err)
	}
	return fs, nil
}

// scanFacts runs a facts query (without the sources: fillSources).
func (m factsSQL) scanFacts(ctx context.Context, q string, args ...any) ([]Fact, error) {
	rows, err := m.db.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Fact
	for rows.Next() {
		f, err := scanFact(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// scanFact reads one row of factColumns, then extra columns into extra.
func scanFact(rows factRows, extra ...any) (Fact, error) {
	var f Fact
	var created, retired, locked int64
	dest := append([]any{&f.ID, &f.GuildID, &f.SubjectID, &f.SubjectName, &f.Statement, &created, &f.SupersededBy, &retired, &locked, &f.searchText}, extra...)
	if err := rows.Scan(dest...); err != nil {
		return Fact{}, err
	}
	f.CreatedAt, f.RetiredAt, f.Locked = fromMS(created), fromMS(retired), locked != 0
	f.words = wordsOf(f.searchText)
	return f, nil
}

// fillSources reads the sources of fs in one query.
func (m factsSQL) fillSources(ctx context.Context, fs []Fact) error {
	if len(fs) == 0 {
		return nil
	}
	at := make(map[int64]int, len(fs))
	args := make([]any, len(fs))
	for i, f := range fs {
		at[f.ID], args[i] = i, f.ID
	}
	rows, err := m.db.query(ctx, `SELECT fact_id, message_id FROM fact_sources WHERE fact_id IN (?`+strings.Repeat(",?", len(fs)-1)+
		`) ORDER BY fact_id, message_id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var src string
		if err := rows.Scan(&id, &src); err != nil {
			return err
		}
		fs[at[id]].SourceIDs = append(fs[at[id]].SourceIDs, src)
	}
	return rows.Err()
}

func (m factsSQL) DeleteFact(ctx context.Context, guildID string, id int64) error {
	n, err := m.db.exec(ctx, `DELETE FROM facts WHERE id=? AND guild_id=?`, id, guildID)
	if err != nil {
		return fmt.Errorf("store: delete fact %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: delete fact %d: %w", id, ErrNotFound)
	}
	return nil
}

func (m factsSQL) ForgetMessage(ctx context.Context, messageID string) (int, error) {
	var n int64
	err := m.db.tx(ctx, func(db factDB) error {
		var err error
		n, err = db.exec(ctx, `DELETE FROM facts WHERE id IN (SELECT fact_id FROM fact_sources WHERE message_id=?)
			AND NOT EXISTS (SELECT 1 FROM fact_sources o WHERE o.fact_id = facts.id AND o.message_id <> ?)`, messageID, messageID)
		if err != nil {
			return err
		}
		_, err = db.exec(ctx, `DELETE FROM fact_sources WHERE message_id=?`, messageID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: forget message %s: %w", messageID, err)
	}
	return int(n), nil
}

func (m factsSQL) ForgetMember(ctx context.Context, guildID, userID string, at time.Time) (ForgetReport, error) {
	var r ForgetReport
	if guildID == "" || userID == "" {
		return r, errors.New("store: forget member: guild and user are required")
	}
	const theirs = `SELECT id FROM messages WHERE guild_id=? AND author_id=?`
	err := m.db.tx(ctx, func(db factDB) error {
		if err := m.lockGuild(ctx, db, guildID, true); err != nil {
			return err
		}
		if err := recordForget(ctx, db, guildID, userID, at); err != nil {
			return err
		}
		n, err := db.exec(ctx, `DELETE FROM facts WHERE guild_id=? AND (subject_id=?
			OR id IN (SELECT fact_id FROM fact_sources WHERE message_id IN (`+theirs+`)))`, guildID, userID, guildID, userID)
		if err != nil {
			return err
		}
		r.Facts = int(n)
		n, err = db.exec(ctx, `DELETE FROM messages WHERE guild_id=? AND is_self = TRUE AND reply_to_id IN (`+theirs+`)`, guildID, guildID, userID)
		if err != nil {
			return err
		}
		r.Replies = int(n)
		steps := []string{
			`DELETE FROM fact_sources WHERE message_id IN (` + theirs + `)`,
			`DELETE FROM turns WHERE message_id IN (` + theirs + `)`,
			`UPDATE turns SET answer_id=message_id WHERE answer_id IN (` + theirs + `)`,
			`UPDATE messages SET reply_to_id='' WHERE guild_id=? AND reply_to_id IN (SELECT id FROM messages WHERE guild_id=? AND author_id=?)`,
			`DELETE FROM prompt_ledger WHERE user_id=? AND channel_id IN (SELECT DISTINCT channel_id FROM messages WHERE guild_id=?)`,
			`UPDATE voice_sessions SET requested_by='' WHERE guild_id=? AND requested_by=?`,
			`DELETE FROM voice_open_turns WHERE guild_id=? AND speaker_id=?`,
		}
		args := [][]any{{guildID, userID}, {guildID, userID}, {guildID, userID}, {guildID, guildID, userID}, {userID, guildID}, {guildID, userID}, {guildID, userID}}
		for i, q := range steps {
			if _, err := db.exec(ctx, q, args[i]...); err != nil {
				return err
			}
		}
		n, err = db.exec(ctx, `DELETE FROM messages WHERE guild_id=? AND author_id=?`, guildID, userID)
		r.Messages = int(n)
		return err
	})
	if err != nil {
		return ForgetReport{}, fmt.Errorf("store: forget member %s in %s: %w", userID, guildID, err)
	}
	return r, nil
}

func (m factsSQL) SetMemoryPaused(ctx context.Context, guildID, userID string, paused bool, at time.Time) error {
	var err error
	if paused {
		_, err = m.db.exec(ctx, `INSERT INTO memory_pauses (guild_id, user_id, since) VALUES (?,?,?) ON CONFLICT DO NOTHING`,
			guildID, userID, ms(at))
	} else {
		_, err = m.db.exec(ctx, `DELETE FROM memory_pauses WHERE guild_id=? AND user_id=?`, guildID, userID)
	}
	if err != nil {
		return fmt.Errorf("store: memory pause of %s in %s: %w", userID, guildID, err)
	}
	return nil
}

func (m factsSQL) MemoryPaused(ctx context.Context, guildID, userID string) (bool, error) {
	var n int64
	if err := m.db.queryRow(ctx, `SELECT COUNT(*) FROM memory_pauses WHERE guild_id=? AND user_id=?`, guildID, userID).Scan(&n); err != nil {
		return false, fmt.Errorf("store: memory pause of %s in %s: %w", userID, guildID, err)
	}
	return n > 0, nil
}

func (m factsSQL) PruneFacts(ctx context.Context, cutoff time.Time) (int, error) {
	n, err := m.db.exec(ctx, `DELETE FROM facts WHERE created_at < ?`, ms(cutoff))
	if err != nil {
		return 0, fmt.Errorf("store: prune facts: %w", err)
	}
	return int(n), nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// dedupe drops empty and repeated ids, keeping the order.
func dedupe(ids []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
