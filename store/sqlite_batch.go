package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SaveMessages implements Store: one transaction (one commit) for all of ms.
func (s *SQLite) SaveMessages(ctx context.Context, msgs []Message) ([]error, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: save %d messages: begin: %w", len(msgs), err)
	}
	stmt, err := tx.PrepareContext(ctx, sqliteSaveMessageSQL())
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("store: save %d messages: prepare: %w", len(msgs), err)
	}
	defer stmt.Close()
	results := make([]error, len(msgs))
	for i, m := range msgs {
		err := execSaveMessage(m, func(args ...any) (sql.Result, error) { return stmt.ExecContext(ctx, args...) })
		if err != nil && !errors.Is(err, ErrForgotten) {
			tx.Rollback()
			return nil, fmt.Errorf("store: save %d messages: %w", len(msgs), err)
		}
		results[i] = err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: save %d messages: commit: %w", len(msgs), err)
	}
	return results, nil
}
