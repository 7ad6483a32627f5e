package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// modelLatency is how long the simulated model takes to answer in the chaos test.
const modelLatency = 700 * time.Millisecond

// chaosTraffic posts addressed messages across the chaos test's guilds at a steady pace, round
// robin, and remembers them.
type chaosTraffic struct {
	dsim     *discordsim.Server
	author   discordsim.UserID
	guilds   []discordsim.GuildID
	channels map[discordsim.GuildID]discordsim.ChannelID

	mu     sync.Mutex // guards following
	posted []discordsim.Message
	err    error
}

// run posts one message every interval until ctx ends.
func (c *chaosTraffic) run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		g := c.guilds[i%len(c.guilds)]
		m, err := c.dsim.Post(ctx, c.author, c.channels[g], fmt.Sprintf("hey banter, chaos question %d?", i))
		c.mu.Lock()
		if err == nil {
			c.posted = append(c.posted, m)
		} else if ctx.Err() == nil && c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
}

// messages are the messages posted so far.
func (c *chaosTraffic) messages() []discordsim.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]discordsim.Message(nil), c.posted...)
}

// TestChaos runs three banter processes that share one bot's four shards (0-1, 2 and 3) on one
// PostgreSQL, against the sharded Discord and OpenAI simulators, under steady addressed text
// traffic: a message every 300 ms, round robin over eight guilds (two per shard). Process b
// (shard 2) is killed with SIGKILL and started again, then process a (shards 0-1, which also
// registers the slash commands); each kill comes once the process has answered messages since
// its (re)start, each restart once the traffic has gone on without it for a while. Once the
// traffic stops and every message is answered or explained (or the settling guard ends), the
// processes are stopped and every addressed message is accounted for: answered once, answered
// more than once (a duplicate), or lost (neither answered nor explained by a log line naming
// it, as in the fault matrix). It prints
// `chaos: processes=3 kills=K addressed=A answered_once=B duplicates=D lost=L` and fails
// unless D = 0 and L = 0.
func TestChaos(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx, dsn, bin := clusterTest(t)

	const shardCount, perShard = 4, 2
	dsim := simtest.Serve(t, discordsim.WithShards(shardCount, shardCount), discordsim.WithIdentifySpacing(time.Second))
	// A model that takes its time, as a real one does: each process has turns in generation.
	osim := openaitest.Serve(t, openaisim.WithLatency(openaisim.Latency{TimeToFirstToken: modelLatency}))
	alice := dsim.CreateUser("alice")
	guilds, channels := shardGuilds(dsim, alice, shardCount, perShard)
	cfg := clusterConfig(dsim, shardCount, dsn, "", "  maxPromptsPerHour: 10000\n  perUserPromptShare: 1\n")
	procs := []*banterProcess{{name: "a", shardIDs: "0-1"}, {name: "b", shardIDs: "2"}, {name: "c", shardIDs: "3"}}
	c := newCluster(t, bin, cfg, dsim, osim.BaseURL(), procs)
	for _, p := range procs {
		c.start(p)
	}
	identified := shardCount
	if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, identified); err != nil {
		t.Fatalf("not every shard identified: %v\n%s", err, c.logs())
	}

	traffic := &chaosTraffic{dsim: dsim, author: alice, guilds: guilds, channels: channels}
	trafficCtx, stopTraffic := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); traffic.run(trafficCtx, 300*time.Millisecond) }()
	defer func() { stopTraffic(); wg.Wait() }()

	// owns reports whether p runs the shard of a guild.
	owns := func(p *banterProcess, g discordsim.GuildID) bool {
		for _, part := range strings.Split(p.shardIDs, "-") {
			if fmt.Sprint(shardOfGuild(g, shardCount)) == part {
				return true
			}
		}
		return false
	}
	// answeredSince waits until n messages of p's guilds posted after the first `after` are
	// answered.
	answeredSince := func(p *banterProcess, after, n int) {
		t.Helper()
		err := dsim.Await(ctx, func() bool {
			replies, got := botReplies(dsim), 0
			for _, m := range traffic.messages()[after:] {
				if owns(p, m.GuildID) && replies[m.ID] > 0 {
					got++
				}
			}
			return got >= n
		})
		if err != nil {
			t.Fatalf("process %s answered fewer than %d messages: %v\n%s", p.name, n, err, c.logs())
		}
	}
	// inFlight waits until p has admitted a message of its guilds for generation
	// (reply_admission phase=pre_generation) that is not answered yet: a kill then cuts a turn.
	inFlight := func(p *banterProcess) {
		t.Helper()
		ok := p.log().wait(ctx, func() bool {
			replies := botReplies(dsim)
			for _, id := range admitted(p.log().since(0)) {
				if replies[id] == 0 {
					return true
				}
			}
			return false
		})
		if !ok {
			t.Fatalf("process %s never had a turn in generation\n%s", p.name, c.logs())
		}
	}
	posted := func(n int) {
		t.Helper()
		if err := dsim.Await(ctx, func() bool { return len(traffic.messages()) >= n }); err != nil {
			t.Fatalf("traffic stalled at %d messages: %v", len(traffic.messages()), err)
		}
	}

	// Process b (shard 2), then process a (shards 0-1): each answers, dies without a
	// goodbye while generating a reply, stays down while the traffic goes on (8 messages, one
	// per guild), and comes back.
	kills := 0
	var cut []discordsim.MessageID // turns in generation at a kill
	for _, victim := range []*banterProcess{procs[1], procs[0]} {
		answeredSince(victim, len(traffic.messages()), 2)
		inFlight(victim)
		c.kill(victim)
		replies := botReplies(dsim)
		for _, id := range admitted(victim.log().since(0)) {
			if replies[id] == 0 {
				cut = append(cut, id)
			}
		}
		kills++
		posted(len(traffic.messages()) + len(guilds))
		restartedAt := len(traffic.messages())
		c.start(victim)
		identified += len(strings.Split(victim.shardIDs, "-"))
		if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, identified); err != nil {
			t.Fatalf("process %s did not identify after its restart: %v\n%s", victim.name, err, c.logs())
		}
		answeredSince(victim, restartedAt, 3)
	}
	stopTraffic()
	wg.Wait()
	if traffic.err != nil {
		t.Fatalf("posting: %v", traffic.err)
	}

	// Settle: wait until every message is answered or explained. The guard only bounds a run
	// that loses messages (a turn in flight at a kill is not taken up again without durable
	// turns): what is still open then is lost.
	addressed := traffic.messages()
	ids := make([]discordsim.MessageID, len(addressed))
	for i, m := range addressed {
		ids[i] = m.ID
	}
	outcomes := func() map[discordsim.MessageID]string {
		var lines []logLine
		for _, p := range procs {
			lines = append(lines, p.lines()...)
		}
		return textOutcomes(botReplies(dsim), lines, ids)
	}
	settle, cancelSettle := context.WithTimeout(ctx, 45*time.Second)
	procs[0].log().wait(settle, func() bool {
		for _, o := range outcomes() {
			if o == "" {
				return false
			}
		}
		return true
	})
	cancelSettle()
	c.stop(ctx) // after this no reply can still arrive

	replies, final := botReplies(dsim), outcomes()
	once, dup, lost := 0, 0, 0
	var lostIDs, explained []string
	for _, id := range ids {
		switch {
		case replies[id] == 1:
			once++
		case replies[id] > 1:
			dup++
		case final[id] == "":
			lost++
			lostIDs = append(lostIDs, string(id))
		default:
			explained = append(explained, string(id)+": "+final[id])
		}
	}
	line := fmt.Sprintf("chaos: processes=%d kills=%d addressed=%d answered_once=%d duplicates=%d lost=%d",
		len(procs), kills, len(addressed), once, dup, lost)
	t.Log(line)
	fmt.Println(line)
	if len(explained) > 0 {
		t.Logf("without a reply of their own (coalesced into another's reply: \"answered\"; else the line that explains them): %s", strings.Join(explained, "; "))
	}
	if dup != 0 || lost != 0 {
		t.Errorf("want no duplicate and no lost message; lost: %v (in generation at a kill: %v)\n%s", lostIDs, cut, c.logs())
	}
}

// admitted are the messages a process's log shows admitted for generation (reply_admission
// with phase pre_generation and allow), by message_id.
func admitted(lines []logLine) []discordsim.MessageID {
	var ids []discordsim.MessageID
	for _, l := range lines {
		if l.msg() == "reply_admission" && l.str("phase") == "pre_generation" && l["allow"] == true {
			ids = append(ids, discordsim.MessageID(l.str("message_id")))
		}
	}
	return ids
}
