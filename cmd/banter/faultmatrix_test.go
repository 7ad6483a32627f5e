package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// The fault matrix runs `banter run` itself (store, gateway monitor, sender, text pipeline)
// against both simulators, injects one fault per row, and accounts for every addressed message
// posted around it: answered (a reply to it, or coalesced into a reply: turn_coalesced),
// explained (a logged reason: turn_shed, reply_rate_limited, send_lost, message_ignored), or
// unexplained. Run it alone with `go test -run FaultMatrix -v ./...`.

// botProcess is one `banter run` against its own simulators.
type botProcess struct {
	dsim  *discordsim.Server
	osim  *openaisim.Server
	guild discordsim.GuildID
	ch    discordsim.ChannelID
	alice discordsim.UserID
	bob   discordsim.UserID
	logs  *lockedBuffer
	stop  func() error
}

// startBot runs banter against fresh simulators; discordExtra is added to the config's discord
// section, extra appended to the file; setup runs before the bot starts.
func startBot(t *testing.T, ctx context.Context, dopts []discordsim.Option, discordExtra, extra string, setup func(*botProcess)) *botProcess {
	t.Helper()
	// The helpers close the simulators at cleanup too (Close is idempotent) and check every
	// request the bot sent against the official specs.
	b := &botProcess{dsim: simtest.Serve(t, dopts...), logs: &lockedBuffer{}}
	osim := openaitest.Serve(t)
	b.osim = osim
	g := b.dsim.CreateGuild("g")
	b.ch = b.dsim.CreateTextChannel(g, "general")
	b.alice, b.bob = b.dsim.CreateUser("alice"), b.dsim.CreateUser("bob")
	b.dsim.AddMember(g, b.alice)
	b.dsim.AddMember(g, b.bob)
	b.guild = g
	if setup != nil {
		setup(b)
	}

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\n  shutdownTimeoutSeconds: 5\n%smetrics:\n  listen: 127.0.0.1:0\nstore:\n  dsn: %s\nllm:\n  maxRetries: 1\n  timeoutSeconds: 5\n%s",
		b.dsim.APIBaseURL(), discordExtra, filepath.Join(dir, "banter.db"), extra)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DISCORD_TOKEN": b.dsim.Token(), "OPENAI_BASE_URL": osim.BaseURL(), "OPENAI_API_KEY": "sk-test"}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- dispatch(runCtx, env{args: []string{"run", "-config", cfgPath}, stdout: b.logs, stderr: b.logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	b.stop = func() error {
		cancel()
		err := <-done
		b.dsim.Close()
		b.osim.Close()
		return err
	}
	readyCtx, cancelReady := context.WithCancel(ctx)
	defer cancelReady()
	go func() {
		select {
		case err := <-done: // exited early: stop waiting, and let stop see the result
			cancelReady()
			done <- err
		case <-readyCtx.Done():
		}
	}()
	if err := simtest.WaitReady(readyCtx, b.dsim, b.dsim.BotID()); err != nil {
		b.stop()
		t.Fatalf("bot never logged in: %v\n%s", err, b.logs.String())
	}
	return b
}

// post sends a message as u; addressed ones mention the bot.
func (b *botProcess) post(ctx context.Context, u discordsim.UserID, addressed bool, text string) (discordsim.MessageID, error) {
	if addressed {
		text = discordsim.MentionUser(b.dsim.BotID()) + " " + text
	}
	m, err := b.dsim.Post(ctx, u, b.ch, text)
	return m.ID, err
}

// outcomes classifies each id: "answered", "explained" or "" (not yet / never), and counts
// replies per id (a reply posted twice is a duplicate).
func (b *botProcess) outcomes(ids []discordsim.MessageID) (map[discordsim.MessageID]string, int) {
	replies := map[discordsim.MessageID]int{}
	for _, m := range b.dsim.Sent() {
		if m.Author == b.dsim.BotID() {
			replies[m.ReplyTo()]++
		}
	}
	logs := strings.Split(b.logs.String(), "\n")
	out := map[discordsim.MessageID]string{}
	dups := 0
	for _, id := range ids {
		if n := replies[id]; n > 0 {
			out[id] = "answered"
			dups += n - 1
			continue
		}
		for _, line := range logs {
			if !strings.Contains(line, `"`+string(id)+`"`) {
				continue
			}
			switch {
			case strings.Contains(line, `"msg":"turn_coalesced"`):
				out[id] = "answered"
			case strings.Contains(line, `"msg":"turn_shed"`), strings.Contains(line, `"msg":"reply_rate_limited"`),
				strings.Contains(line, `"msg":"send_lost"`), strings.Contains(line, `"msg":"message_ignored"`):
				if out[id] == "" {
					out[id] = "explained"
				}
			}
		}
	}
	return out, dups
}

