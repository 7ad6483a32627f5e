package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres searches embeddings with the pgvector extension where it can be created (its
// package installed on the server, and the right to create it), else in process like SQLite.
// With pgvector, each embeddings table gets a vec column (type vector, no fixed length: one
// table holds the vectors of whatever model is configured) that mirrors the stored bytes.

// PGVector modes (PostgresOptions.PGVector, config store.pgvector).
const (
	PGVectorAuto = "auto"
	PGVectorOff  = "off"
)

// embeddingTables are the tables holding vectors, with their keys.
var embeddingTables = []struct{ table, key string }{
	{"fact_embeddings", "fact_id"},
	{"message_embeddings", "message_id"},
}

// setUpVectors decides where searches run, on the migration connection (under its lock): with
// mode auto, it creates the extension if it can, adds the vec columns and fills those still
// empty; else (or when the extension cannot be created) searches run in process, and a vec
// column left by an earlier run is cleared on every write so it never holds a stale vector.
func (s *Postgres) setUpVectors(ctx context.Context, conn *pgxpool.Conn, mode string) error {
	if mode != PGVectorOff {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`)
			return err
		})
		if err == nil {
			for _, t := range embeddingTables {
				if _, err := conn.Exec(ctx, `ALTER TABLE `+t.table+` ADD COLUMN IF NOT EXISTS vec vector`); err != nil {
					return fmt.Errorf("pgvector: add %s.vec: %w", t.table, err)
				}
				if err := backfillVec(ctx, conn, t.table, t.key); err != nil {
					return err
				}
			}
			s.factsSQL.vec = true
			return nil
		}
		s.vecUnavailable = err.Error()
	}
	var n int
	err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'fact_embeddings' AND column_name = 'vec'`).Scan(&n)
	if err != nil {
		return fmt.Errorf("pgvector: look for vec columns: %w", err)
	}
	s.factsSQL.staleVec = n > 0
	return nil
}

// backfillVec fills the vec column of the rows that have none from their stored bytes.
func backfillVec(ctx context.Context, conn *pgxpool.Conn, table, key string) error {
	for {
		rows, err := conn.Query(ctx, `SELECT `+key+`::text, vector FROM `+table+` WHERE vec IS NULL LIMIT 500`)
		if err != nil {
			return fmt.Errorf("pgvector: backfill %s: %w", table, err)
		}
		type row struct {
			key string
			vec []float32
		}
		var batch []row
		for rows.Next() {
			var r row
			var b []byte
			if err := rows.Scan(&r.key, &b); err != nil {
				rows.Close()
				return fmt.Errorf("pgvector: backfill %s: %w", table, err)
			}
			r.vec = decodeVector(b)
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("pgvector: backfill %s: %w", table, err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, r := range batch {
			if len(r.vec) == 0 { // unreadable: the row cannot be searched, drop it
				_, err = conn.Exec(ctx, `DELETE FROM `+table+` WHERE `+key+`::text = $1`, r.key)
			} else {
				_, err = conn.Exec(ctx, `UPDATE `+table+` SET vec = $1::vector WHERE `+key+`::text = $2`, pgvectorLiteral(r.vec), r.key)
			}
			if err != nil {
				return fmt.Errorf("pgvector: backfill %s: %w", table, err)
			}
		}
	}
}
