// Package storetest looks inside a store's database the way an auditor would: every row of
// every table, read as text, searched for the strings that must not be there (a forgotten
// member's id, the words of their messages). It opens its own connection and reads the
// tables, not the Store interface, so nothing the interface hides escapes it.
//
// Only tests import this package.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Hit is one needle found in one table.
type Hit struct {
	Table, Needle, Row string
}

// Scan reads every row of every table of the database (driver "sqlite": dsn is the file;
// "postgres": a connection string) and returns where each needle occurs (case-insensitive).
func Scan(ctx context.Context, driver, dsn string, needles []string) ([]Hit, error) {
	rows, err := readAll(ctx, driver, dsn)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	tables := make([]string, 0, len(rows))
	for t := range rows {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		for _, r := range rows[t] {
			low := strings.ToLower(r)
			for _, n := range needles {
				if n != "" && strings.Contains(low, strings.ToLower(n)) {
					hits = append(hits, Hit{Table: t, Needle: n, Row: r})
				}
			}
		}
	}
	return hits, nil
}

// Tables lists the tables Scan reads, for a test to check it read the ones it expects.
func Tables(ctx context.Context, driver, dsn string) ([]string, error) {
	rows, err := readAll(ctx, driver, dsn)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for t := range rows {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// readAll reads every row of every table, by table.
func readAll(ctx context.Context, driver, dsn string) (map[string][]string, error) {
	switch driver {
	case "", "sqlite":
		return sqliteRows(ctx, dsn)
	case "postgres":
		return pgRows(ctx, dsn)
	}
	return nil, fmt.Errorf("storetest: unknown driver %q", driver)
}

// sqliteRows reads every table of a SQLite file (the full-text index's shadow tables
// included), each row rendered as its values joined by " | ".
func sqliteRows(ctx context.Context, path string) (map[string][]string, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("storetest: open %s: %w", path, err)
	}
	defer db.Close()
	names, err := column(ctx, db, `SELECT name FROM sqlite_master WHERE type='table'`)
	if err != nil {
		return nil, fmt.Errorf("storetest: tables of %s: %w", path, err)
	}
	out := map[string][]string{}
	for _, t := range names {
		rs, err := db.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		if err != nil {
			return nil, fmt.Errorf("storetest: read %s: %w", t, err)
		}
		cols, _ := rs.Columns()
		out[t] = []string{}
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				rs.Close()
				return nil, fmt.Errorf("storetest: read %s: %w", t, err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					parts[i] = string(b)
				} else {
					parts[i] = fmt.Sprint(v)
				}
			}
			out[t] = append(out[t], strings.Join(parts, " | "))
		}
		rs.Close()
	}
	return out, nil
}

func column(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rs.Err()
}

// pgRows reads every table of the public schema, each row rendered as Postgres's text form of
// the row.
func pgRows(ctx context.Context, dsn string) (map[string][]string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("storetest: connect: %w", err)
	}
	defer conn.Close(ctx)
	rs, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema='public' AND table_type='BASE TABLE'`)
	if err != nil {
		return nil, fmt.Errorf("storetest: tables: %w", err)
	}
	names, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("storetest: tables: %w", err)
	}
	out := map[string][]string{}
	for _, t := range names {
		q := `SELECT t::text FROM ` + pgx.Identifier{t}.Sanitize() + ` AS t`
		rs, err := conn.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("storetest: read %s: %w", t, err)
		}
		rows, err := pgx.CollectRows(rs, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("storetest: read %s: %w", t, err)
		}
		out[t] = append([]string{}, rows...)
	}
	return out, nil
}
