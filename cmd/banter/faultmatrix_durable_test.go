package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// The fault matrix's rows for what happens outside a running session: a quiet channel after
// op 9, downtime (a channel created and messages posted while the bot is stopped), and a
// kill -9 while the model generates an admitted turn. Each is a scenario: it starts its own
// bot, injects its fault, posts its addressed messages and returns them; runScenario accounts
// for them as the other rows do. The downtime and kill rows run `banter run` as an OS process
// (built once per matrix), restarted on the same config and database.

// runScenario runs one scenario row and stops its bot; duplicates are counted after the stop.
func runScenario(t *testing.T, ctx context.Context, f fault) row {
	b, ids := f.scenario(t, ctx)
	out := waitOutcomes(ctx, b, ids)
	r := row{name: f.name, runs: 1}
	for _, id := range ids {
		if !r.tally(out[id]) {
			t.Errorf("%s: addressed message %s neither answered nor explained", f.name, id)
		}
	}
	if err := b.stop(); err != nil {
		t.Errorf("%s: bot: %v", f.name, err)
	}
	if r.duplicates = b.duplicates(ids); r.duplicates > 0 {
		t.Errorf("%s: %d duplicate replies", f.name, r.duplicates)
	}
	return r
}

// tally counts one addressed message's outcome ("answered", "explained", else unexplained)
// and reports whether it had one.
func (r *row) tally(outcome string) bool {
	r.addressed++
	switch outcome {
	case "answered":
		r.answered++
	case "explained":
		r.explained++
	default:
		r.unexplained++
		return false
	}
	return true
}

// postIn posts an addressed message as alice in channel ch.
func (b *botProcess) postIn(t *testing.T, ctx context.Context, ch discordsim.ChannelID, text string) discordsim.MessageID {
	t.Helper()
	m, err := b.dsim.Post(ctx, b.alice, ch, discordsim.MentionUser(b.dsim.BotID())+" "+text)
	if err != nil {
		t.Fatalf("post in %s: %v", ch, err)
	}
	return m.ID
}

// waitLine waits (after log offset off) for n lines with message msg whose fields match want.
func (b *botProcess) waitLine(t *testing.T, ctx context.Context, off, n int, msg string, want map[string]string) {
	t.Helper()
	g, cancel := guard(ctx)
	defer cancel()
	ok := b.logs.wait(g, func() bool {
		seen := 0
		for _, line := range b.logs.since(off) {
			match := line.msg() == msg
			for k, v := range want {
				match = match && line.str(k) == v
			}
			if match {
				seen++
			}
		}
		return seen >= n
	})
	if !ok {
		t.Fatalf("no %d× %s %v in the bot's log:\n%s", n, msg, want, b.logs.String())
	}
}

// waitCaughtUp waits for the GUILD_CREATE catch-up of each channel (logged after log offset off).
func (b *botProcess) waitCaughtUp(t *testing.T, ctx context.Context, off int, chans ...discordsim.ChannelID) {
	t.Helper()
	for _, ch := range chans {
		b.waitLine(t, ctx, off, 1, "catch_up", map[string]string{"reason": "guild_create", "channel_id": string(ch)})
	}
}

// opQuietChannel: a channel nobody has spoken in since the bot started; gateway latency 2 s;
// op 9 (not resumable); 5 addressed messages posted there before the new READY. The catch-up
// after the READY reads the quiet channel back over its window.
func opQuietChannel(t *testing.T, ctx context.Context) (*botProcess, []discordsim.MessageID) {
	var quiet discordsim.ChannelID
	b := startBot(t, ctx, nil, "", "activity:\n  replyCoalesceWindowSeconds: 0\n", func(b *botProcess) {
		quiet = b.dsim.CreateTextChannel(b.guild, "quiet")
	})
	b.waitCaughtUp(t, ctx, 0, b.ch, quiet)
	b.dsim.SetGatewayLatency(2 * time.Second)
	identified := b.dsim.CountGateway(discordsim.GatewayIdentified)
	if err := retryInject(ctx, func() error { return b.dsim.ForceInvalidSession(false) }); err != nil {
		t.Fatalf("op 9: %v", err)
	}
	var ids []discordsim.MessageID
	for i := range 5 {
		ids = append(ids, b.postIn(t, ctx, quiet, fmt.Sprintf("gateway_op9_quiet_channel message %d", i)))
	}
	if n := b.dsim.CountGateway(discordsim.GatewayIdentified); n != identified {
		t.Fatalf("the bot identified again (%d → %d) before the messages were posted: the row tests nothing", identified, n)
	}
	return b, ids
}

