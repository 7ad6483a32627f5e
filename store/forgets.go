package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// Forget-me watermarks (docs/memory.md, "What forget-me guarantees"). ForgetMember deletes a
// member's data of a guild, but work already in flight (an extraction whose answer comes back
// later, a transcript or a message queued before it and stored after it) would write some of
// it back. So ForgetMember also records when the member asked, and the writes of messages and
// facts refuse (ErrForgotten) anything of theirs said at or before then, in the same statement
// or transaction as the write: there is no window between the check and the write.
//
// A watermark names its member by a one-way hash of the guild and the member's id, not by the
// id: after forget-me, no table holds their id. It is kept for good (a row a member), so a
// message of theirs fetched again from Discord's history later is refused too.
//
// SQLite runs one statement or transaction at a time (one connection), so a write either ran
// before ForgetMember (and is deleted by it) or after (and sees the watermark). On Postgres,
// where writes of several connections interleave, each write holds a shared transaction
// advisory lock of its guild while it checks and writes, and ForgetMember takes it exclusively
// before anything else: it waits for the writes in progress, then deletes what they wrote, and
// a write that starts meanwhile waits for it, then sees its watermark.

// ErrForgotten is returned when a write is refused because what it would store was said by a
// member (or is about one) who ran forget-me in the guild at or after it was said.
var ErrForgotten = errors.New("store: refused: the member asked to be forgotten after this was said")

// Origin is who said something a fact came from, and when (the source message's time).
type Origin struct {
	AuthorID string
	At       time.Time
}

// forgetsMigration is the watermarks' table (SQLite's 9th migration, Postgres's 11th).
const forgetsMigration = `CREATE TABLE memory_forgets (
			member_key TEXT PRIMARY KEY,
			forgot_at  BIGINT NOT NULL
		);`

// memberKey names a member of a guild in memory_forgets: a SHA-256 of the two ids.
func memberKey(guildID, userID string) string {
	sum := sha256.Sum256([]byte("banter-forget\x00" + guildID + "\x00" + userID))
	return hex.EncodeToString(sum[:])
}

// guildLockID is the Postgres advisory lock key of a guild's forget-me (see above).
func guildLockID(guildID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("banter-forget\x00" + guildID))
	return int64(h.Sum64())
}

// lockGuild takes the guild's forget lock for the transaction db is in: shared for a write,
// exclusive for ForgetMember. SQLite needs none (see above).
func (m factsSQL) lockGuild(ctx context.Context, db factDB, guildID string, exclusive bool) error {
	if !m.pg {
		return nil
	}
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	_, err := db.exec(ctx, `SELECT `+fn+`(?::bigint)`, guildLockID(guildID))
	return err
}

// forgotten reports whether one of the origins' authors ran forget-me in the guild at or
// after their words' time.
func forgotten(ctx context.Context, db factDB, guildID string, origins []Origin) (bool, error) {
	if len(origins) == 0 {
		return false, nil
	}
	var or []string
	var args []any
	for _, o := range origins {
		or = append(or, "(member_key=? AND forgot_at >= ?)")
		args = append(args, memberKey(guildID, o.AuthorID), ms(o.At))
	}
	var n int64
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM memory_forgets WHERE `+strings.Join(or, " OR "), args...).Scan(&n)
	return n > 0, err
}

// factOrigins are the origins a fact's write is checked against: its sources' (Fact.Origins),
// and its subject's at the fact's time (a fact about a member says something of theirs).
func factOrigins(f Fact) []Origin {
	out := f.Origins
	if f.SubjectID != FactServer {
		out = append(out[:len(out):len(out)], Origin{AuthorID: f.SubjectID, At: f.CreatedAt})
	}
	return out
}

// Forgot implements Memory.
func (m factsSQL) Forgot(ctx context.Context, guildID, userID string, at time.Time) (bool, error) {
	ok, err := forgotten(ctx, m.db, guildID, []Origin{{AuthorID: userID, At: at}})
	if err != nil {
		return false, fmt.Errorf("store: forget watermark in %s: %w", guildID, err)
	}
	return ok, nil
}

// recordForget sets the member's watermark to at (or keeps a later one).
func recordForget(ctx context.Context, db factDB, guildID, userID string, at time.Time) error {
	if at.IsZero() {
		at = time.Now()
	}
	_, err := db.exec(ctx, `INSERT INTO memory_forgets (member_key, forgot_at) VALUES (?, ?)
		ON CONFLICT (member_key) DO UPDATE SET forgot_at = CASE WHEN excluded.forgot_at > memory_forgets.forgot_at
		THEN excluded.forgot_at ELSE memory_forgets.forgot_at END`, memberKey(guildID, userID), ms(at))
	return err
}

// forgottenSQL is the condition that words said at `at` by the member of `key` (memberKey) are
// covered by their forget watermark: key and at are placeholders. Writes check it in the insert
// itself (a message's reply link, a ledger row, a durable turn).
func forgottenSQL(key, at string) string {
	return `EXISTS (SELECT 1 FROM memory_forgets WHERE member_key = ` + key + ` AND forgot_at >= ` + at + `)`
}

// replyKey is the member key of the message m replies to ("" when unknown: no member's key).
func replyKey(m Message) string {
	if m.ReplyToID == "" || m.ReplyToOrigin.AuthorID == "" {
		return ""
	}
	return memberKey(m.GuildID, m.ReplyToOrigin.AuthorID)
}
