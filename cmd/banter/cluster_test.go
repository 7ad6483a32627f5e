package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/banterbot/banter/discord"
	discordsim "github.com/banterbot/banter/sim/discord"
)

// The multi-process tests (TestMultiProcess, TestChaos) run the real binary: several `banter
// run` OS processes sharing one bot's shards on one PostgreSQL, against the sharded Discord and
// OpenAI simulators. cluster holds what they share.

// banterProcess is one `banter run` OS process of a cluster, started again after a kill under
// the same name and shards.
type banterProcess struct {
	name, shardIDs string
	cmd            *exec.Cmd
	done           chan error

	mu   sync.Mutex   // guards following
	logs []*matrixLog // one per start: a killed process may leave half a line
}

// log is the JSON log of the process's current start.
func (p *banterProcess) log() *matrixLog {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs[len(p.logs)-1]
}

// lines are the parsed log lines of every start of the process.
func (p *banterProcess) lines() []logLine {
	p.mu.Lock()
	logs := append([]*matrixLog(nil), p.logs...)
	p.mu.Unlock()
	var out []logLine
	for _, l := range logs {
		out = append(out, l.since(0)...)
	}
	return out
}

// cluster is the banter processes of one bot, their config and their simulators.
type cluster struct {
	t       *testing.T
	bin     string
	cfgPath string
	env     []string
	dsim    *discordsim.Server
	procs   []*banterProcess
}

// clusterTest prepares a multi-process test: a context bounding it (4 minutes), a fresh
// database on the package's throwaway PostgreSQL and the binary (both shared by the package's
// tests: shared_test.go). It skips in -short mode, and without the PostgreSQL server binaries
// unless BANTER_REQUIRE_POSTGRES is set.
func clusterTest(t *testing.T) (ctx context.Context, dsn, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs several banter processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx, sharedDatabase(ctx, t), banterBinary(t)
}

// clusterConfig is the processes' config: the bot's shardCount shards on dsim, the Postgres
// store at dsn, no metrics listener, replies not coalesced; discordExtra is added to the
// discord section, extra (whole sections) after the activity section's keys.
func clusterConfig(dsim *discordsim.Server, shardCount int, dsn, discordExtra, extra string) string {
	return fmt.Sprintf(`discord:
  apiUrl: %s
  shards: "%d"
%sstore:
  driver: postgres
  dsn: %s
metrics:
  listen: ""
activity:
  replyCoalesceWindowSeconds: 0
%s`, dsim.APIBaseURL(), shardCount, discordExtra, dsn, extra)
}

// newCluster writes cfg and prepares procs to run the binary on it against dsim, with the
// model requests going to openAIURL. Processes still running at the end of the test are killed.
func newCluster(t *testing.T, bin, cfg string, dsim *discordsim.Server, openAIURL string, procs []*banterProcess) *cluster {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "banter.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, bin: bin, cfgPath: cfgPath, dsim: dsim, procs: procs,
		env: append(os.Environ(), "DISCORD_TOKEN="+dsim.Token(), "OPENAI_BASE_URL="+openAIURL, "OPENAI_API_KEY=sk-test")}
	t.Cleanup(func() {
		for _, p := range procs {
			if p.cmd != nil && p.cmd.ProcessState == nil {
				p.cmd.Process.Kill()
				<-p.done
			}
		}
	})
	return c
}

// start starts (or starts again) a process of the cluster.
func (c *cluster) start(p *banterProcess) {
	c.t.Helper()
	log := newMatrixLog()
	p.mu.Lock()
	p.logs = append(p.logs, log)
	p.mu.Unlock()
	p.cmd = exec.Command(c.bin, "run", "-config", c.cfgPath)
	p.cmd.Env = append(c.env, "BANTER_SHARD_IDS="+p.shardIDs)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p.done = make(chan error, 1)
	go func() { p.done <- p.cmd.Wait() }()
}

// kill ends a process with SIGKILL, as a crash would, and waits for it to be gone.
func (c *cluster) kill(p *banterProcess) {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop ends every process with SIGTERM (a graceful stop: in-flight replies finish) and waits;
// after it no reply can still arrive.
func (c *cluster) stop(ctx context.Context) {
	c.t.Helper()
	for _, p := range c.procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-ctx.Done():
			c.t.Fatalf("process %s did not stop on SIGTERM\n%s", p.name, c.logs())
		}
	}
}

// logs are every process's logs, for failure messages.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, p := range c.procs {
		p.mu.Lock()
		for i, l := range p.logs {
			fmt.Fprintf(&b, "--- process %s (shards %s), start %d\n%s", p.name, p.shardIDs, i+1, l.String())
		}
		p.mu.Unlock()
	}
	return b.String()
}

// shardGuilds creates perShard guilds on each of shardCount shards, each with member as a
// member and a text channel, and returns them and their channels. Guilds created in a row fall
// on consecutive shards, but a millisecond skipped while creating them would leave a shard
// without one: creation goes on until every shard has its share.
func shardGuilds(dsim *discordsim.Server, member discordsim.UserID, shardCount, perShard int) ([]discordsim.GuildID, map[discordsim.GuildID]discordsim.ChannelID) {
	var guilds []discordsim.GuildID
	count := map[int]int{}
	channels := map[discordsim.GuildID]discordsim.ChannelID{}
	for i := 0; len(guilds) < shardCount*perShard; i++ {
		g := dsim.CreateGuild("guild" + strconv.Itoa(i))
		if count[shardOfGuild(g, shardCount)] == perShard {
			continue
		}
		count[shardOfGuild(g, shardCount)]++
		dsim.AddMember(g, member)
		channels[g] = dsim.CreateTextChannel(g, "general")
		guilds = append(guilds, g)
	}
	return guilds, channels
}

// shardOfGuild is the shard that owns a simulated guild.
func shardOfGuild(g discordsim.GuildID, shardCount int) int {
	s, _ := discord.ShardOf(string(g), shardCount)
	return s
}

// botReplies counts the bot's replies per replied-to message.
func botReplies(dsim *discordsim.Server) map[discordsim.MessageID]int {
	replies := map[discordsim.MessageID]int{}
	for _, m := range dsim.Sent() {
		if m.Author == dsim.BotID() && m.ReplyTo() != "" {
			replies[m.ReplyTo()]++
		}
	}
	return replies
}
