package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// SQLite is the embedded Store: one file, WAL journal, migrations applied at Open.
type SQLite struct {
	factsSQL // the Memory methods (facts.go)
	db       *sql.DB
	// rdb serves the reads made outside a transaction: a second, read-only pool on the same
	// WAL file, so that a read (the memory extraction's facts and messages, a reply's history)
	// never queues behind another goroutine's writes on db, nor writes behind it. WAL gives
	// each read the last committed state: what a caller wrote before it reads is there. For
	// ":memory:" (one connection's private database) it is db.
	rdb  *sql.DB
	path string
}

var _ Store = (*SQLite)(nil)

// Open opens (creating if needed) the SQLite database at path and brings its schema up to date.
// The folder is created when missing. Errors name the path and what to do.
func Open(ctx context.Context, path string) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("store: open: empty path (set store.dsn)")
	}
	if path != ":memory:" {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("store: cannot create the folder of %s (check permissions or set store.dsn): %w", path, err)
			}
		}
	}
	// The path goes into a file: URI, where '%', '?' and '#' are special: escape them so the
	// database is the file named, not a prefix of it.
	uriPath := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	dsn := "file:" + uriPath + "?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=secure_delete(FAST)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One connection for writes: SQLite serializes writers anyway, it keeps the pragmas on the
	// connection every write uses, and every write (ForgetMember's included) runs one statement
	// or transaction at a time, which the forget-me watermark relies on (forgets.go).
	db.SetMaxOpenConns(1)
	s := &SQLite{db: db, rdb: db, path: path}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s (is the file and its folder writable?): %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s (is the file and its folder writable?): %w", path, err)
	}
	if path != ":memory:" {
		rdb, err := sql.Open("sqlite", "file:"+uriPath+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)")
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("store: open %s for reading: %w", path, err)
		}
		rdb.SetMaxOpenConns(readConns)
		s.rdb = rdb
	}
	s.factsSQL = factsSQL{db: sqliteFacts{db: db, x: db, r: s.rdb}}
	return s, nil
}

