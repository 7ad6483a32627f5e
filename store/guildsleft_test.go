package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGuildsLeft: a guild banter left is recorded once (the first time is kept), cleared when
// it returns, and purged only once its record is older than the cutoff and owned: then no
// table with a guild_id column (read from the schema, so a table added later is covered) holds
// a row of it, nor the prompt ledger one of its channels, while another guild's rows and the
// day's spend over every guild stay as they were. On both drivers.
func TestGuildsLeft(t *testing.T) { forEachDriverAt(t, testGuildsLeft) }

func testGuildsLeft(t *testing.T, s Store, driver, _ string) {
	ctx := context.Background()
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	const gone, stays = "1000000000000000001", "1000000000000000002"
	fillGuild(t, s, gone, "c1", "1")
	fillGuild(t, s, stays, "c2", "2")
	ledger, _ := NewSpendLedger(s)
	_, allBefore, err := ledger.SpendTotals(ctx, "2026-11-28", gone)
	if err != nil {
		t.Fatal(err)
	}
	if gs, err := s.GuildsWithData(ctx); err != nil || !slices.Equal(sorted(gs), []string{gone, stays}) {
		t.Fatalf("guilds with data = %v, %v; want both", gs, err)
	}
	stayRows := guildRows(t, s, driver, stays)

	left := func(g string, at time.Time, want bool) {
		t.Helper()
		if ok, err := s.GuildLeft(ctx, g, at); err != nil || ok != want {
			t.Fatalf("GuildLeft(%s) = %v, %v; want %v", g, ok, err, want)
		}
	}
	left(gone, base, true)
	left(gone, base.Add(time.Hour), false) // the first leave is kept
	if l, err := s.LeftGuilds(ctx); err != nil || !maps.Equal(l, map[string]time.Time{gone: base}) {
		t.Fatalf("left guilds = %v, %v", l, err)
	}
	if ok, err := s.GuildReturned(ctx, gone); err != nil || !ok {
		t.Fatalf("GuildReturned = %v, %v; want true", ok, err)
	}
	if ok, err := s.GuildReturned(ctx, gone); err != nil || ok {
		t.Fatalf("GuildReturned again = %v, %v; want false", ok, err)
	}
	// Returned: even a cutoff long after the leave purges nothing.
	if ps, err := s.PurgeLeftGuilds(ctx, base.AddDate(1, 0, 0), nil); err != nil || len(ps) != 0 {
		t.Fatalf("purge after a return = %v, %v; want nothing", ps, err)
	}
	left(gone, base, true)
	// Within the grace period, or not this process's guild: nothing goes.
	if ps, err := s.PurgeLeftGuilds(ctx, base.Add(-time.Millisecond), nil); err != nil || len(ps) != 0 {
		t.Fatalf("purge before the cutoff = %v, %v; want nothing", ps, err)
	}
	if ps, err := s.PurgeLeftGuilds(ctx, base, func(string) bool { return false }); err != nil || len(ps) != 0 {
		t.Fatalf("purge of a guild not owned = %v, %v; want nothing", ps, err)
	}
	if rows := guildRows(t, s, driver, gone); len(rows) < 10 {
		t.Fatalf("the left guild's rows went before its purge: %v", rows)
	}

	ps, err := s.PurgeLeftGuilds(ctx, base, func(g string) bool { return g == gone })
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].GuildID != gone || !ps[0].LeftAt.Equal(base) {
		t.Fatalf("purges = %+v; want %s", ps, gone)
	}
	for _, table := range []string{"messages", "facts", "turns", "prompt_ledger", "memory_cursors", "memory_pauses",
		"voice_sessions", "message_embeddings", "fact_embeddings", "embedding_backfill_leases", "cap_notices", "spend"} {
		if ps[0].Rows[table] == 0 {
			t.Errorf("the purge reports no %s rows: %v", table, ps[0].Rows)
		}
	}
	if rows := guildRows(t, s, driver, gone); len(rows) != 1 || rows["guilds_left"] != 1 {
		t.Errorf("rows of the purged guild left: %v (want only its record, until the next purge)", rows)
	}
	if got := guildRows(t, s, driver, stays); !maps.Equal(got, stayRows) {
		t.Errorf("the other guild's rows changed: %v, want %v", got, stayRows)
	}
	if n := ledgerRows(t, s, "c1"); n != 0 {
		t.Errorf("%d prompt-ledger rows of the purged guild's channel left", n)
	}
	if n := ledgerRows(t, s, "c2"); n == 0 {
		t.Error("the other guild's prompt-ledger rows went")
	}
	if gs, err := s.GuildsWithData(ctx); err != nil || !slices.Equal(gs, []string{stays}) {
		t.Errorf("guilds with data after the purge = %v, %v; want %s", gs, err, stays)
	}
	// A write that was in flight when the guild went is deleted by the next purge; a purge
	// that finds nothing more drops the record.
	if err := s.SaveMessage(ctx, Message{ID: "late", ChannelID: "c1", GuildID: gone, AuthorID: "alice", Content: "late", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	if ps, err := s.PurgeLeftGuilds(ctx, base, nil); err != nil || len(ps) != 1 || ps[0].Rows["messages"] != 1 {
		t.Fatalf("purge after a late write = %+v, %v; want its message", ps, err)
	}
	if ps, err := s.PurgeLeftGuilds(ctx, base, nil); err != nil || len(ps) != 0 {
		t.Fatalf("purge with nothing left = %+v, %v; want nothing reported", ps, err)
	}
	if l, err := s.LeftGuilds(ctx); err != nil || len(l) != 0 {
		t.Errorf("left guilds after the purges = %v, %v; want none", l, err)
	}
	if rows := guildRows(t, s, driver, gone); len(rows) > 0 {
		t.Errorf("rows of the purged guild left: %v", rows)
	}
	if _, all, err := ledger.SpendTotals(ctx, "2026-11-28", gone); err != nil || all != allBefore {
		t.Errorf("the day's spend over every guild = %v, %v; want %v (kept as %q)", all, err, allBefore, RemovedGuildsSpend)
	}
	if ms, err := s.SearchMessages(ctx, SearchQuery{GuildID: gone, Text: "sailing"}); err != nil || len(ms) != 0 {
		t.Errorf("search in the purged guild = %v, %v", ms, err)
	}
	if sq, ok := s.(*SQLite); ok {
		var n int
		if err := sq.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'sailing1000000000000000001'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("the full-text index still finds the purged guild's words: %d, %v", n, err)
		}
	}
}

