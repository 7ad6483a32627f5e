package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// factsMigration is the facts tables' migration (in migrations() and pgMigrations(): the
// same tables on both drivers) with idColumn as the facts' key, each driver's
// auto-incrementing one, and idType as the type that refers to it.
func factsMigration(idColumn, idType string) string {
	return `CREATE TABLE facts (
			id            ` + idColumn + `,
			guild_id      TEXT NOT NULL,
			subject_id    TEXT NOT NULL,
			subject_name  TEXT NOT NULL DEFAULT '',
			statement     TEXT NOT NULL,
			search_text   TEXT NOT NULL DEFAULT '',
			created_at    BIGINT NOT NULL,
			superseded_by BIGINT NOT NULL DEFAULT 0,
			retired_at    BIGINT NOT NULL DEFAULT 0,
			locked        INTEGER NOT NULL DEFAULT 0
		);
		CREATE INDEX facts_guild_subject ON facts (guild_id, subject_id, retired_at);
		CREATE TABLE fact_sources (
			fact_id    ` + idType + ` NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
			message_id TEXT NOT NULL,
			PRIMARY KEY (fact_id, message_id)
		);
		CREATE INDEX fact_sources_message ON fact_sources (message_id);
		CREATE TABLE memory_pauses (
			guild_id TEXT NOT NULL,
			user_id  TEXT NOT NULL,
			since    BIGINT NOT NULL,
			PRIMARY KEY (guild_id, user_id)
		);
		CREATE INDEX messages_guild_author ON messages (guild_id, author_id);`
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) }

// sqlExecer is what *sql.DB and *sql.Tx share.
type sqlExecer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// sqliteFacts is factDB over database/sql (SQLite).
type sqliteFacts struct {
	db *sql.DB   // for transactions
	x  sqlExecer // the database, or the transaction in progress
	r  sqlExecer // the read-only pool (SQLite.rdb), for reads outside a transaction
}

// reader is where a read goes: the transaction in progress, else the read-only pool.
func (d sqliteFacts) reader() sqlExecer {
	if _, inTx := d.x.(*sql.Tx); inTx || d.r == nil {
		return d.x
	}
	return d.r
}

func (d sqliteFacts) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := d.x.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (d sqliteFacts) query(ctx context.Context, q string, args ...any) (factRows, error) {
	rows, err := d.reader().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (d sqliteFacts) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	return d.reader().QueryRowContext(ctx, q, args...)
}

func (d sqliteFacts) tx(ctx context.Context, fn func(factDB) error) error {
	if _, inTx := d.x.(*sql.Tx); inTx {
		return fn(d)
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(sqliteFacts{db: d.db, x: tx, r: d.r}); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

// pgFacts is factDB over pgx (Postgres): the ? placeholders become $1, $2, ….
type pgFacts struct {
	pool *pgxpool.Pool
	tx0  pgx.Tx // the transaction in progress, nil outside one
}

func (d pgFacts) q() interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
} {
	if d.tx0 != nil {
		return d.tx0
	}
	return d.pool
}

func (d pgFacts) exec(ctx context.Context, q string, args ...any) (int64, error) {
	var err error
	var n int64
	if d.tx0 != nil {
		tag, e := d.tx0.Exec(ctx, dollars(q), args...)
		n, err = tag.RowsAffected(), e
	} else {
		tag, e := d.pool.Exec(ctx, dollars(q), args...)
		n, err = tag.RowsAffected(), e
	}
	return n, err
}

func (d pgFacts) query(ctx context.Context, q string, args ...any) (factRows, error) {
	rows, err := d.q().Query(ctx, dollars(q), args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (d pgFacts) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	return d.q().QueryRow(ctx, dollars(q), args...)
}

func (d pgFacts) tx(ctx context.Context, fn func(factDB) error) error {
	if d.tx0 != nil {
		return fn(d)
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return fn(pgFacts{pool: d.pool, tx0: tx}) })
}

// dollars rewrites ? placeholders as Postgres's $1, $2, … (the facts statements hold no other
// question marks).
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