// fault is one row of the matrix.
type fault struct {
	name        string
	bot         string // which botProcess: "plain", "limited" (5 sends per 5 s), "capped" (2 prompts/h)
	runs        int
	addressed   int // per run
	unaddressed int // per run
	// inject breaks something just before the run's messages are posted.
	inject func(b *botProcess) error
	// check, if set, asserts more about the run.
	check func(t *testing.T, b *botProcess)
}

type row struct {
	name                                              string
	runs, addressed, answered, explained, unexplained int
	duplicates                                        int
}

func faults() []fault {
	noop := func(*botProcess) error { return nil }
	return []fault{
		{name: "none", bot: "plain", runs: 2, addressed: 3, unaddressed: 2, inject: noop},
		{name: "gateway_tcp_drop", bot: "plain", runs: 2, addressed: 3, unaddressed: 2, inject: func(b *botProcess) error { return b.dsim.DropGateway() }},
		{name: "gateway_close_4000", bot: "plain", runs: 2, addressed: 3, unaddressed: 2, inject: func(b *botProcess) error {
			return b.dsim.CloseGateway(discordsim.CloseUnknownError)
		}},
		{name: "gateway_op7_reconnect", bot: "plain", runs: 2, addressed: 3, unaddressed: 2, inject: func(b *botProcess) error { return b.dsim.ForceReconnect() }},
		{name: "gateway_op9_reidentify", bot: "plain", runs: 2, addressed: 3, unaddressed: 2, inject: func(b *botProcess) error {
			return b.dsim.ForceInvalidSession(false)
		}},
		{name: "send_500", bot: "plain", runs: 2, addressed: 1, inject: func(b *botProcess) error {
			b.dsim.FailNext(discordsim.RouteMessageCreate, 1, http.StatusInternalServerError)
			return nil
		}},
		{name: "send_503_after_commit", bot: "plain", runs: 2, addressed: 1, inject: func(b *botProcess) error {
			b.dsim.FailNextAfterCommit(discordsim.RouteMessageCreate, 1, http.StatusServiceUnavailable)
			return nil
		}},
		{name: "send_503_every_attempt", bot: "plain", runs: 1, addressed: 1, inject: func(b *botProcess) error {
			b.dsim.FailNext(discordsim.RouteMessageCreate, 4, http.StatusServiceUnavailable)
			return nil
		}},
		{name: "model_500", bot: "plain", runs: 2, addressed: 1, inject: func(b *botProcess) error {
			return b.osim.AddRule(openaisim.Rule{Name: "fail", Fault: openaisim.Fault{Status: 500}, Times: 2})
		}},
		{name: "burst_send_limit_5_per_5s", bot: "limited", runs: 1, addressed: 30, unaddressed: 30, inject: noop},
		{name: "prompt_cap", bot: "capped", runs: 5, addressed: 1, inject: noop, check: func(t *testing.T, b *botProcess) {
			replies, typing := 0, 0
			for _, m := range b.dsim.Sent() {
				if m.Author == b.dsim.BotID() {
					replies++
				}
			}
			for _, e := range b.dsim.Typing() {
				if e.User == b.dsim.BotID() {
					typing++
				}
			}
			if typing > replies {
				t.Errorf("prompt_cap: %d typing indicators for %d replies", typing, replies)
			}
		}},
	}
}

