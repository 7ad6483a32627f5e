package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// distinctGuildsSQL is the GuildsWithData query before the loose index scan: every distinct
// guild id of each table, read whole. Kept here only, as BenchmarkGuildsWithData's baseline and
// TestGuildsWithDataLooseScan's reference.
const distinctGuildsSQL = `SELECT guild_id FROM messages WHERE guild_id <> ''
		UNION SELECT guild_id FROM facts
		UNION SELECT guild_id FROM turns WHERE guild_id <> ''
		UNION SELECT guild_id FROM memory_cursors
		UNION SELECT guild_id FROM memory_pauses
		UNION SELECT guild_id FROM voice_sessions
		UNION SELECT guild_id FROM voice_open_turns
		ORDER BY 1`

// BenchmarkGuildsWithData measures the removed-guild check's read at READY on a store of
// 200,000 messages, 20,000 turns and 5,000 facts in 50 guilds, on each driver: the loose index
// scan GuildsWithData runs (loose_scan) against the SELECT DISTINCT it replaced (distinct),
// measured in the same run. Postgres is vacuumed and analyzed first, as autovacuum would have.
//
//	go test -run '^$' -bench GuildsWithData ./store
func BenchmarkGuildsWithData(b *testing.B) {
	const messages, turns, facts, guilds = 200_000, 20_000, 5_000, 50
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) {
			ctx := context.Background()
			var s Store
			if driver == "sqlite" {
				sq, err := Open(ctx, filepath.Join(b.TempDir(), "banter.db"))
				if err != nil {
					b.Fatal(err)
				}
				s = sq
			} else {
				if pgCluster == nil {
					b.Skip("no PostgreSQL server binaries")
				}
				dsn, err := pgCluster.NewDatabase(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if s, err = OpenPostgres(ctx, dsn, PostgresOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			defer s.Close()
			fillGuilds(b, s, driver, messages, turns, facts, guilds)
			db := storeDB(s)
			for _, arm := range []struct{ name, sql string }{{"distinct", distinctGuildsSQL}, {"loose_scan", guildsWithDataSQL()}} {
				b.Run(arm.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if n := countRows(b, db, arm.sql); n != guilds {
							b.Fatalf("%d guilds, want %d", n, guilds)
						}
					}
				})
			}
		})
	}
}

// fillGuilds bulk-inserts the benchmark's rows (one statement per table; ids and times made up).
func fillGuilds(b *testing.B, s Store, driver string, messages, turns, facts, guilds int) {
	b.Helper()
	ctx := context.Background()
	db := storeDB(s)
	guild := fmt.Sprintf("CAST(1000000000000000000 + (i %% %d) AS TEXT)", guilds)
	rows := func(n int) string {
		if driver == "sqlite" {
			return fmt.Sprintf("(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < %d) SELECT i FROM n)", n-1)
		}
		return fmt.Sprintf("(SELECT generate_series(0, %d) AS i)", n-1)
	}
	for _, q := range []string{
		`INSERT INTO messages (id, channel_id, guild_id, author_id, content, created_at)
			SELECT CAST(i AS TEXT), 'c' || CAST(i % 500 AS TEXT), ` + guild + `, 'u' || CAST(i % 1000 AS TEXT),
			'filler message number ' || CAST(i AS TEXT) || ' of a long conversation', 1700000000000 + i FROM ` + rows(messages) + ` AS r`,
		`INSERT INTO turns (message_id, channel_id, guild_id, answer_id, admitted_at, outcome)
			SELECT CAST(i * 10 AS TEXT), 'c' || CAST(i % 500 AS TEXT), ` + guild + `, CAST(i * 10 AS TEXT), 1700000000000 + i, 'sent' FROM ` + rows(turns) + ` AS r`,
		`INSERT INTO facts (guild_id, subject_id, statement, created_at)
			SELECT ` + guild + `, 'u' || CAST(i % 1000 AS TEXT), 'likes sailing', 1700000000000 + i FROM ` + rows(facts) + ` AS r`,
	} {
		if _, err := db.exec(ctx, q); err != nil {
			b.Fatalf("fill: %v\n%s", err, q)
		}
	}
	if driver == "postgres" {
		if _, err := db.exec(ctx, `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	if n := countRows(b, db, `SELECT id FROM messages`); n != messages {
		b.Fatalf("%d messages stored, want %d", n, messages)
	}
}

// countRows runs q and counts the rows it returns.
func countRows(b testing.TB, db factDB, q string) int {
	b.Helper()
	rows, err := db.query(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}
