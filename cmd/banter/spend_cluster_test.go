package main

import (
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestBudgetSharedAndKeptAcrossRestart: two `banter run` processes (shards 0 and 1) on one
// PostgreSQL share a $2 global budget. alice talks to the bot in a guild of each process in
// turn; once a reply used the cheaper model (past 40% of the budget) the first process is
// killed (SIGKILL, mid-day) and started again, and the conversation goes on to the cap. Every
// reply request of both processes is checked against the spend of both before it, recomputed
// from the simulator's usage times the prices: a process that did not see the other's spend,
// or the restarted one that lost its own, would call gpt-5-mini where the shared budget says
// gpt-5-nano, or call at all past the cap. At the cap the first process is restarted again:
// each guild's cap notice is said once, not once per process life.
func TestBudgetSharedAndKeptAcrossRestart(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx, dsn, bin := clusterTest(t)
	dsim := simtest.Serve(t, discordsim.WithShards(2, 2))
	osim := openaitest.Serve(t)
	alice := dsim.CreateUser("alice")
	guilds, channels := shardGuilds(dsim, alice, 2, 1)
	procs := []*banterProcess{{name: "a", shardIDs: "0"}, {name: "b", shardIDs: "1"}}
	budget := `prices:
  gpt-5-mini: {input: 1000, cachedInput: 1000, output: 1000}
  gpt-5-nano: {input: 500, cachedInput: 500, output: 500}
budget:
  dailyUsd: 2
  softThreshold: 0.4
  fallbackModels: {llm: gpt-5-nano}
  capNotice: "Budget spent for today."
`
	c := newCluster(t, bin, clusterConfig(dsim, 2, dsn, "", budget), dsim, osim.BaseURL(), procs)
	for _, p := range procs {
		c.start(p)
	}
	identified := 2
	if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, identified); err != nil {
		t.Fatalf("not every shard identified: %v\n%s", err, c.logs())
	}
	procOf := func(g discordsim.GuildID) *banterProcess { return procs[shardOfGuild(g, 2)] }
	lines := func() []logLine {
		var out []logLine
		for _, p := range procs {
			out = append(out, p.lines()...)
		}
		return out
	}
	ask := func(g discordsim.GuildID) (string, bool) {
		t.Helper()
		m, err := dsim.Post(ctx, alice, channels[g], discordsim.MentionUser(dsim.BotID())+" tell me about bread")
		if err != nil {
			t.Fatal(err)
		}
		return awaitAnswer(t, ctx, dsim, procOf(g).log(), lines, m.ID)
	}
	usedNano := func() bool {
		for _, r := range osim.RequestsFor(openaisim.EndpointResponses) {
			if r.Model == "gpt-5-nano" {
				return true
			}
		}
		return false
	}

	// restart kills p (SIGKILL, mid-day) and starts it again.
	restart := func(p *banterProcess) {
		t.Helper()
		c.kill(p)
		c.start(p)
		identified++
		if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, identified); err != nil {
			t.Fatalf("the restarted process did not identify: %v\n%s", err, c.logs())
		}
	}

	const notice = "Budget spent for today."
	restarted, noticed := false, map[discordsim.GuildID]bool{}
	for i := 0; i < 16 && len(noticed) < 2; i++ {
		g := guilds[i%2]
		reply, skipped := ask(g)
		switch {
		case skipped:
			t.Fatalf("guild %s: a direct address skipped before its notice\n%s", g, c.logs())
		case reply == notice:
			noticed[g] = true
		}
		if !restarted && usedNano() {
			restart(procOf(guilds[0]))
			restarted = true
		}
	}
	if !restarted || len(noticed) < 2 {
		t.Fatalf("restarted %v, notices in %d guilds: the conversation never reached the cap in both\n%s", restarted, len(noticed), c.logs())
	}
	// The restarted process answered with the model before the cap (the notice is not a
	// sent_reply): its calls are in the path checked below.
	if n := procOf(guilds[0]).log().count(0, "sent_reply"); n == 0 {
		t.Error("the restarted process made no model reply before the cap: the restart was not tested")
	}
	// Killed and started again at the cap, the first process must not say its guild's notice
	// a second time: the day's notice is claimed in the shared store, not in the process.
	restart(procOf(guilds[0]))
	atCap := len(osim.Requests())
	for _, g := range guilds {
		if reply, skipped := ask(g); !skipped {
			t.Errorf("guild %s after its notice: %q, want nothing", g, reply)
		}
	}
	if n := len(osim.Requests()); n != atCap {
		t.Errorf("%d model requests past the cap, want none", n-atCap)
	}
	checkSpendPath(t, osim.Requests(), 2, 0.4)
	c.stop(ctx)
}