func TestFaultMatrix(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// os/signal starts its loop goroutine on the process's first Notify and keeps it: start it
	// before counting, so that it is not taken for growth.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	signal.Stop(sig)
	goroutinesBefore := runtime.NumGoroutine()

	bots := map[string]*botProcess{}
	botFor := func(kind string) *botProcess {
		if b := bots[kind]; b != nil {
			return b
		}
		var opts []discordsim.Option
		extra := "activity:\n  replyCoalesceWindowSeconds: 0\n"
		switch kind {
		case "limited":
			opts = append(opts, discordsim.WithRouteLimit(discordsim.RouteMessageCreate, 5, 5*time.Second))
			extra += "  queueCapacity: 8\n"
		case "capped":
			extra += "  maxPromptsPerHour: 2\n  explicitReservePromptsPerHour: 0\n"
		}
		bots[kind] = startBot(t, ctx, opts, "", extra, nil)
		return bots[kind]
	}

	var rows []row
	seq := 0
	for _, f := range faults() {
		b := botFor(f.bot)
		r := row{name: f.name, runs: f.runs}
		for run := 0; run < f.runs; run++ {
			if err := retryInject(ctx, func() error { return f.inject(b) }); err != nil {
				t.Fatalf("%s: inject: %v", f.name, err)
			}
			var ids []discordsim.MessageID
			for i, addressed := range interleave(f.addressed, f.unaddressed) {
				seq++
				u := b.alice
				if !addressed {
					u = b.bob
				}
				id, err := b.post(ctx, u, addressed, fmt.Sprintf("%s run %d message %d (#%d)", f.name, run, i, seq))
				if err != nil {
					t.Fatalf("%s: post: %v", f.name, err)
				}
				if addressed {
					ids = append(ids, id)
				}
			}
			out, dups := waitOutcomes(ctx, b, ids)
			r.addressed += len(ids)
			r.duplicates += dups
			for _, id := range ids {
				switch out[id] {
				case "answered":
					r.answered++
				case "explained":
					r.explained++
				default:
					r.unexplained++
					t.Errorf("%s run %d: addressed message %s neither answered nor explained", f.name, run, id)
				}
			}
			if dups > 0 {
				t.Errorf("%s run %d: %d duplicate replies", f.name, run, dups)
			}
		}
		if f.check != nil {
			f.check(t, b)
		}
		rows = append(rows, r)
	}
	for kind, b := range bots {
		if err := b.stop(); err != nil {
			t.Errorf("%s bot: run returned %v", kind, err)
		}
	}
	vb := startVoiceBot(t, ctx)
	rows = append(rows, runVoiceRows(t, ctx, vb)...)
	if err := vb.stop(); err != nil {
		t.Errorf("voice bot: run returned %v", err)
	}

	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\truns\taddressed\tanswered\texplained\tunexplained\tduplicates")
	var total row
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", r.name, r.runs, r.addressed, r.answered, r.explained, r.unexplained, r.duplicates)
		total.runs += r.runs
		total.addressed += r.addressed
		total.answered += r.answered
		total.explained += r.explained
		total.unexplained += r.unexplained
	}
	tw.Flush()
	fmt.Print(sb.String())

	// No goroutine growth: everything the bots and simulators started has stopped.
	after := settleGoroutines(goroutinesBefore)
	if after > goroutinesBefore {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after\n%s", goroutinesBefore, after, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("goroutines before %d, after %d", goroutinesBefore, after)
	fmt.Printf("fault matrix: faults=%d runs=%d addressed=%d answered=%d explained=%d unexplained=%d\n",
		len(rows), total.runs, total.addressed, total.answered, total.explained, total.unexplained)
	if total.unexplained != 0 {
		t.Errorf("%d addressed messages lost without a trace", total.unexplained)
	}
}

// interleave alternates addressed and unaddressed messages while both remain.
func interleave(addressed, unaddressed int) []bool {
	var out []bool
	for addressed > 0 || unaddressed > 0 {
		if addressed > 0 {
			out = append(out, true)
			addressed--
		}
		if unaddressed > 0 {
			out = append(out, false)
			unaddressed--
		}
	}
	return out
}

// retryInject retries a fault that needs a connected gateway session until the bot has one.
func retryInject(ctx context.Context, inject func() error) error {
	for {
		err := inject()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitOutcomes waits until every id is answered or explained (the deadline is only a failure
// guard), then lets late duplicates show before counting them.
func waitOutcomes(ctx context.Context, b *botProcess, ids []discordsim.MessageID) (map[discordsim.MessageID]string, int) {
	guard, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	for {
		out, dups := b.outcomes(ids)
		done := true
		for _, id := range ids {
			done = done && out[id] != ""
		}
		if done {
			return out, dups
		}
		select {
		case <-guard.Done():
			return out, dups
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settleGoroutines waits (bounded) for the goroutine count to fall to limit and returns it.
func settleGoroutines(limit int) int {
	deadline := time.Now().Add(15 * time.Second)
	n := runtime.NumGoroutine()
	for n > limit && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}