// readConns is how many read-only connections SQLite's read pool opens at the most: reads
// run side by side with each other and with the one writer (WAL).
const readConns = 4

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// migrations are applied in order; PRAGMA user_version records how many ran. Append only.
func migrations() []string {
	return []string{
		`CREATE TABLE messages (
			id          TEXT PRIMARY KEY,
			channel_id  TEXT NOT NULL,
			guild_id    TEXT NOT NULL DEFAULT '',
			thread_id   TEXT NOT NULL DEFAULT '',
			author_id   TEXT NOT NULL,
			author_name TEXT NOT NULL DEFAULT '',
			is_bot      INTEGER NOT NULL DEFAULT 0,
			is_self     INTEGER NOT NULL DEFAULT 0,
			content     TEXT NOT NULL DEFAULT '',
			created_at  INTEGER NOT NULL,
			edited_at   INTEGER NOT NULL DEFAULT 0,
			reply_to_id TEXT NOT NULL DEFAULT '',
			persona     TEXT NOT NULL DEFAULT '',
			deleted     INTEGER NOT NULL DEFAULT 0
		);
		CREATE INDEX messages_channel_created ON messages (channel_id, created_at);
		CREATE INDEX messages_reply_to ON messages (reply_to_id) WHERE reply_to_id <> '';
		CREATE TABLE user_personas (
			user_id        TEXT PRIMARY KEY,
			preferred_name TEXT NOT NULL DEFAULT '',
			pronouns       TEXT NOT NULL DEFAULT '',
			description    TEXT NOT NULL DEFAULT '',
			updated_at     INTEGER NOT NULL
		);
		CREATE TABLE prompt_ledger (
			channel_id TEXT NOT NULL,
			kind       TEXT NOT NULL,
			at         INTEGER NOT NULL
		);
		CREATE INDEX prompt_ledger_channel_at ON prompt_ledger (channel_id, at);`,
		// 2: full-text search over message content (memory lookups), kept in step by triggers.
		`CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='rowid',
			tokenize='unicode61 remove_diacritics 2');
		CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
			INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
		END;
		CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
			INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
		END;
		CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
			INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
			INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
		END;
		INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');`,
		// 3: who asked, for the per-user share of the prompt budget (activity.perUserPromptShare).
		// Rows from before the upgrade have no user and count for the channel only.
		`ALTER TABLE prompt_ledger ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
		CREATE INDEX prompt_ledger_channel_user_at ON prompt_ledger (channel_id, user_id, at);`,
		// 4: the images each message shows (JSON), kept since Discord's signed URLs expire.
		`ALTER TABLE messages ADD COLUMN images TEXT NOT NULL DEFAULT '';`,
		// 5: durable turns (turns.go): admitted addressed turns, open until their outcome.
		turnsMigration,
		// 6: long-term memory (facts.go): facts, their source messages, members who paused it.
		factsMigration("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER"),
		// 7: the day's spend by guild and model slot (spend.go: the daily budgets).
		`CREATE TABLE spend (day TEXT NOT NULL, guild_id TEXT NOT NULL, slot TEXT NOT NULL,
			usd REAL NOT NULL DEFAULT 0, PRIMARY KEY (day, guild_id, slot));`,
		// 8: embeddings of facts and messages (embeddings.go: search by meaning).
		embeddingsMigration("INTEGER", "BLOB") + sqliteEmbeddingsTrigger,
		// 9: forget-me watermarks (forgets.go): writes refuse what a forgotten member said before.
		forgetsMigration,
		// 10: which guilds' cap notice was said on which budget day (spend.go: ClaimCapNotice).
		capNoticesMigration,
		// 11: the embedding backfill's leases, and the index its pages are read by (backfill.go).
		backfillMigration,
		// 12: the text of a turn's reply, kept while the turn is open (turns.go).
		turnReplyMigration,
		// 13: how far memory extraction has read each channel (memcursor.go).
		memoryCursorsMigration,
		// 14: the voice sessions joined by command, kept across restarts (voicesessions.go).
		voiceSessionsMigration,
		// 15: the utterance the bot is answering in each guild's voice session (voiceturns.go).
		openVoiceTurnsMigration,
		// 16: the guilds banter was removed from, until their data is purged (guildsleft.go).
		guildsLeftMigration,
		// 17: turns indexed by guild, for the removed-guild check at READY (guildsleft.go).
		guildScanMigration,
		// 18: the messages a catch-up stored before the pipeline handled them (unhandled.go).
		unhandledMigration("INTEGER"),
	}
}

func (s *SQLite) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	all := migrations()
	if version > len(all) {
		return fmt.Errorf("schema version %d is newer than this banter knows (%d): upgrade banter", version, len(all))
	}
	for i := version; i < len(all); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, all[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}

// SchemaVersion reports how many migrations have been applied.
func (s *SQLite) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version of %s: %w", s.path, err)
	}
	return v, nil
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// SaveMessage implements Store: ErrForgotten when its author ran forget-me in its guild at or
// after its time, or it is banter's reply to words so forgotten (forgets.go); another member's
// reply to them loses the link. Checked in the insert itself.
func (s *SQLite) SaveMessage(ctx context.Context, m Message) error {
	return saveMessageSQLite(ctx, s.db, m)
}

// saveMessageSQLite is SaveMessage on db (the pool, or a transaction of SaveMessages).
func saveMessageSQLite(ctx context.Context, db interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}, m Message) error {
	return execSaveMessage(m, func(args ...any) (sql.Result, error) { return db.ExecContext(ctx, sqliteSaveMessageSQL(), args...) })
}

// execSaveMessage runs sqliteSaveMessageSQL for m through exec.
func execSaveMessage(m Message, exec func(args ...any) (sql.Result, error)) error {
	res, err := exec(m.ID, m.ChannelID, m.GuildID, m.ThreadID, m.AuthorID, m.AuthorName, m.IsBot, m.IsSelf, m.Content,
		ms(m.CreatedAt), ms(m.EditedAt), m.ReplyToID, m.Persona, m.Deleted, encodeImages(m.Images),
		memberKey(m.GuildID, m.AuthorID), replyKey(m), ms(m.ReplyToOrigin.At), m.Unhandled)
	if err == nil {
		err = savedOrForgotten(res.RowsAffected())
	}
	if err != nil {
		return fmt.Errorf("store: save message %s: %w", m.ID, err)
	}
	return nil
}

