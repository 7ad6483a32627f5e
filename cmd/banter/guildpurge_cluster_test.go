package main

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
)

// TestRemovedGuildPurgedByItsShard: two `banter run` processes, a (shard 0) and b (shard 1 of
// 2), on one PostgreSQL with store.forgetRemovedGuildAfterDays 0, and a server with a
// conversation stored on shard 0 and two on shard 1. The bot is removed from one of shard 1's:
// b records the removal and purges the server (none of its rows left in any table with a
// guild_id column, nor the prompt ledger's rows of its channel; its record stays until b's
// next purge). Then a restarts: its READY lists shard 0's server only, and a neither records
// shard 1's servers as removed (the one still there keeps everything) nor purges the removed
// one (its record stays: b's to drop). Shard 0's and shard 1's other server's rows are exactly
// what they were before the removal.
func TestRemovedGuildPurgedByItsShard(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx, dsn, bin := clusterTest(t)
	dsim := simtest.Serve(t, discordsim.WithShards(2, 2))
	osim := openaitest.Serve(t)
	alice := dsim.CreateUser("alice")
	// Owned by alice: the bot, a plain member, can be removed (an owner cannot).
	var kept0, kept1, gone discordsim.GuildID
	channels := map[discordsim.GuildID]discordsim.ChannelID{}
	for i := 0; kept0 == "" || kept1 == "" || gone == ""; i++ {
		g := dsim.CreateGuildOwnedBy("guild"+strconv.Itoa(i), alice)
		switch shard := shardOfGuild(g, 2); {
		case shard == 0 && kept0 == "":
			kept0 = g
		case shard == 1 && kept1 == "":
			kept1 = g
		case shard == 1 && gone == "":
			gone = g
		default:
			continue
		}
		channels[g] = dsim.CreateTextChannel(g, "general")
	}
	procs := []*banterProcess{{name: "a", shardIDs: "0"}, {name: "b", shardIDs: "1"}}
	a, b := procs[0], procs[1]
	cfg := strings.Replace(clusterConfig(dsim, 2, dsn, "", ""), "store:\n", "store:\n  forgetRemovedGuildAfterDays: 0\n", 1)
	c := newCluster(t, bin, cfg, dsim, osim.BaseURL(), procs)
	for _, p := range procs {
		c.start(p)
	}
	if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, 2); err != nil {
		t.Fatalf("not every shard identified: %v\n%s", err, c.logs())
	}
	// waitLine waits for a line msg with the attributes want in p's log since its last start.
	waitLine := func(p *banterProcess, msg string, want map[string]string) logLine {
		t.Helper()
		g, cancel := guard(ctx)
		defer cancel()
		var found logLine
		ok := p.log().wait(g, func() bool {
			for _, line := range p.log().since(0) {
				match := line.msg() == msg
				for k, v := range want {
					match = match && line.str(k) == v
				}
				if match {
					found = line
					return true
				}
			}
			return false
		})
		if !ok {
			t.Fatalf("process %s logged no %s %v\n%s", p.name, msg, want, c.logs())
		}
		return found
	}

	// A conversation in each server: alice's message and the bot's reply, stored (the reply
	// before sent_reply is logged) with their turn, prompt-ledger row and spend.
	said := map[discordsim.GuildID]discordsim.MessageID{}
	for _, g := range []discordsim.GuildID{kept0, kept1, gone} {
		m, err := dsim.Post(ctx, alice, channels[g], "hey banter, I took up sailing this summer, any tips?")
		if err != nil {
			t.Fatal(err)
		}
		said[g] = m.ID
		waitLine(procs[shardOfGuild(g, 2)], "sent_reply", map[string]string{"target_message_id": string(m.ID)})
	}
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	before := map[discordsim.GuildID]map[string]int{}
	for _, g := range []discordsim.GuildID{kept0, kept1, gone} {
		before[g] = pgGuildRows(t, ctx, db, g, channels[g])
		if before[g]["messages"] < 2 || before[g]["turns"] == 0 || before[g]["prompt_ledger"] == 0 {
			t.Fatalf("guild %s stored %v, want its messages, turn and prompt-ledger row", g, before[g])
		}
	}

	// Removed from a server of shard 1: b records it and purges it at once.
	if err := dsim.RemoveMember(gone, dsim.BotID()); err != nil {
		t.Fatal(err)
	}
	waitLine(b, "guild_removed", map[string]string{"guild_id": string(gone), "via": "guild_delete"})
	waitLine(b, "guild_data_purged", map[string]string{"guild_id": string(gone)})

	// a starts again: its READY lists only shard 0's server. guilds_checked comes after its
	// start's purge and its READY's check (one at a time, in that order).
	a.cmd.Process.Signal(syscall.SIGTERM)
	<-a.done
	c.start(a)
	checked := waitLine(a, "guilds_checked", map[string]string{})
	if n, _ := checked["with_data"].(float64); n != 2 || checked["shard"] != float64(0) {
		t.Errorf("a's READY check = %v; want shard 0, 2 servers with data (%s of shard 0, %s of shard 1)", checked, kept0, kept1)
	}
	c.stop(ctx)

	for _, p := range procs {
		for _, line := range p.lines() {
			switch g := line.str("guild_id"); line.msg() {
			case "guild_removed", "guild_data_purged":
				if p != b || g != string(gone) {
					t.Errorf("process %s: %s of %s; want only b's of %s", p.name, line.msg(), g, gone)
				}
			case "guild_watch_failed", "guild_purge_failed":
				t.Errorf("process %s: %v", p.name, line)
			}
		}
	}
	for _, msg := range []string{"guild_removed", "guild_data_purged"} {
		if n := b.log().count(0, msg); n != 1 {
			t.Errorf("b logged %s %d times, want once", msg, n)
		}
	}
	if got := pgGuildRows(t, ctx, db, gone, channels[gone]); !maps.Equal(got, map[string]int{"guilds_left": 1}) {
		t.Errorf("rows of the purged server left: %v (want only its record until b's next purge; before: %v)", got, before[gone])
	}
	for _, g := range []discordsim.GuildID{kept0, kept1} {
		if got := pgGuildRows(t, ctx, db, g, channels[g]); !maps.Equal(got, before[g]) {
			t.Errorf("the rows of server %s (shard %d) changed: %v, want %v", g, shardOfGuild(g, 2), got, before[g])
		}
	}
	st, err := store.OpenPostgres(ctx, dsn, store.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if left, err := st.LeftGuilds(ctx); err != nil || !slices.Equal(slices.Collect(maps.Keys(left)), []string{string(gone)}) {
		t.Errorf("recorded as left: %v, %v; want only %s", left, err, gone)
	}
	for _, g := range []discordsim.GuildID{kept0, kept1} {
		if _, err := st.Message(ctx, string(said[g])); err != nil {
			t.Errorf("what alice said in %s: %v", g, err)
		}
	}
}

// pgGuildRows counts guild g's rows in every table with a guild_id column (the schema's list),
// and the prompt ledger's rows of its channel ch (the ledger has no guild column).
func pgGuildRows(t *testing.T, ctx context.Context, db *pgx.Conn, g discordsim.GuildID, ch discordsim.ChannelID) map[string]int {
	t.Helper()
	rows, err := db.Query(ctx, `SELECT table_name FROM information_schema.columns WHERE column_name = 'guild_id' AND table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 12 {
		t.Fatalf("only %d tables with a guild_id column: %v", len(tables), tables)
	}
	out := map[string]int{}
	count := func(table, q string, arg string) {
		var n int
		if err := db.QueryRow(ctx, q, arg).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n > 0 {
			out[table] = n
		}
	}
	for _, table := range tables {
		count(table, `SELECT COUNT(*) FROM `+pgx.Identifier{table}.Sanitize()+` WHERE guild_id = $1`, string(g))
	}
	count("prompt_ledger", `SELECT COUNT(*) FROM prompt_ledger WHERE channel_id = $1`, string(ch))
	return out
}
