package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Removed servers (docs/store.md, "Removed servers"): when a server removes banter, a record
// of it (guilds_left) starts a grace period; re-added within it, the server keeps everything
// (GuildReturned clears the record); after it, PurgeLeftGuilds deletes every row banter stored
// about the server. The record outlives the first purge by one more: a write that was in
// flight when the server went (a memory extraction finishing, a reply being stored) is
// deleted by the next purge, and a purge that finds nothing more drops the record.
//
// On Postgres, several processes may run the purge at once: each guild is purged in one
// transaction that first takes the guild's forget lock exclusively (as ForgetMember does:
// writes in flight finish first, forgets.go), then locks the guild's record (SELECT … FOR
// UPDATE). A second process's purge of the same guild waits for the first transaction, then
// finds nothing left to delete; a purge that a return (GuildReturned) beat finds no record.

// GuildsLeft keeps the record of the servers banter was removed from and purges their data.
type GuildsLeft interface {
	// GuildLeft records that banter was removed from the guild at `at` (an earlier record is
	// kept) and reports whether the record is new.
	GuildLeft(ctx context.Context, guildID string, at time.Time) (bool, error)
	// GuildReturned clears the guild's record (banter is in it again) and reports whether
	// there was one.
	GuildReturned(ctx context.Context, guildID string) (bool, error)
	// LeftGuilds returns the recorded guilds with when banter left each.
	LeftGuilds(ctx context.Context) (map[string]time.Time, error)
	// GuildsWithData returns the guilds of which messages, facts, turns, memory cursors,
	// memory pauses, a kept voice session or an open voice turn are stored, in id order. Its
	// cost grows with the number of guilds, not of rows (a loose index scan).
	GuildsWithData(ctx context.Context) ([]string, error)
	// PurgeLeftGuilds deletes every stored row of each guild left at or before cutoff that
	// owns reports true for (nil: every guild), each guild in one transaction, and reports
	// the guilds it purged for the first time or found rows of again. The record stays until
	// a purge after the first finds nothing (then it goes, unreported). A guild that returned
	// is left out. The guild's spend is kept in the day totals as RemovedGuildsSpend.
	PurgeLeftGuilds(ctx context.Context, cutoff time.Time, owns func(guildID string) bool) ([]GuildPurge, error)
}

// RemovedGuildsSpend is the guild id the spend ledger files the spend of purged guilds under:
// a day's total over every guild (budget.globalDailyUSD) stays what was spent.
const RemovedGuildsSpend = "removed"

// GuildPurge counts the rows PurgeLeftGuilds deleted of one guild, by table.
type GuildPurge struct {
	GuildID string
	LeftAt  time.Time
	// Rows are the deleted rows by table (messages, facts, turns, …; spend: rows folded into
	// RemovedGuildsSpend).
	Rows map[string]int
}

// Total is the number of rows deleted.
func (p GuildPurge) Total() int {
	n := 0
	for _, v := range p.Rows {
		n += v
	}
	return n
}

// guildsLeftMigration is the record of the guilds banter was removed from (SQLite's 15th
// migration, Postgres's 18th).
const guildsLeftMigration = `CREATE TABLE guilds_left (
			guild_id  TEXT PRIMARY KEY,
			left_at   BIGINT NOT NULL,
			purged_at BIGINT NOT NULL DEFAULT 0
		);`

var (
	_ GuildsLeft = (*SQLite)(nil)
	_ GuildsLeft = (*Postgres)(nil)
)

// The GuildsLeft methods, written once over either driver (factsSQL).

// GuildLeft implements GuildsLeft.
func (m factsSQL) GuildLeft(ctx context.Context, guildID string, at time.Time) (bool, error) {
	if guildID == "" {
		return false, errors.New("store: guild left: no guild")
	}
	n, err := m.db.exec(ctx, `INSERT INTO guilds_left (guild_id, left_at) VALUES (?, ?) ON CONFLICT (guild_id) DO NOTHING`,
		guildID, ms(at))
	if err != nil {
		return false, fmt.Errorf("store: guild %s left: %w", guildID, err)
	}
	return n > 0, nil
}

// GuildReturned implements GuildsLeft.
func (m factsSQL) GuildReturned(ctx context.Context, guildID string) (bool, error) {
	n, err := m.db.exec(ctx, `DELETE FROM guilds_left WHERE guild_id = ?`, guildID)
	if err != nil {
		return false, fmt.Errorf("store: guild %s returned: %w", guildID, err)
	}
	return n > 0, nil
}