// sqliteSaveMessageSQL saves one message (execSaveMessage); it writes no row for one refused by
// a forget-me watermark. The unhandled mark is written by an insert only (Message.Unhandled).
func sqliteSaveMessageSQL() string {
	return `INSERT INTO messages
		(id, channel_id, guild_id, thread_id, author_id, author_name, is_bot, is_self, content,
		 created_at, edited_at, reply_to_id, persona, deleted, images, unhandled)
		SELECT ?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11, CASE WHEN ` + forgottenSQL("?17", "?18") + ` THEN '' ELSE ?12 END, ?13,?14,?15,?19
		WHERE NOT ` + forgottenSQL("?16", "?10") + `
		  AND NOT (?8 AND ` + forgottenSQL("?17", "?18") + `)
		ON CONFLICT(id) DO UPDATE SET channel_id=excluded.channel_id, guild_id=excluded.guild_id,
		 thread_id=excluded.thread_id, author_id=excluded.author_id, author_name=excluded.author_name,
		 is_bot=excluded.is_bot, is_self=excluded.is_self, content=excluded.content,
		 created_at=excluded.created_at, edited_at=excluded.edited_at, reply_to_id=excluded.reply_to_id,
		 persona=CASE WHEN excluded.persona <> '' THEN excluded.persona ELSE messages.persona END,
		 deleted=MAX(messages.deleted, excluded.deleted), images=excluded.images`
}

// savedOrForgotten reads a message insert's row count: none means its author forgot it.
func savedOrForgotten(n int64, err error) error {
	if err == nil && n == 0 {
		err = ErrForgotten
	}
	return err
}

// EditMessage implements Store.
func (s *SQLite) EditMessage(ctx context.Context, id, content string, editedAt time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE messages SET content=?, edited_at=? WHERE id=?`, content, ms(editedAt), id)
	if err != nil {
		return fmt.Errorf("store: edit message %s: %w", id, err)
	}
	return affected(res, "edit message", id)
}

// DeleteMessage implements Store.
func (s *SQLite) DeleteMessage(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE messages SET deleted=1, unhandled=0 WHERE id=?`, id)
	if err != nil {
		return fmt.Errorf("store: delete message %s: %w", id, err)
	}
	return affected(res, "delete message", id)
}

func affected(res sql.Result, op, id string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: %s %s: %w", op, id, ErrNotFound)
	}
	return nil
}

const messageColumns = `id, channel_id, guild_id, thread_id, author_id, author_name, is_bot, is_self,
	content, created_at, edited_at, reply_to_id, persona, deleted, images`

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var created, edited int64
	var images string
	err := row.Scan(&m.ID, &m.ChannelID, &m.GuildID, &m.ThreadID, &m.AuthorID, &m.AuthorName, &m.IsBot,
		&m.IsSelf, &m.Content, &created, &edited, &m.ReplyToID, &m.Persona, &m.Deleted, &images)
	m.CreatedAt, m.EditedAt = fromMS(created), fromMS(edited)
	m.Images = decodeImages(images)
	return m, err
}

