package store

import (
	"context"
	"fmt"
	"time"
)

// Durable turns. An addressed turn the text pipeline admits is recorded (open) before its reply
// is generated and closed with its outcome once it has one; a process that starts (or takes over
// a shard) answers or explains the open turns of its guilds, so a crash between admission and
// the reply loses nothing without a trace. See docs/reliability.md.

// Turn is one admitted addressed turn, keyed by the message that triggered it.
type Turn struct {
	MessageID string
	ChannelID string
	GuildID   string
	// AnswerID is the turn whose reply answers this one: itself, or the turn it was coalesced
	// into.
	AnswerID   string
	AdmittedAt time.Time
	// Outcome is empty while the turn is open, else how it ended (TurnSent, …).
	Outcome  string
	ClosedAt time.Time
	// Author is who sent MessageID and when (not stored): the turn is refused when they have
	// run forget-me in the guild since (ForgetMember deletes their turns).
	Author Origin
	// AnswerAuthor is who sent AnswerID and when (not stored): when they have run forget-me
	// since, the turn is stored answering itself, without the link to their message, as
	// ForgetMember leaves the turns coalesced into theirs.
	AnswerAuthor Origin
	// Reply is the text of the turn's model reply, recorded (SetTurnReply) before it is sent, so
	// that a process taking the open turn up after a crash recognises it in the channel (also
	// without a reply reference) and, when the crash came between two parts of a reply split
	// into several messages, sends the rest of it; "" before, and once closed.
	Reply string
}

// Turn outcomes, as stored.
const (
	TurnSent      = "sent"      // a reply (or the placeholder) was sent
	TurnSkipped   = "skipped"   // the model declined and nothing was sent
	TurnFailed    = "failed"    // the model or the send failed (logged, an apology tried)
	TurnExplained = "explained" // not answered, with a logged reason (rate limit, denied, too old, gone)
)

// turnsMigration is the table both drivers create (same SQL: TEXT and BIGINT columns).
const turnsMigration = `CREATE TABLE turns (
			message_id  TEXT PRIMARY KEY,
			channel_id  TEXT NOT NULL,
			guild_id    TEXT NOT NULL DEFAULT '',
			answer_id   TEXT NOT NULL DEFAULT '',
			admitted_at BIGINT NOT NULL,
			outcome     TEXT NOT NULL DEFAULT '',
			closed_at   BIGINT NOT NULL DEFAULT 0
		);
		CREATE INDEX turns_open ON turns (guild_id, admitted_at) WHERE outcome = '';`

// turnReplyMigration adds the text of their reply to the turns (Turn.Reply).
const turnReplyMigration = `ALTER TABLE turns ADD COLUMN reply TEXT NOT NULL DEFAULT '';`

// OpenTurn implements Store.
func (s *SQLite) OpenTurn(ctx context.Context, t Turn) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO turns (message_id, channel_id, guild_id, answer_id, admitted_at)
		SELECT ?1, ?2, ?3, CASE WHEN `+forgottenSQL("?8", "?9")+` THEN ?1 ELSE ?4 END, ?5 WHERE NOT `+forgottenSQL("?6", "?7")+`
		ON CONFLICT (message_id) DO UPDATE SET answer_id=excluded.answer_id, outcome='', closed_at=0, reply=''`,
		turnArgs(t)...)
	if err == nil {
		err = savedOrForgotten(res.RowsAffected())
	}
	if err != nil {
		return fmt.Errorf("store: open turn %s: %w", t.MessageID, err)
	}
	return nil
}

// CloseTurns implements Store.
func (s *SQLite) CloseTurns(ctx context.Context, ids []string, outcome string, at time.Time) error {
	if err := checkOutcome(outcome); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := s.db.ExecContext(ctx, `UPDATE turns SET outcome=?, closed_at=?, reply='' WHERE message_id=?`, outcome, ms(at), id); err != nil {
			return fmt.Errorf("store: close turn %s: %w", id, err)
		}
	}
	return nil
}

// SetTurnReply implements Store.
func (s *SQLite) SetTurnReply(ctx context.Context, messageID, reply string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE turns SET reply=? WHERE message_id=? AND outcome=''`, reply, messageID); err != nil {
		return fmt.Errorf("store: set turn reply %s: %w", messageID, err)
	}
	return nil
}

