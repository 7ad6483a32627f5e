package store

import (
	"context"
	"fmt"
	"time"
)

// MemoryCursor is how far memory extraction has read one channel: every message of it said at
// or before Through went to the memory model (or was left out by its rules). The messages after
// it that are stored were queued in a process that may have stopped before it extracted them.
type MemoryCursor struct {
	ChannelID string // as stored: a voice channel's transcripts under VoiceChannelID
	Through   time.Time
}

// MemoryCursors keeps each channel's memory cursor, so a process that starts owning a guild
// extracts what a crashed one had queued and not extracted (docs/memory.md).
type MemoryCursors interface {
	// StartMemoryCursor records, when the channel has no cursor yet, that it has been extracted
	// through through (just before the first message a process queued there); an existing
	// cursor is left as it is.
	StartMemoryCursor(ctx context.Context, guildID, channelID string, through time.Time) error
	// AdvanceMemoryCursor moves the channel's cursor to through, never back.
	AdvanceMemoryCursor(ctx context.Context, guildID, channelID string, through time.Time) error
	// GuildMemoryCursors returns the cursors of a guild's channels.
	GuildMemoryCursors(ctx context.Context, guildID string) ([]MemoryCursor, error)
	// MessagesAfter returns up to limit stored, undeleted messages of a channel said after
	// after, oldest first.
	MessagesAfter(ctx context.Context, channelID string, after time.Time, limit int) ([]Message, error)
}

// NewMemoryCursors returns the memory cursors of st (SQLite or Postgres, instrumented or not);
// false when st keeps none.
func NewMemoryCursors(st Store) (MemoryCursors, bool) {
	if i, ok := st.(*instrumented); ok {
		st = i.s
	}
	c, ok := st.(MemoryCursors)
	return c, ok
}

// memoryCursorsMigration holds one row per channel memory extraction has read, with the time
// (ms, as messages.created_at) it has read through.
const memoryCursorsMigration = `CREATE TABLE memory_cursors (
	channel_id TEXT PRIMARY KEY,
	guild_id   TEXT NOT NULL,
	through_at BIGINT NOT NULL
);
CREATE INDEX memory_cursors_guild ON memory_cursors (guild_id);`

var (
	_ MemoryCursors = (*SQLite)(nil)
	_ MemoryCursors = (*Postgres)(nil)
)

// The MemoryCursors methods, written once over either driver (factsSQL).

// StartMemoryCursor implements MemoryCursors.
func (m factsSQL) StartMemoryCursor(ctx context.Context, guildID, channelID string, through time.Time) error {
	if _, err := m.db.exec(ctx, `INSERT INTO memory_cursors (channel_id, guild_id, through_at) VALUES (?, ?, ?)
		ON CONFLICT (channel_id) DO NOTHING`, channelID, guildID, ms(through)); err != nil {
		return fmt.Errorf("store: start memory cursor of %s: %w", channelID, err)
	}
	return nil
}

// AdvanceMemoryCursor implements MemoryCursors: one statement, so two processes that both
// advance a channel's cursor (a shard moved between them) leave the later time.
func (m factsSQL) AdvanceMemoryCursor(ctx context.Context, guildID, channelID string, through time.Time) error {
	if _, err := m.db.exec(ctx, `INSERT INTO memory_cursors (channel_id, guild_id, through_at) VALUES (?, ?, ?)
		ON CONFLICT (channel_id) DO UPDATE SET through_at = excluded.through_at
		WHERE excluded.through_at > memory_cursors.through_at`, channelID, guildID, ms(through)); err != nil {
		return fmt.Errorf("store: advance memory cursor of %s: %w", channelID, err)
	}
	return nil
}

// GuildMemoryCursors implements MemoryCursors.
func (m factsSQL) GuildMemoryCursors(ctx context.Context, guildID string) ([]MemoryCursor, error) {
	rows, err := m.db.query(ctx, `SELECT channel_id, through_at FROM memory_cursors WHERE guild_id = ? ORDER BY channel_id`, guildID)
	if err != nil {
		return nil, fmt.Errorf("store: memory cursors of %s: %w", guildID, err)
	}
	defer rows.Close()
	var out []MemoryCursor
	for rows.Next() {
		var c MemoryCursor
		var at int64
		if err := rows.Scan(&c.ChannelID, &at); err != nil {
			return nil, fmt.Errorf("store: memory cursors of %s: %w", guildID, err)
		}
		c.Through = fromMS(at)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: memory cursors of %s: %w", guildID, err)
	}
	return out, nil
}

// MessagesAfter implements MemoryCursors.
func (m factsSQL) MessagesAfter(ctx context.Context, channelID string, after time.Time, limit int) ([]Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := m.db.query(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE channel_id = ? AND created_at > ? AND NOT deleted ORDER BY created_at, id LIMIT ?`, channelID, ms(after), limit)
	if err != nil {
		return nil, fmt.Errorf("store: messages of %s after %s: %w", channelID, after.Format(time.RFC3339Nano), err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		msg, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("store: messages of %s after: %w", channelID, err)
		}
		out = append(out, msg)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: messages of %s after: %w", channelID, err)
	}
	return out, nil
}