// TestGuildPurgeConcurrent: two purges at once (two processes) purge a guild once: one reports
// it, the other finds nothing to delete.
func TestGuildPurgeConcurrent(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		const g = "1000000000000000003"
		fillGuild(t, s, g, "c3", "3")
		at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		if _, err := s.GuildLeft(ctx, g, at); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		results := make([][]GuildPurge, 2)
		for i := range results {
			wg.Go(func() {
				ps, err := s.PurgeLeftGuilds(ctx, at, nil)
				if err != nil {
					t.Error(err)
				}
				results[i] = ps
			})
		}
		wg.Wait()
		ps := slices.Concat(results...)
		if len(ps) != 1 || ps[0].Rows["messages"] != 2 {
			t.Fatalf("purges = %+v; want one, with the guild's 2 messages", ps)
		}
	})
}

// fillGuild stores a row of guild g in every table that holds guild data (channel ch; ids
// start with prefix).
func fillGuild(t *testing.T, s Store, g, ch, prefix string) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	msg := Message{ID: prefix + "01", ChannelID: ch, GuildID: g, AuthorID: "alice", AuthorName: "alice",
		Content: "I took up sailing sailing" + g, CreatedAt: at}
	must(s.SaveMessage(ctx, msg))
	must(s.SaveMessage(ctx, Message{ID: prefix + "02", ChannelID: ch, GuildID: g, AuthorID: "bot", IsBot: true, IsSelf: true,
		Content: "nice", CreatedAt: at.Add(time.Second), ReplyToID: msg.ID}))
	f, err := s.AddFact(ctx, Fact{GuildID: g, SubjectID: "alice", SubjectName: "alice", Statement: "alice sails",
		SourceIDs: []string{msg.ID}, CreatedAt: at})
	must(err)
	vec := Embedding{Model: "m", Vector: []float32{1, 0}}
	must(s.SaveFactEmbedding(ctx, f.ID, vec))
	must(s.SaveMessageEmbeddings(ctx, []MessageEmbedding{{MessageID: msg.ID, Content: msg.Content, Embedding: vec}}))
	must(s.OpenTurn(ctx, Turn{MessageID: msg.ID, ChannelID: ch, GuildID: g, AdmittedAt: at}))
	must(s.RecordPrompt(ctx, Prompt{GuildID: g, ChannelID: ch, UserID: "alice", Kind: PromptExplicit, At: time.Now()}))
	cursors, _ := NewMemoryCursors(s)
	must(cursors.StartMemoryCursor(ctx, g, ch, at))
	must(s.SetMemoryPaused(ctx, g, "bob", true, at))
	must(s.KeepVoiceSession(ctx, VoiceSession{GuildID: g, ChannelID: "v" + ch, RequestedBy: "alice", JoinedAt: at}))
	ok, err := s.ClaimBackfill(ctx, g, "p1", at.Add(time.Hour), at)
	must(err)
	if !ok {
		t.Fatal("backfill lease not claimed")
	}
	ledger, ok := NewSpendLedger(s)
	if !ok {
		t.Fatal("no spend ledger")
	}
	must(ledger.AddSpend(ctx, "2026-11-28", g, "reply", 0.25))
	_, err = ledger.ClaimCapNotice(ctx, "2026-11-28", g)
	must(err)
}