// DropTurn implements Store.
func (s *SQLite) DropTurn(ctx context.Context, messageID string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM turns WHERE message_id=?`, messageID); err != nil {
		return fmt.Errorf("store: drop turn %s: %w", messageID, err)
	}
	return nil
}

// OpenTurns implements Store.
func (s *SQLite) OpenTurns(ctx context.Context, guildID string) ([]Turn, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT message_id, channel_id, guild_id, answer_id, admitted_at, reply
		FROM turns WHERE guild_id=? AND outcome='' ORDER BY admitted_at, message_id`, guildID)
	if err != nil {
		return nil, fmt.Errorf("store: open turns of %s: %w", guildID, err)
	}
	defer rows.Close()
	out, err := scanTurns(rows.Next, rows.Scan)
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("store: open turns of %s: %w", guildID, err)
	}
	return out, nil
}

// OpenTurn implements Store.
func (s *Postgres) OpenTurn(ctx context.Context, t Turn) error {
	err := s.lockedWrite(ctx, t.GuildID, `INSERT INTO turns (message_id, channel_id, guild_id, answer_id, admitted_at)
		SELECT $1::text, $2::text, $3::text, CASE WHEN `+forgottenSQL("$8::text", "$9::bigint")+` THEN $1::text ELSE $4::text END, $5::bigint
		WHERE NOT `+forgottenSQL("$6::text", "$7::bigint")+`
		ON CONFLICT (message_id) DO UPDATE SET answer_id=excluded.answer_id, outcome='', closed_at=0, reply=''`,
		turnArgs(t)...)
	if err != nil {
		return fmt.Errorf("store: open turn %s: %w", t.MessageID, err)
	}
	return nil
}

// CloseTurns implements Store.
func (s *Postgres) CloseTurns(ctx context.Context, ids []string, outcome string, at time.Time) error {
	if err := checkOutcome(outcome); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `UPDATE turns SET outcome=$1, closed_at=$2, reply='' WHERE message_id = ANY($3)`,
		outcome, ms(at), nonNil(ids)); err != nil {
		return fmt.Errorf("store: close turns %v: %w", ids, err)
	}
	return nil
}

// SetTurnReply implements Store.
func (s *Postgres) SetTurnReply(ctx context.Context, messageID, reply string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE turns SET reply=$1 WHERE message_id=$2 AND outcome=''`, reply, messageID); err != nil {
		return fmt.Errorf("store: set turn reply %s: %w", messageID, err)
	}
	return nil
}

// DropTurn implements Store.
func (s *Postgres) DropTurn(ctx context.Context, messageID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM turns WHERE message_id=$1`, messageID); err != nil {
		return fmt.Errorf("store: drop turn %s: %w", messageID, err)
	}
	return nil
}

// OpenTurns implements Store.
func (s *Postgres) OpenTurns(ctx context.Context, guildID string) ([]Turn, error) {
	rows, err := s.pool.Query(ctx, `SELECT message_id, channel_id, guild_id, answer_id, admitted_at, reply
		FROM turns WHERE guild_id=$1 AND outcome='' ORDER BY admitted_at, message_id`, guildID)
	if err != nil {
		return nil, fmt.Errorf("store: open turns of %s: %w", guildID, err)
	}
	defer rows.Close()
	out, err := scanTurns(rows.Next, func(dest ...any) error { return rows.Scan(dest...) })
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("store: open turns of %s: %w", guildID, err)
	}
	return out, nil
}

// scanTurns reads the rows of an open-turns query.
func scanTurns(next func() bool, scan func(dest ...any) error) ([]Turn, error) {
	var out []Turn
	for next() {
		var t Turn
		var at int64
		if err := scan(&t.MessageID, &t.ChannelID, &t.GuildID, &t.AnswerID, &at, &t.Reply); err != nil {
			return nil, err
		}
		t.AdmittedAt = fromMS(at)
		out = append(out, t)
	}
	return out, nil
}

// turnArgs are OpenTurn's arguments: the row, then the member keys and times its author's and
// its answer's author's watermarks are checked against.
func turnArgs(t Turn) []any {
	return []any{t.MessageID, t.ChannelID, t.GuildID, answerOf(t), ms(t.AdmittedAt),
		memberKey(t.GuildID, t.Author.AuthorID), ms(t.Author.At), memberKey(t.GuildID, t.AnswerAuthor.AuthorID), ms(t.AnswerAuthor.At)}
}

// answerOf is the turn's AnswerID, itself when unset.
func answerOf(t Turn) string {
	if t.AnswerID == "" {
		return t.MessageID
	}
	return t.AnswerID
}

// checkOutcome refuses an outcome that is not one of the Turn* constants.
func checkOutcome(o string) error {
	switch o {
	case TurnSent, TurnSkipped, TurnFailed, TurnExplained:
		return nil
	}
	return fmt.Errorf("store: close turns: unknown outcome %q", o)
}