// Message implements Store.
func (s *SQLite) Message(ctx context.Context, id string) (Message, error) {
	m, err := scanMessage(s.rdb.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, fmt.Errorf("store: message %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Message{}, fmt.Errorf("store: message %s: %w", id, err)
	}
	return m, nil
}

// RecentMessages implements Store.
func (s *SQLite) RecentMessages(ctx context.Context, channelID string, before time.Time, limit int) ([]Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	beforeMS := ms(before)
	if beforeMS == 0 {
		beforeMS = 1<<63 - 1
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE channel_id=? AND created_at < ? AND deleted=0
		ORDER BY created_at DESC, id DESC LIMIT ?`, channelID, beforeMS, limit)
	if err != nil {
		return nil, fmt.Errorf("store: recent messages of %s: %w", channelID, err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("store: recent messages of %s: %w", channelID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: recent messages of %s: %w", channelID, err)
	}
	reverse(out)
	return out, nil
}

// SearchMessages implements Store with SQLite's FTS5, ranked by bm25.
func (s *SQLite) SearchMessages(ctx context.Context, q SearchQuery) ([]Message, error) {
	terms := searchTerms(q.Text)
	if q.GuildID == "" {
		return nil, fmt.Errorf("store: search messages: no guild")
	}
	if len(terms) == 0 {
		return nil, nil
	}
	// Each word is quoted, so FTS5 reads it as a plain string, never as syntax.
	match := `"` + strings.Join(terms, `" OR "`) + `"`
	where := []string{"messages_fts MATCH ?", "m.guild_id = ?", "m.deleted = 0"}
	args := []any{match, q.GuildID}
	if len(q.ChannelIDs) > 0 {
		where = append(where, "m.channel_id IN (?"+strings.Repeat(",?", len(q.ChannelIDs)-1)+")")
		for _, id := range q.ChannelIDs {
			args = append(args, id)
		}
	}
	if !q.Before.IsZero() {
		where = append(where, "m.created_at < ?")
		args = append(args, ms(q.Before))
	}
	if len(q.ExcludeAuthorIDs) > 0 {
		where = append(where, "m.author_id NOT IN (?"+strings.Repeat(",?", len(q.ExcludeAuthorIDs)-1)+")")
		for _, id := range q.ExcludeAuthorIDs {
			args = append(args, id)
		}
	}
	args = append(args, q.limit())
	cols := "m." + strings.ReplaceAll(strings.Join(strings.Fields(messageColumns), " "), ", ", ", m.")
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+cols+` FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
		WHERE `+strings.Join(where, " AND ")+` ORDER BY bm25(messages_fts), m.created_at DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("store: search messages: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search messages: %w", err)
	}
	return out, nil
}

// SavePersona implements Store.
func (s *SQLite) SavePersona(ctx context.Context, p UserPersona) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO user_personas (user_id, preferred_name, pronouns, description, updated_at)
		VALUES (?,?,?,?,?) ON CONFLICT(user_id) DO UPDATE SET preferred_name=excluded.preferred_name,
		pronouns=excluded.pronouns, description=excluded.description, updated_at=excluded.updated_at`,
		p.UserID, p.PreferredName, p.Pronouns, p.Description, ms(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: save persona of %s: %w", p.UserID, err)
	}
	return nil
}

// Personas implements Store.
func (s *SQLite) Personas(ctx context.Context, userIDs []string) (map[string]UserPersona, error) {
	out := make(map[string]UserPersona, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(userIDs))
	for i, id := range userIDs {
		args[i] = id
	}
	q := `SELECT user_id, preferred_name, pronouns, description, updated_at FROM user_personas WHERE user_id IN (?` +
		strings.Repeat(",?", len(userIDs)-1) + `)`
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: personas: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p UserPersona
		var updated int64
		if err := rows.Scan(&p.UserID, &p.PreferredName, &p.Pronouns, &p.Description, &updated); err != nil {
			return nil, fmt.Errorf("store: personas: %w", err)
		}
		p.UpdatedAt = fromMS(updated)
		out[p.UserID] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: personas: %w", err)
	}
	return out, nil
}

// RecordPrompt implements Store. The insert checks the watermark itself (forgets.go).
func (s *SQLite) RecordPrompt(ctx context.Context, p Prompt) error {
	if p.Kind == PromptUnknown {
		return fmt.Errorf("store: record prompt for %s: kind is unknown", p.ChannelID)
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO prompt_ledger (channel_id, user_id, kind, at)
		SELECT ?1, ?2, ?3, ?4 WHERE NOT `+forgottenSQL("?5", "?6"),
		p.ChannelID, p.UserID, p.Kind.String(), ms(p.At), memberKey(p.GuildID, p.UserID), ms(p.SaidAt))
	if err == nil {
		err = savedOrForgotten(res.RowsAffected())
	}
	if err != nil && !errors.Is(err, ErrForgotten) {
		return fmt.Errorf("store: record prompt for %s: %w", p.ChannelID, err)
	}
	// The ledger serves a sliding hour: drop the channel's older rows on the way, so that it
	// stays small even when Prune never runs (store.retentionDays 0).
	if _, terr := s.db.ExecContext(ctx, `DELETE FROM prompt_ledger WHERE channel_id=? AND at < ?`,
		p.ChannelID, ms(p.At.Add(-ledgerWindow))); terr != nil {
		return fmt.Errorf("store: trim prompt ledger for %s: %w", p.ChannelID, terr)
	}
	if err != nil {
		return fmt.Errorf("store: record prompt for %s: %w", p.ChannelID, err)
	}
	return nil
}

