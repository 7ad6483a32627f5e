package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the Store for several banter processes sharing one database (sharding): the
// messages, personas and prompt ledger live in one place, so a shard that moves to another
// process keeps its history and its rate-limit budget.
//
// Times are stored as Unix milliseconds (BIGINT), as in SQLite, so both drivers round alike.
type Postgres struct {
	factsSQL // the Memory and Embeddings methods (facts.go, embeddings_db.go)
	pool     *pgxpool.Pool
	name     string // the DSN with its password removed, for error messages
	// vecUnavailable is why pgvector is not in use when store.pgvector is auto ("" when it is
	// in use, or off by config).
	vecUnavailable string
	pgvector       string // PostgresOptions.PGVector
}

var _ Store = (*Postgres)(nil)

// PostgresOptions tunes the connection pool.
type PostgresOptions struct {
	// MaxConns caps the pool (0: pgx's default, the larger of 4 and the number of CPUs).
	MaxConns int32
	// PGVector is PGVectorAuto (the default, for ""): search embeddings with pgvector when
	// the extension can be created; or PGVectorOff: always in process.
	PGVector string
}

// migrationLockID is the advisory lock that serializes migrations when several processes start
// at once against one database.
const migrationLockID = 0x62616e746572 // "banter"

// OpenPostgres connects to the database at dsn (a postgres:// URL or key=value string), waits
// for it to answer, and brings its schema up to date. Errors name the server, never the password.
func OpenPostgres(ctx context.Context, dsn string, opts PostgresOptions) (*Postgres, error) {
	if dsn == "" {
		return nil, errors.New("store: open postgres: empty store.dsn (want postgres://user@host:5432/db)")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors may quote the DSN; say only what was wrong with it.
		return nil, fmt.Errorf("store: open postgres: store.dsn is not a valid connection string (postgres://user:password@host:5432/db or host=… dbname=…): %w", redactedParseError(err))
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	name := describeConfig(cfg.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres %s: %w", name, err)
	}
	s := &Postgres{pool: pool, name: name, factsSQL: factsSQL{db: pgFacts{pool: pool}, pg: true}, pgvector: opts.PGVector}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect to postgres %s (is the server running and the DSN right?): %w", name, err)
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: postgres %s: %w", name, err)
	}
	return s, nil
}

// describeConfig names a server as user@host:port/db, without the password.
func describeConfig(c *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", User: url.User(c.User), Host: fmt.Sprintf("%s:%d", c.Host, c.Port), Path: "/" + c.Database}
	return u.String()
}

// redactedParseError keeps the reason pgx gives for a bad DSN but none of the DSN itself: pgx's
// own message quotes it with best-effort password masking, and url.Parse's errors quote it whole.
func redactedParseError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return errors.New(pe.Unwrap().Error())
	}
	return errors.New("unrecognised format")
}