// osBot is `banter run` as an OS process against simulators the test keeps across its
// restarts, on one config file and database.
type osBot struct {
	*botProcess
	bin  string
	env  []string
	cmd  *exec.Cmd
	done chan error
	runs int // processes started
}

// newOSBot builds banter once per matrix (bin), writes a config against fresh simulators (the
// Discord simulator with opts; $CHANNEL in extra names the general channel) and starts the
// first process.
func newOSBot(t *testing.T, ctx context.Context, bin, extra string, setup func(*botProcess), opts ...discordsim.Option) *osBot {
	t.Helper()
	return newOSBotWith(t, ctx, bin, "", extra, setup, opts...)
}

// newOSBotWith is newOSBot with discordExtra added to the config's discord section (lines
// indented by two spaces). The bot's SQLite file is its storeDSN.
func newOSBotWith(t *testing.T, ctx context.Context, bin, discordExtra, extra string, setup func(*botProcess), opts ...discordsim.Option) *osBot {
	t.Helper()
	b := &botProcess{dsim: simtest.Serve(t, opts...), osim: openaitest.Serve(t), logs: newMatrixLog()}
	b.guild = b.dsim.CreateGuild("g")
	b.ch = b.dsim.CreateTextChannel(b.guild, "general")
	b.alice, b.bob = b.dsim.CreateUser("alice"), b.dsim.CreateUser("bob")
	b.dsim.AddMember(b.guild, b.alice)
	b.dsim.AddMember(b.guild, b.bob)
	if setup != nil {
		setup(b)
	}
	dir := t.TempDir()
	b.cfgPath = filepath.Join(dir, "banter.yaml")
	b.storeDriver, b.storeDSN = "sqlite", filepath.Join(dir, "banter.db")
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\n  shutdownTimeoutSeconds: 5\n%smetrics:\n  listen: \"\"\nstore:\n  dsn: %s\n%sactivity:\n  replyCoalesceWindowSeconds: 0\n%s",
		b.dsim.APIBaseURL(), discordExtra, b.storeDSN, b.storeExtra, strings.ReplaceAll(extra, "$CHANNEL", string(b.ch)))
	if err := os.WriteFile(b.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &osBot{botProcess: b, bin: bin,
		env: append(os.Environ(), "DISCORD_TOKEN="+b.dsim.Token(), "OPENAI_BASE_URL="+b.osim.BaseURL(), "OPENAI_API_KEY=sk-test")}
	b.stop = func() error {
		var err error
		if o.cmd != nil && o.cmd.ProcessState == nil {
			err = o.end(syscall.SIGTERM)
		}
		b.dsim.Close()
		b.osim.Close()
		b.saveLog(t)
		return err
	}
	t.Cleanup(func() {
		if o.cmd != nil && o.cmd.ProcessState == nil {
			o.cmd.Process.Kill()
			<-o.done
		}
	})
	o.start(t, ctx)
	return o
}

// start runs a new process and waits for its session.
func (o *osBot) start(t *testing.T, ctx context.Context) {
	t.Helper()
	o.cmd = exec.Command(o.bin, "run", "-config", o.cfgPath)
	o.cmd.Env = o.env
	o.cmd.Stdout, o.cmd.Stderr = o.logs, o.logs
	if err := o.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o.done = make(chan error, 1)
	go func(cmd *exec.Cmd) { o.done <- cmd.Wait() }(o.cmd)
	o.runs++
	g, cancel := guard(ctx)
	defer cancel()
	if _, err := simtest.WaitGateway(g, o.dsim, discordsim.GatewayIdentified, o.runs); err != nil {
		t.Fatalf("process %d never identified: %v\n%s", o.runs, err, o.logs.String())
	}
}

