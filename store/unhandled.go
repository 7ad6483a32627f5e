package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Unhandled messages. A catch-up stores a page of missed messages in one write (SaveMessages)
// before the text pipeline handles them one by one; a crash in between would leave them stored
// and never handled, since the next process's catch-up starts after the newest stored message.
// So the catch-up writes the fresh ones with Message.Unhandled: each row keeps that mark until
// the pipeline is done with the message (MarkHandled), and the next process's catch-up reads
// the channel back from the oldest marked one (UnhandledMessages). See docs/text.md, "A page in
// one write".

// UnhandledMessages marks the messages a catch-up stored before the pipeline handled them.
type UnhandledMessages interface {
	// UnhandledMessages returns the ids of a channel's messages created at or after since that
	// are still marked unhandled, oldest first (at most limit of them).
	UnhandledMessages(ctx context.Context, channelID string, since time.Time, limit int) ([]string, error)
	// MarkHandled clears the mark of the messages ids; ids not stored, or not marked, are
	// ignored. An empty ids is no write.
	MarkHandled(ctx context.Context, ids []string) error
}

// unhandledMigration adds the mark (SQLite's 18th migration, Postgres's 21st). It has no index
// of its own, which every write would maintain: UnhandledMessages reads a channel's recent
// messages by messages_channel_created, over the window a catch-up answers.
func unhandledMigration(boolType string) string {
	return `ALTER TABLE messages ADD COLUMN unhandled ` + boolType + ` NOT NULL DEFAULT FALSE;`
}

var (
	_ UnhandledMessages = (*SQLite)(nil)
	_ UnhandledMessages = (*Postgres)(nil)
)

// UnhandledMessages implements UnhandledMessages.
func (m factsSQL) UnhandledMessages(ctx context.Context, channelID string, since time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := m.db.query(ctx, `SELECT id FROM messages WHERE channel_id = ? AND created_at >= ? AND unhandled
		ORDER BY created_at, id LIMIT ?`, channelID, ms(since), limit)
	if err != nil {
		return nil, fmt.Errorf("store: unhandled messages of %s: %w", channelID, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: unhandled messages of %s: %w", channelID, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: unhandled messages of %s: %w", channelID, err)
	}
	return ids, nil
}

// MarkHandled implements UnhandledMessages: one statement.
func (m factsSQL) MarkHandled(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := `UPDATE messages SET unhandled = FALSE WHERE unhandled AND id IN (?` + strings.Repeat(", ?", len(ids)-1) + `)`
	if _, err := m.db.exec(ctx, q, args...); err != nil {
		return fmt.Errorf("store: mark %d messages handled: %w", len(ids), err)
	}
	return nil
}