// pgMigrations are applied in order; schema_version records how many ran. Append only.
func pgMigrations() []string {
	return []string{
		`CREATE TABLE messages (
			id          TEXT PRIMARY KEY,
			channel_id  TEXT NOT NULL,
			guild_id    TEXT NOT NULL DEFAULT '',
			thread_id   TEXT NOT NULL DEFAULT '',
			author_id   TEXT NOT NULL,
			author_name TEXT NOT NULL DEFAULT '',
			is_bot      BOOLEAN NOT NULL DEFAULT FALSE,
			is_self     BOOLEAN NOT NULL DEFAULT FALSE,
			content     TEXT NOT NULL DEFAULT '',
			created_at  BIGINT NOT NULL,
			edited_at   BIGINT NOT NULL DEFAULT 0,
			reply_to_id TEXT NOT NULL DEFAULT '',
			persona     TEXT NOT NULL DEFAULT '',
			deleted     BOOLEAN NOT NULL DEFAULT FALSE
		);
		CREATE INDEX messages_channel_created ON messages (channel_id, created_at);
		CREATE INDEX messages_reply_to ON messages (reply_to_id) WHERE reply_to_id <> '';
		CREATE TABLE user_personas (
			user_id        TEXT PRIMARY KEY,
			preferred_name TEXT NOT NULL DEFAULT '',
			pronouns       TEXT NOT NULL DEFAULT '',
			description    TEXT NOT NULL DEFAULT '',
			updated_at     BIGINT NOT NULL
		);
		CREATE TABLE prompt_ledger (
			channel_id TEXT NOT NULL,
			kind       TEXT NOT NULL,
			at         BIGINT NOT NULL
		);
		CREATE INDEX prompt_ledger_channel_at ON prompt_ledger (channel_id, at);`,
		// 2: full-text search over message content (memory lookups). search_text is the content
		// folded by banter (lower case, no diacritics: foldText); the 'simple' configuration
		// indexes its words without stemming, for any language, like SQLite's unicode61.
		`ALTER TABLE messages ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
		UPDATE messages SET search_text = lower(content);
		ALTER TABLE messages ADD COLUMN content_tsv tsvector
			GENERATED ALWAYS AS (to_tsvector('simple', search_text)) STORED;
		CREATE INDEX messages_content_tsv ON messages USING GIN (content_tsv);`,
		// 3: when each identify rate-limit key may next identify (sharding across processes).
		`CREATE TABLE identify_slots (key INT PRIMARY KEY, next_at TIMESTAMPTZ NOT NULL);`,
		// 4: who asked, for the per-user share of the prompt budget (activity.perUserPromptShare).
		// Rows from before the upgrade have no user and count for the channel only.
		`ALTER TABLE prompt_ledger ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
		CREATE INDEX prompt_ledger_channel_user_at ON prompt_ledger (channel_id, user_id, at);`,
		// 5: the images each message shows (JSON), kept since Discord's signed URLs expire.
		`ALTER TABLE messages ADD COLUMN images TEXT NOT NULL DEFAULT '';`,
		// 6: durable turns (turns.go): admitted addressed turns, open until their outcome.
		turnsMigration,
		// 7: when each model provider's request budget has its next slot (llm.requestsPerMinute).
		`CREATE TABLE request_budgets (provider TEXT PRIMARY KEY, next_at TIMESTAMPTZ NOT NULL);`,
		// 8: long-term memory (facts.go): facts, their source messages, members who paused it.
		factsMigration("BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "BIGINT"),
		// 9: the day's spend by guild and model slot (spend.go: the daily budgets).
		`CREATE TABLE spend (day TEXT NOT NULL, guild_id TEXT NOT NULL, slot TEXT NOT NULL,
			usd DOUBLE PRECISION NOT NULL DEFAULT 0, PRIMARY KEY (day, guild_id, slot));`,
		// 10: embeddings of facts and messages (embeddings.go: search by meaning). The pgvector
		// columns are added at open when the extension can be created (usePGVector).
		embeddingsMigration("BIGINT", "BYTEA") + pgEmbeddingsTrigger,
		// 11: forget-me watermarks (forgets.go): writes refuse what a forgotten member said before.
		forgetsMigration,
		// 12: which guilds' cap notice was said on which budget day (spend.go: ClaimCapNotice).
		capNoticesMigration,
		// 13: notify other processes of memory changes (memchanges.go).
		pgMemoryNotifyMigration,
		// 14: the embedding backfill's leases, and the index its pages are read by (backfill.go).
		backfillMigration,
		// 15: the text of a turn's reply, kept while the turn is open (turns.go).
		turnReplyMigration,
		// 16: how far memory extraction has read each channel (memcursor.go).
		memoryCursorsMigration,
		// 17: the voice sessions joined by command, kept across restarts (voicesessions.go).
		voiceSessionsMigration,
		// 18: the utterance the bot is answering in each guild's voice session (voiceturns.go).
		openVoiceTurnsMigration,
		// 19: the guilds banter was removed from, until their data is purged (guildsleft.go).
		guildsLeftMigration,
		// 20: turns indexed by guild, for the removed-guild check at READY (guildsleft.go).
		guildScanMigration,
		// 21: the messages a catch-up stored before the pipeline handled them (unhandled.go).
		unhandledMigration("BOOLEAN"),
	}
}

// migrate applies the missing migrations under an advisory lock, so processes starting together
// run each migration once.
func (s *Postgres) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLockID)); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLockID))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: create schema_version: %w", err)
	}
	var version int
	err = conn.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := conn.Exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fmt.Errorf("migrate: init schema_version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read schema version: %w", err)
	}
	all := pgMigrations()
	if version > len(all) {
		return fmt.Errorf("schema version %d is newer than this banter knows (%d): upgrade banter", version, len(all))
	}
	for i := version; i < len(all); i++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, all[i]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE schema_version SET version=$1`, i+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return s.setUpVectors(ctx, conn, s.pgvector)
}

// VectorUnavailable says why pgvector is not in use with store.pgvector auto ("" when it is,
// or when it is off by config): the extension's package missing on the server, or no right
// to create it.
func (s *Postgres) VectorUnavailable() string { return s.vecUnavailable }

// SchemaVersion reports how many migrations have been applied.
func (s *Postgres) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version of %s: %w", s.name, err)
	}
	return v, nil
}

// SaveMessage implements Store: ErrForgotten when its author ran forget-me in its guild at or
// after its time, or it is banter's reply to words so forgotten (forgets.go); another member's
// reply to them loses the link. The insert checks the watermark under the guild's forget lock
// (lockedWrite).
func (s *Postgres) SaveMessage(ctx context.Context, m Message) error {
	err := s.lockedWrite(ctx, m.GuildID, pgSaveMessageSQL(), pgSaveMessageArgs(m)...)
	if err != nil {
		return fmt.Errorf("store: save message %s: %w", m.ID, err)
	}
	return nil
}

// SaveMessages implements Store: one batch, one round trip and one implicit transaction, that
// takes the forget lock of each guild of msgs (shared, in key order), then saves each message
// as SaveMessage does.
func (s *Postgres) SaveMessages(ctx context.Context, msgs []Message) ([]error, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	var locks []int64
	for _, m := range msgs {
		if id := guildLockID(m.GuildID); !slices.Contains(locks, id) {
			locks = append(locks, id)
		}
	}
	slices.Sort(locks)
	b := &pgx.Batch{}
	for _, id := range locks {
		b.Queue(`SELECT pg_advisory_xact_lock_shared($1::bigint)`, id)
	}
	for _, m := range msgs {
		b.Queue(pgSaveMessageSQL(), pgSaveMessageArgs(m)...)
	}
	br := s.pool.SendBatch(ctx, b)
	results := make([]error, len(msgs))
	var err error
	for range locks {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	for i := 0; err == nil && i < len(msgs); i++ {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.RowsAffected() == 0 {
			results[i] = fmt.Errorf("store: save message %s: %w", msgs[i].ID, ErrForgotten)
		} else if err != nil {
			err = fmt.Errorf("store: save message %s: %w", msgs[i].ID, err)
		}
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("store: save %d messages: %w", len(msgs), err)
	}
	return results, nil
}

// pgSaveMessageSQL saves one message (pgSaveMessageArgs); it writes no row for one refused by
// a forget-me watermark. The unhandled mark is written by an insert only (Message.Unhandled).
func pgSaveMessageSQL() string {
	return `INSERT INTO messages
		(id, channel_id, guild_id, thread_id, author_id, author_name, is_bot, is_self, content,
		 created_at, edited_at, reply_to_id, persona, deleted, search_text, images, unhandled)
		SELECT $1::text,$2::text,$3::text,$4::text,$5::text,$6::text,$7::boolean,$8::boolean,$9::text,
		 $10::bigint,$11::bigint, CASE WHEN ` + forgottenSQL("$18::text", "$19::bigint") + ` THEN '' ELSE $12::text END,
		 $13::text,$14::boolean,$15::text,$16::text,$20::boolean
		WHERE NOT ` + forgottenSQL("$17::text", "$10::bigint") + `
		  AND NOT ($8::boolean AND ` + forgottenSQL("$18::text", "$19::bigint") + `)
		ON CONFLICT (id) DO UPDATE SET channel_id=excluded.channel_id, guild_id=excluded.guild_id,
		 thread_id=excluded.thread_id, author_id=excluded.author_id, author_name=excluded.author_name,
		 is_bot=excluded.is_bot, is_self=excluded.is_self, content=excluded.content,
		 created_at=excluded.created_at, edited_at=excluded.edited_at, reply_to_id=excluded.reply_to_id,
		 persona=CASE WHEN excluded.persona <> '' THEN excluded.persona ELSE messages.persona END,
		 deleted=(messages.deleted OR excluded.deleted), search_text=excluded.search_text, images=excluded.images`
}

// pgSaveMessageArgs are pgSaveMessageSQL's arguments for m.
func pgSaveMessageArgs(m Message) []any {
	return []any{m.ID, m.ChannelID, m.GuildID, m.ThreadID, m.AuthorID, m.AuthorName, m.IsBot, m.IsSelf, m.Content,
		ms(m.CreatedAt), ms(m.EditedAt), m.ReplyToID, m.Persona, m.Deleted, foldText(m.Content), encodeImages(m.Images),
		memberKey(m.GuildID, m.AuthorID), replyKey(m), ms(m.ReplyToOrigin.At), m.Unhandled}
}

// lockedWrite runs a write that checks a forget watermark in its statement (forgets.go) under
// the guild's shared forget lock, in one round trip (a batch: one implicit transaction), so
// that a ForgetMember running meanwhile either waits for it (and deletes what it wrote) or
// ran before it (and the statement sees the watermark). ErrForgotten when it wrote no row.
func (s *Postgres) lockedWrite(ctx context.Context, guildID, sql string, args ...any) error {
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock_shared($1::bigint)`, guildLockID(guildID))
	b.Queue(sql, args...)
	br := s.pool.SendBatch(ctx, b)
	_, err := br.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return savedOrForgotten(tag.RowsAffected(), err)
}