// ledgerWindow is how far back the prompt ledger is kept.
const ledgerWindow = time.Hour

// CountPrompts implements Store.
func (s *SQLite) CountPrompts(ctx context.Context, channelID string, since time.Time) (map[PromptKind]int, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT kind, COUNT(*) FROM prompt_ledger WHERE channel_id=? AND at >= ? GROUP BY kind`,
		channelID, ms(since))
	if err != nil {
		return nil, fmt.Errorf("store: count prompts for %s: %w", channelID, err)
	}
	defer rows.Close()
	out := map[PromptKind]int{}
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			return nil, fmt.Errorf("store: count prompts for %s: %w", channelID, err)
		}
		addPromptCount(out, kind, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: count prompts for %s: %w", channelID, err)
	}
	return out, nil
}

// CountUserPrompts implements Store.
func (s *SQLite) CountUserPrompts(ctx context.Context, channelID, userID string, since time.Time) (int, error) {
	var n int
	if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM prompt_ledger WHERE channel_id=? AND user_id=? AND at >= ?`,
		channelID, userID, ms(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count prompts of %s in %s: %w", userID, channelID, err)
	}
	return n, nil
}

// Prune implements Store.
func (s *SQLite) Prune(ctx context.Context, cutoff, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM messages WHERE created_at < ?`, ms(cutoff))
	if err != nil {
		return 0, fmt.Errorf("store: prune messages: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM prompt_ledger WHERE at < ?`, ms(now.Add(-ledgerWindow))); err != nil {
		return int(n), fmt.Errorf("store: prune ledger: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM turns WHERE admitted_at < ?`, ms(cutoff)); err != nil {
		return int(n), fmt.Errorf("store: prune turns: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM voice_open_turns WHERE heard_at < ?`, ms(cutoff)); err != nil {
		return int(n), fmt.Errorf("store: prune open voice turns: %w", err)
	}
	return int(n), nil
}

// Close implements Store: it checkpoints the WAL into the main file and closes.
func (s *SQLite) Close() error {
	if s.rdb != s.db {
		if err := s.rdb.Close(); err != nil { // first: a reader's snapshot would hold the checkpoint back
			s.db.Close()
			return fmt.Errorf("store: close %s for reading: %w", s.path, err)
		}
	}
	_, cpErr := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	if cpErr != nil {
		return fmt.Errorf("store: checkpoint %s: %w", s.path, cpErr)
	}
	return nil
}

// ForgetMember implements Memory, then merges the full-text index's segments so that the
// words of the deleted messages leave the index too, not only its live view.
func (s *SQLite) ForgetMember(ctx context.Context, guildID, userID string, at time.Time) (ForgetReport, error) {
	r, err := s.factsSQL.ForgetMember(ctx, guildID, userID, at)
	if err != nil {
		return r, err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO messages_fts(messages_fts) VALUES ('optimize')`); err != nil {
		return r, fmt.Errorf("store: forget member %s in %s: merge the search index: %w", userID, guildID, err)
	}
	return r, nil
}

// PurgeLeftGuilds implements GuildsLeft, then merges the full-text index's segments (as
// ForgetMember does) when messages went.
func (s *SQLite) PurgeLeftGuilds(ctx context.Context, cutoff time.Time, owns func(string) bool) ([]GuildPurge, error) {
	ps, err := s.factsSQL.PurgeLeftGuilds(ctx, cutoff, owns)
	for _, p := range ps {
		if p.Rows["messages"] > 0 {
			if _, oerr := s.db.ExecContext(ctx, `INSERT INTO messages_fts(messages_fts) VALUES ('optimize')`); oerr != nil {
				return ps, errors.Join(err, fmt.Errorf("store: purge removed guilds: merge the search index: %w", oerr))
			}
			break
		}
	}
	return ps, err
}