// guildRows counts guild g's rows in every table with a guild_id column (the schema's list).
func guildRows(t *testing.T, s Store, driver, g string) map[string]int {
	t.Helper()
	ctx := context.Background()
	db := storeDB(s)
	q := `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'guild_id'`
	if driver == "postgres" {
		q = `SELECT table_name FROM information_schema.columns WHERE column_name = 'guild_id' AND table_schema = current_schema()`
	}
	rows, err := db.query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 12 {
		t.Fatalf("only %d tables with a guild_id column: %v", len(tables), tables)
	}
	out := map[string]int{}
	for _, table := range tables {
		var n int
		if err := db.queryRow(ctx, `SELECT COUNT(*) FROM `+table+` WHERE guild_id = ?`, g).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out[table] = n
		}
	}
	return out
}

// ledgerRows counts the prompt ledger's rows of channel ch.
func ledgerRows(t *testing.T, s Store, ch string) int {
	t.Helper()
	var n int
	if err := storeDB(s).queryRow(context.Background(), `SELECT COUNT(*) FROM prompt_ledger WHERE channel_id = ?`, ch).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// storeDB is the driver's database, as the facts code reaches it.
func storeDB(s Store) factDB {
	switch s := s.(type) {
	case *SQLite:
		return s.factsSQL.db
	case *Postgres:
		return s.factsSQL.db
	}
	panic("unknown store")
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestGuildsWithDataLooseScan: GuildsWithData's loose index scan finds a guild whose only data
// is in any one of the tables it reads (a guild id sorting between two others' included), in
// order, skips the rows without a guild (direct messages), and answers exactly what the
// SELECT DISTINCT it replaced answers. On SQLite its plan reads every large table through an
// index, never whole. On both drivers.
func TestGuildsWithDataLooseScan(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		g := func(n int) string { return fmt.Sprintf("10000000000000000%02d", n) }
		// Two messages of guild 1 and one of guild 9, so a scan that stopped after a guild's
		// first entry, or never left it, shows.
		for i, guild := range []string{g(1), g(1), g(9), ""} {
			must(s.SaveMessage(ctx, Message{ID: fmt.Sprint("m", i), ChannelID: "c" + guild, GuildID: guild, AuthorID: "alice",
				Content: "hi", CreatedAt: at}))
		}
		_, err := s.AddFact(ctx, Fact{GuildID: g(2), SubjectID: "alice", Statement: "alice sails", CreatedAt: at})
		must(err)
		must(s.OpenTurn(ctx, Turn{MessageID: "t1", ChannelID: "c3", GuildID: g(3), AdmittedAt: at}))
		must(s.OpenTurn(ctx, Turn{MessageID: "t2", ChannelID: "dm", AdmittedAt: at}))
		cursors, _ := NewMemoryCursors(s)
		must(cursors.StartMemoryCursor(ctx, g(4), "c4", at))
		must(s.SetMemoryPaused(ctx, g(5), "bob", true, at))
		must(s.KeepVoiceSession(ctx, VoiceSession{GuildID: g(6), ChannelID: "v6", RequestedBy: "alice", JoinedAt: at}))
		must(s.(OpenVoiceTurns).KeepOpenVoiceTurn(ctx, OpenVoiceTurn{GuildID: g(7), ChannelID: "v7", TurnID: "1", SpeakerID: "alice",
			Transcript: "hey", HeardAt: at}))
		want := []string{g(1), g(2), g(3), g(4), g(5), g(6), g(7), g(9)}
		gs, err := s.GuildsWithData(ctx)
		if err != nil || !slices.Equal(gs, want) {
			t.Errorf("guilds with data = %v, %v; want %v", gs, err, want)
		}
		var distinct []string
		rows, err := storeDB(s).query(ctx, distinctGuildsSQL)
		must(err)
		for rows.Next() {
			var g string
			must(rows.Scan(&g))
			distinct = append(distinct, g)
		}
		rows.Close()
		if !slices.Equal(gs, distinct) {
			t.Errorf("loose scan %v, SELECT DISTINCT %v", gs, distinct)
		}
		if _, ok := s.(*SQLite); !ok {
			return // Postgres plans by its statistics: BenchmarkGuildsWithData shows the index scans
		}
		rows, err = storeDB(s).query(ctx, `EXPLAIN QUERY PLAN `+guildsWithDataSQL())
		must(err)
		defer rows.Close()
		searched := map[string]bool{}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			must(rows.Scan(&id, &parent, &unused, &detail))
			for _, table := range []string{"messages", "facts", "turns", "memory_pauses", "memory_cursors"} {
				switch {
				case strings.HasPrefix(detail, "SCAN "+table+" "), detail == "SCAN "+table:
					t.Errorf("the plan reads %s whole: %s", table, detail)
				case strings.HasPrefix(detail, "SEARCH "+table+" USING COVERING INDEX"):
					searched[table] = true
				}
			}
		}
		if len(searched) != 5 {
			t.Errorf("tables searched by a covering index: %v, want all five", searched)
		}
	})
}