// EditMessage implements Store.
func (s *Postgres) EditMessage(ctx context.Context, id, content string, editedAt time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE messages SET content=$1, edited_at=$2, search_text=$4 WHERE id=$3`, content, ms(editedAt), id, foldText(content))
	if err != nil {
		return fmt.Errorf("store: edit message %s: %w", id, err)
	}
	return pgAffected(tag, "edit message", id)
}

// DeleteMessage implements Store.
func (s *Postgres) DeleteMessage(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE messages SET deleted=TRUE, unhandled=FALSE WHERE id=$1`, id)
	if err != nil {
		return fmt.Errorf("store: delete message %s: %w", id, err)
	}
	return pgAffected(tag, "delete message", id)
}

func pgAffected(tag pgconn.CommandTag, op, id string) error {
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: %s %s: %w", op, id, ErrNotFound)
	}
	return nil
}

// Message implements Store.
func (s *Postgres) Message(ctx context.Context, id string) (Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE id=$1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Message{}, fmt.Errorf("store: message %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Message{}, fmt.Errorf("store: message %s: %w", id, err)
	}
	return m, nil
}

// RecentMessages implements Store.
func (s *Postgres) RecentMessages(ctx context.Context, channelID string, before time.Time, limit int) ([]Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	beforeMS := ms(before)
	if beforeMS == 0 {
		beforeMS = 1<<63 - 1
	}
	rows, err := s.pool.Query(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE channel_id=$1 AND created_at < $2 AND NOT deleted
		ORDER BY created_at DESC, id DESC LIMIT $3`, channelID, beforeMS, limit)
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

// SearchMessages implements Store with a tsvector index, ranked by ts_rank.
func (s *Postgres) SearchMessages(ctx context.Context, q SearchQuery) ([]Message, error) {
	terms := searchTerms(q.Text)
	if q.GuildID == "" {
		return nil, fmt.Errorf("store: search messages: no guild")
	}
	if len(terms) == 0 {
		return nil, nil
	}
	// plainto_tsquery of each word alone turns it into a lexeme without reading any syntax;
	// the words are then joined with OR.
	var before int64 = 1<<63 - 1
	if !q.Before.IsZero() {
		before = ms(q.Before)
	}
	rows, err := s.pool.Query(ctx, `WITH query AS (
			SELECT COALESCE(
				(SELECT string_agg(plainto_tsquery('simple', w)::text, ' | ') FROM unnest($1::text[]) AS w
				 WHERE plainto_tsquery('simple', w)::text <> ''), '')::tsquery AS q)
		SELECT `+messageColumns+` FROM messages, query
		WHERE content_tsv @@ query.q AND guild_id = $2 AND NOT deleted AND created_at < $3
		  AND (cardinality($4::text[]) = 0 OR channel_id = ANY($4))
		  AND NOT (author_id = ANY($5))
		ORDER BY ts_rank(content_tsv, query.q) DESC, created_at DESC LIMIT $6`,
		terms, q.GuildID, before, nonNil(q.ChannelIDs), nonNil(q.ExcludeAuthorIDs), q.limit())
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

// nonNil sends an empty array rather than NULL for a nil slice.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SavePersona implements Store.
func (s *Postgres) SavePersona(ctx context.Context, p UserPersona) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO user_personas (user_id, preferred_name, pronouns, description, updated_at)
		VALUES ($1,$2,$3,$4,$5) ON CONFLICT (user_id) DO UPDATE SET preferred_name=excluded.preferred_name,
		pronouns=excluded.pronouns, description=excluded.description, updated_at=excluded.updated_at`,
		p.UserID, p.PreferredName, p.Pronouns, p.Description, ms(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: save persona of %s: %w", p.UserID, err)
	}
	return nil
}

// Personas implements Store.
func (s *Postgres) Personas(ctx context.Context, userIDs []string) (map[string]UserPersona, error) {
	out := make(map[string]UserPersona, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT user_id, preferred_name, pronouns, description, updated_at
		FROM user_personas WHERE user_id = ANY($1)`, userIDs)
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

// RecordPrompt implements Store. The insert, its watermark check and the trim of the channel's
// old rows are one statement, under the guild's forget lock (lockedWrite).
func (s *Postgres) RecordPrompt(ctx context.Context, p Prompt) error {
	if p.Kind == PromptUnknown {
		return fmt.Errorf("store: record prompt for %s: kind is unknown", p.ChannelID)
	}
	err := s.lockedWrite(ctx, p.GuildID, `WITH trimmed AS (DELETE FROM prompt_ledger WHERE channel_id=$1::text AND at < $4::bigint)
		INSERT INTO prompt_ledger (channel_id, kind, at, user_id) SELECT $1::text, $2::text, $3::bigint, $5::text
		WHERE NOT `+forgottenSQL("$6::text", "$7::bigint"),
		p.ChannelID, p.Kind.String(), ms(p.At), ms(p.At.Add(-ledgerWindow)), p.UserID, memberKey(p.GuildID, p.UserID), ms(p.SaidAt))
	if err != nil {
		return fmt.Errorf("store: record prompt for %s: %w", p.ChannelID, err)
	}
	return nil
}

// CountPrompts implements Store.
func (s *Postgres) CountPrompts(ctx context.Context, channelID string, since time.Time) (map[PromptKind]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, COUNT(*) FROM prompt_ledger WHERE channel_id=$1 AND at >= $2 GROUP BY kind`,
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
func (s *Postgres) CountUserPrompts(ctx context.Context, channelID, userID string, since time.Time) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM prompt_ledger WHERE channel_id=$1 AND user_id=$2 AND at >= $3`,
		channelID, userID, ms(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count prompts of %s in %s: %w", userID, channelID, err)
	}
	return n, nil
}

// Prune implements Store.
func (s *Postgres) Prune(ctx context.Context, cutoff, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM messages WHERE created_at < $1`, ms(cutoff))
	if err != nil {
		return 0, fmt.Errorf("store: prune messages: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM prompt_ledger WHERE at < $1`, ms(now.Add(-ledgerWindow))); err != nil {
		return int(tag.RowsAffected()), fmt.Errorf("store: prune ledger: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM turns WHERE admitted_at < $1`, ms(cutoff)); err != nil {
		return int(tag.RowsAffected()), fmt.Errorf("store: prune turns: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM voice_open_turns WHERE heard_at < $1`, ms(cutoff)); err != nil {
		return int(tag.RowsAffected()), fmt.Errorf("store: prune open voice turns: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Close implements Store: it waits for queries in flight and closes the pool.
func (s *Postgres) Close() error {
	s.pool.Close()
	return nil
}
