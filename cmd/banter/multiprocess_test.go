package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/banterbot/banter/discord"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store/pgtest"
)

// banterProcess is one `banter run` OS process of the multi-process test.
type banterProcess struct {
	name, shardIDs string
	cmd            *exec.Cmd
	log            *os.File
	done           chan error
}

// TestMultiProcess runs three banter processes that share one bot's four shards (0-1, 2 and 3)
// against the sharded Discord simulator and one PostgreSQL: every addressed message in every
// guild is answered exactly once; one process is killed with SIGKILL mid-way and restarted, and
// the messages its guilds received meanwhile are answered after the restart; the processes
// together draw no 429 from Discord's REST limits.
func TestMultiProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three banter processes")
	}
	pg, err := pgtest.Start(context.Background())
	if errors.Is(err, pgtest.ErrNoServer) && os.Getenv("BANTER_REQUIRE_POSTGRES") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dsn, err := pg.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(t.TempDir(), "banter")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// max_concurrency 4: each shard has its own identify key, so the processes start together.
	dsim := simtest.Serve(t, discordsim.WithShards(4, 4), discordsim.WithIdentifySpacing(time.Second))
	osim := openaitest.Serve(t)
	alice := dsim.CreateUser("alice")
	const guildCount, shardCount = 8, 4
	var guilds []discordsim.GuildID
	channels := map[discordsim.GuildID]discordsim.ChannelID{}
	for i := range guildCount {
		g := dsim.CreateGuild("guild" + strconv.Itoa(i))
		dsim.AddMember(g, alice)
		channels[g] = dsim.CreateTextChannel(g, "general")
		guilds = append(guilds, g)
	}
	shardOf := func(g discordsim.GuildID) int { s, _ := discord.ShardOf(string(g), shardCount); return s }

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	cfg := fmt.Sprintf(`discord:
  apiUrl: %s
  shards: "%d"
  registerSlashCommands: false
store:
  driver: postgres
  dsn: %s
metrics:
  listen: ""
activity:
  replyCoalesceWindowSeconds: 0
voice:
  enabled: false
`, dsim.APIBaseURL(), shardCount, dsn)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DISCORD_TOKEN="+dsim.Token(), "OPENAI_BASE_URL="+osim.BaseURL(), "OPENAI_API_KEY=sk-test")
	start := func(p *banterProcess) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, p.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		p.log = f
		p.cmd = exec.Command(bin, "run", "-config", cfgPath)
		p.cmd.Env = append(env, "BANTER_SHARD_IDS="+p.shardIDs)
		p.cmd.Stdout, p.cmd.Stderr = f, f
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p.done = make(chan error, 1)
		go func() { p.done <- p.cmd.Wait(); f.Close() }()
	}
	procs := []*banterProcess{{name: "a", shardIDs: "0-1"}, {name: "b", shardIDs: "2"}, {name: "c", shardIDs: "3"}}
	logs := func() string {
		var b strings.Builder
		for _, p := range procs {
			data, _ := os.ReadFile(filepath.Join(dir, p.name+".log"))
			fmt.Fprintf(&b, "--- process %s (shards %s)\n%s", p.name, p.shardIDs, data)
		}
		return b.String()
	}
	for _, p := range procs {
		start(p)
	}
	defer func() {
		for _, p := range procs {
			if p.cmd.ProcessState == nil {
				p.cmd.Process.Kill()
				<-p.done
			}
		}
	}()
	identified := 0
	if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, shardCount); err != nil {
		t.Fatalf("not every shard identified: %v\n%s", err, logs())
	}
	identified = shardCount

	var addressed []discordsim.Message
	post := func(g discordsim.GuildID, text string) {
		t.Helper()
		m, err := dsim.Post(ctx, alice, channels[g], text)
		if err != nil {
			t.Fatal(err)
		}
		addressed = append(addressed, m)
	}
	answeredAll := func(want []discordsim.Message) {
		t.Helper()
		for _, m := range want {
			if _, err := simtest.WaitMessage(ctx, dsim, func(r discordsim.Message) bool {
				return r.Author == dsim.BotID() && r.ReplyTo() == m.ID
			}); err != nil {
				t.Fatalf("%q in guild on shard %d not answered: %v\n%s", m.Content, shardOf(m.GuildID), err, logs())
			}
		}
	}

	// Round 1: every process answers its own guilds.
	for i, g := range guilds {
		post(g, fmt.Sprintf("hey banter, round one question %d?", i))
	}
	answeredAll(addressed)

	// Process b (shard 2) dies without a goodbye; its guilds keep talking meanwhile.
	victim := procs[1]
	victim.cmd.Process.Signal(syscall.SIGKILL)
	<-victim.done
	var gap []discordsim.Message
	for i, g := range guilds {
		post(g, fmt.Sprintf("hey banter, round two question %d?", i))
		gap = append(gap, addressed[len(addressed)-1])
	}
	var others, victims []discordsim.Message
	for _, m := range gap {
		if shardOf(m.GuildID) == 2 {
			victims = append(victims, m)
		} else {
			others = append(others, m)
		}
	}
	answeredAll(others)
	start(victim)
	if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, identified+1); err != nil {
		t.Fatalf("the restarted process did not identify: %v\n%s", err, logs())
	}
	answeredAll(victims) // by the catch-up after the restarted shard's READY

	// Stop every process cleanly; after that no reply can still arrive.
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-ctx.Done():
			t.Fatalf("process %s did not stop on SIGTERM\n%s", p.name, logs())
		}
	}

	replies := map[discordsim.MessageID]int{}
	for _, m := range dsim.Sent() {
		if m.Author == dsim.BotID() && m.ReplyTo() != "" {
			replies[m.ReplyTo()]++
		}
	}
	once, dup, lost := 0, 0, 0
	for _, m := range addressed {
		switch n := replies[m.ID]; {
		case n == 1:
			once++
		case n > 1:
			dup++
		default:
			lost++
		}
	}
	tooMany := 0
	for _, r := range dsim.RESTLog() {
		if r.Status == 429 {
			tooMany++
		}
	}
	fmt.Printf("multi-process: processes=%d guilds=%d addressed=%d answered_once=%d duplicates=%d lost=%d 429s=%d\n",
		len(procs), guildCount, len(addressed), once, dup, lost, tooMany)
	if once != len(addressed) || dup != 0 || lost != 0 || tooMany != 0 {
		t.Errorf("want every addressed message answered exactly once and no 429\n%s", logs())
	}
	if len(victims) == 0 {
		t.Error("no guild on the killed process's shard: the restart was not tested")
	}
}