// end sends sig to the process and waits for it to exit; a SIGTERM must end it cleanly.
func (o *osBot) end(sig syscall.Signal) error {
	if err := o.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v: %w", sig, err)
	}
	err := <-o.done
	if sig == syscall.SIGKILL {
		return nil // killed: the exit status says so
	}
	return err
}

// downtimeNewChannel: the bot stopped with SIGTERM; addressed messages posted in a quiet
// channel, in a channel created meanwhile and in the active one; the bot started again on the
// same database. The startup catch-up reads each back: the active one from the store, the
// others over the window.
func downtimeNewChannel(bin func(*testing.T) string) func(*testing.T, context.Context) (*botProcess, []discordsim.MessageID) {
	return func(t *testing.T, ctx context.Context) (*botProcess, []discordsim.MessageID) {
		var quiet discordsim.ChannelID
		o := newOSBot(t, ctx, bin(t), "", func(b *botProcess) { quiet = b.dsim.CreateTextChannel(b.guild, "quiet") })
		o.waitCaughtUp(t, ctx, 0, o.ch, quiet)
		ids := []discordsim.MessageID{o.postIn(t, ctx, o.ch, "downtime_new_channel before the stop")}
		waitOutcomes(ctx, o.botProcess, ids)
		if err := o.end(syscall.SIGTERM); err != nil {
			t.Fatalf("SIGTERM: %v\n%s", err, o.logs.String())
		}
		created := o.dsim.CreateTextChannel(o.guild, "created-while-down")
		for i, ch := range []discordsim.ChannelID{quiet, created, quiet, created, o.ch} {
			ids = append(ids, o.postIn(t, ctx, ch, fmt.Sprintf("downtime_new_channel while down %d", i)))
		}
		o.start(t, ctx)
		return o.botProcess, ids
	}
}

// kill9DuringGeneration: the model holds its answer to an admitted addressed turn; the process
// is killed with SIGKILL once the turn is past reply_admission phase=pre_generation, then
// started again with the same config and database: the open turn is answered once.
func kill9DuringGeneration(bin func(*testing.T) string) func(*testing.T, context.Context) (*botProcess, []discordsim.MessageID) {
	return func(t *testing.T, ctx context.Context) (*botProcess, []discordsim.MessageID) {
		o := newOSBot(t, ctx, bin(t), "llm:\n  maxRetries: 0\n  timeoutSeconds: 300\n", nil)
		o.waitCaughtUp(t, ctx, 0, o.ch)
		// The first reply request hangs until the client gives up (here: is killed); its
		// arrival is signalled.
		arrived := make(chan struct{})
		var once sync.Once
		hold := openaisim.Rule{Name: "hold", Fault: openaisim.Fault{Timeout: true}, Times: 1,
			Respond: func(openaisim.Request) openaisim.Reply { once.Do(func() { close(arrived) }); return openaisim.Reply{} }}
		if err := o.osim.AddRule(hold); err != nil {
			t.Fatal(err)
		}
		off := o.logs.Len()
		id := o.postIn(t, ctx, o.ch, "kill9_during_generation: what do you think?")
		o.waitLine(t, ctx, off, 1, "reply_admission", map[string]string{"phase": "pre_generation", "message_id": string(id)})
		g, cancel := guard(ctx)
		defer cancel()
		select {
		case <-arrived: // the model is generating
		case <-g.Done():
			t.Fatalf("the reply request never reached the model:\n%s", o.logs.String())
		}
		if err := o.end(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		o.start(t, ctx)
		return o.botProcess, []discordsim.MessageID{id}
	}
}