// LeftGuilds implements GuildsLeft.
func (m factsSQL) LeftGuilds(ctx context.Context) (map[string]time.Time, error) {
	rows, err := m.db.query(ctx, `SELECT guild_id, left_at FROM guilds_left`)
	if err != nil {
		return nil, fmt.Errorf("store: left guilds: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var g string
		var at int64
		if err := rows.Scan(&g, &at); err != nil {
			return nil, fmt.Errorf("store: left guilds: %w", err)
		}
		out[g] = fromMS(at)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: left guilds: %w", err)
	}
	return out, nil
}

// GuildsWithData implements GuildsLeft. It reads each table's distinct guild ids by a loose
// index scan (guildsWithDataSQL), so its cost grows with the number of guilds, not of rows.
func (m factsSQL) GuildsWithData(ctx context.Context) ([]string, error) {
	rows, err := m.db.query(ctx, guildsWithDataSQL())
	if err != nil {
		return nil, fmt.Errorf("store: guilds with data: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, fmt.Errorf("store: guilds with data: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: guilds with data: %w", err)
	}
	return out, nil
}

// guildsWithDataSQL lists the guilds with data, in order. The tables that grow with the
// conversation (messages, facts, turns) and those with a row per channel or member (memory
// cursors, pauses) are read by a loose index scan on an index led by guild_id: one index
// descent to the next larger guild id at a time, a few page reads per guild and table whatever
// the table's size (reading every row or index entry takes seconds at millions of messages).
// voice_sessions and voice_open_turns hold one row per guild at most and are read whole.
// Indexes: messages_guild_author or messages_guild_created, facts_guild_subject, turns_guild
// (guildScanMigration), the memory_pauses primary key, memory_cursors_guild.
// BenchmarkGuildsWithData compares it with the whole-table UNION it replaced.
func guildsWithDataSQL() string {
	return `WITH RECURSIVE ` + looseScan("m", "messages") + `, ` + looseScan("f", "facts") + `, ` +
		looseScan("t", "turns") + `, ` + looseScan("p", "memory_pauses") + `, ` + looseScan("c", "memory_cursors") + `
		SELECT g FROM m WHERE g IS NOT NULL
		UNION SELECT g FROM f WHERE g IS NOT NULL
		UNION SELECT g FROM t WHERE g IS NOT NULL
		UNION SELECT g FROM p WHERE g IS NOT NULL
		UNION SELECT g FROM c WHERE g IS NOT NULL
		UNION SELECT guild_id FROM voice_sessions
		UNION SELECT guild_id FROM voice_open_turns
		ORDER BY 1`
}

// looseScan is a recursive common table expression, named name, of table's distinct non-empty
// guild ids, each found from the one before by one index descent; its last row is NULL.
func looseScan(name, table string) string {
	next := func(after string) string {
		return `(SELECT guild_id FROM ` + table + ` WHERE guild_id > ` + after + ` ORDER BY guild_id LIMIT 1)`
	}
	return name + `(g) AS (SELECT ` + next("''") + ` UNION ALL SELECT ` + next(name+".g") + ` FROM ` + name + ` WHERE ` + name + `.g IS NOT NULL)`
}

// guildScanMigration indexes turns by guild, for GuildsWithData's loose index scan (SQLite's
// 17th migration, Postgres's 20th).
const guildScanMigration = `CREATE INDEX turns_guild ON turns (guild_id);`

// guildPurgeSteps delete a guild's rows, in order (each statement takes the guild id once per
// ?). The prompt ledger has no guild column: its rows go by the guild's channels, read before
// the messages, turns and cursors that name them go. Facts' sources and embeddings would go
// with their facts and messages (ON DELETE CASCADE), but are deleted first to be counted.
var guildPurgeSteps = []struct{ table, sql string }{
	{"prompt_ledger", `DELETE FROM prompt_ledger WHERE channel_id IN (SELECT channel_id FROM messages WHERE guild_id = ?
		UNION SELECT channel_id FROM turns WHERE guild_id = ? UNION SELECT channel_id FROM memory_cursors WHERE guild_id = ?)`},
	{"fact_sources", `DELETE FROM fact_sources WHERE fact_id IN (SELECT id FROM facts WHERE guild_id = ?)`},
	{"fact_embeddings", `DELETE FROM fact_embeddings WHERE guild_id = ?`},
	{"facts", `DELETE FROM facts WHERE guild_id = ?`},
	{"message_embeddings", `DELETE FROM message_embeddings WHERE guild_id = ?`},
	{"messages", `DELETE FROM messages WHERE guild_id = ?`},
	{"turns", `DELETE FROM turns WHERE guild_id = ?`},
	{"memory_cursors", `DELETE FROM memory_cursors WHERE guild_id = ?`},
	{"memory_pauses", `DELETE FROM memory_pauses WHERE guild_id = ?`},
	{"voice_sessions", `DELETE FROM voice_sessions WHERE guild_id = ?`},
	{"voice_open_turns", `DELETE FROM voice_open_turns WHERE guild_id = ?`},
	{"embedding_backfill_leases", `DELETE FROM embedding_backfill_leases WHERE guild_id = ?`},
	{"cap_notices", `DELETE FROM cap_notices WHERE guild_id = ?`},
	// The day totals keep the spend: it moves to RemovedGuildsSpend, then goes.
	{"spend", `INSERT INTO spend (day, guild_id, slot, usd) SELECT day, '` + RemovedGuildsSpend + `', slot, usd FROM spend WHERE guild_id = ?
		ON CONFLICT (day, guild_id, slot) DO UPDATE SET usd = spend.usd + excluded.usd`},
	{"", `DELETE FROM spend WHERE guild_id = ?`},
}

// PurgeLeftGuilds implements GuildsLeft.
func (m factsSQL) PurgeLeftGuilds(ctx context.Context, cutoff time.Time, owns func(string) bool) ([]GuildPurge, error) {
	left, err := m.LeftGuilds(ctx)
	if err != nil {
		return nil, err
	}
	var out []GuildPurge
	for g, at := range left {
		if at.After(cutoff) || (owns != nil && !owns(g)) {
			continue
		}
		p, ok, err := m.purgeGuild(ctx, g, cutoff)
		if err != nil {
			return out, err
		}
		if ok {
			p.LeftAt = at
			out = append(out, p)
		}
	}
	return out, nil
}

// purgeGuild deletes the guild's rows in one transaction if its record is still there and
// older than cutoff; it reports whether the purge is worth reporting (the first, or one that
// found rows again). A later purge that finds nothing drops the record.
func (m factsSQL) purgeGuild(ctx context.Context, guildID string, cutoff time.Time) (GuildPurge, bool, error) {
	p := GuildPurge{GuildID: guildID, Rows: map[string]int{}}
	report := false
	err := m.db.tx(ctx, func(db factDB) error {
		if err := m.lockGuild(ctx, db, guildID, true); err != nil {
			return err
		}
		q := `SELECT purged_at FROM guilds_left WHERE guild_id = ? AND left_at <= ?`
		if m.pg {
			q += ` FOR UPDATE`
		}
		var purgedAt int64
		if err := db.queryRow(ctx, q, guildID, ms(cutoff)).Scan(&purgedAt); err != nil {
			if isNoRows(err) {
				return nil // returned, or purged for good by another process
			}
			return err
		}
		for _, step := range guildPurgeSteps {
			args := make([]any, countPlaceholders(step.sql))
			for i := range args {
				args[i] = guildID
			}
			n, err := db.exec(ctx, step.sql, args...)
			if err != nil {
				return fmt.Errorf("%s: %w", step.table, err)
			}
			if step.table != "" && n > 0 {
				p.Rows[step.table] += int(n)
			}
		}
		report = purgedAt == 0 || p.Total() > 0
		var err error
		if report {
			_, err = db.exec(ctx, `UPDATE guilds_left SET purged_at = ? WHERE guild_id = ?`, ms(time.Now()), guildID)
		} else {
			_, err = db.exec(ctx, `DELETE FROM guilds_left WHERE guild_id = ?`, guildID)
		}
		return err
	})
	if err != nil {
		return GuildPurge{}, false, fmt.Errorf("store: purge removed guild %s: %w", guildID, err)
	}
	return p, report, nil
}

// countPlaceholders counts the ? of a statement.
func countPlaceholders(q string) int {
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
		}
	}
	return n
}

// The GuildsLeft methods of the instrumented store.

func (i *instrumented) GuildLeft(ctx context.Context, guildID string, at time.Time) (bool, error) {
	ok, err := i.s.GuildLeft(ctx, guildID, at)
	return ok, i.count("guild_left", err)
}

func (i *instrumented) GuildReturned(ctx context.Context, guildID string) (bool, error) {
	ok, err := i.s.GuildReturned(ctx, guildID)
	return ok, i.count("guild_returned", err)
}

func (i *instrumented) LeftGuilds(ctx context.Context) (map[string]time.Time, error) {
	m, err := i.s.LeftGuilds(ctx)
	return m, i.count("left_guilds", err)
}

func (i *instrumented) GuildsWithData(ctx context.Context) ([]string, error) {
	gs, err := i.s.GuildsWithData(ctx)
	return gs, i.count("guilds_with_data", err)
}

func (i *instrumented) PurgeLeftGuilds(ctx context.Context, cutoff time.Time, owns func(string) bool) ([]GuildPurge, error) {
	ps, err := i.s.PurgeLeftGuilds(ctx, cutoff, owns)
	return ps, i.count("purge_left_guilds", err)
}
