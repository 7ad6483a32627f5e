package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/banterbot/banter/internal/leakcheck"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"go.uber.org/goleak"
)

// The fault matrix runs `banter run` itself (store, gateway monitor, sender, text pipeline,
// voice) against the simulators, injects one fault per row, and accounts for every addressed
// message posted around it: answered (a reply to it; a turn coalesced into another's reply
// (turn_coalesced) takes that turn's outcome), explained (a logged reason naming it:
// turn_shed, reply_rate_limited, reply_skipped, send_lost, message_ignored), or unexplained.
// Voice rows are in faultmatrix_voice_test.go, the helpers of the rows of sends left without an
// answer in faultmatrix_send_test.go. Run it alone with
// `go test -run FaultMatrix -v ./...`.

// botProcess is one `banter run` against its own simulators.
type botProcess struct {
	dsim  *discordsim.Server
	osim  *openaisim.Server
	guild discordsim.GuildID
	ch    discordsim.ChannelID
	alice discordsim.UserID
	bob   discordsim.UserID
	logs  *matrixLog
	stop  func() error
	// cfgPath is the bot's config file (a test may rewrite it: banter reloads it live).
	cfgPath string
	// storeDriver and storeDSN are the bot's store: a setup may set them (default: a SQLite file
	// in the test's folder, set by startBot).
	storeDriver, storeDSN string
	// storeExtra is added to the config's store section (lines indented by two spaces): a
	// setup may set it.
	storeExtra string
}

// startBot runs banter against fresh simulators; discordExtra is added to the config's discord
// section, extra appended to the file; setup runs before the bot starts.
func startBot(t *testing.T, ctx context.Context, dopts []discordsim.Option, discordExtra, extra string, setup func(*botProcess)) *botProcess {
	t.Helper()
	// The helpers close the simulators at cleanup too (Close is idempotent) and check every
	// request the bot sent against the official specs.
	b := &botProcess{dsim: simtest.Serve(t, dopts...), logs: newMatrixLog()}
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
	if b.storeDriver == "" {
		b.storeDriver, b.storeDSN = "sqlite", filepath.Join(dir, "banter.db")
	}
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\n  shutdownTimeoutSeconds: 5\n%smetrics:\n  listen: 127.0.0.1:0\nstore:\n  driver: %s\n  dsn: %q\n%sllm:\n  maxRetries: 1\n  timeoutSeconds: 5\n%s",
		b.dsim.APIBaseURL(), discordExtra, b.storeDriver, b.storeDSN, b.storeExtra, extra)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	b.cfgPath = cfgPath
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
		b.saveLog(t)
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

// saveLog writes the bot's log to $BANTER_FAULTMATRIX_LOGS/<test>-<n>.log when that variable
// names a directory (to read what the bot did in a passing run).
func (b *botProcess) saveLog(t *testing.T) {
	dir := os.Getenv("BANTER_FAULTMATRIX_LOGS")
	if dir == "" {
		return
	}
	f, err := os.CreateTemp(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-*.log") // a subtest's name has a slash
	if err != nil {
		t.Logf("save log: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(b.logs.String()); err != nil {
		t.Logf("save log: %v", err)
	}
}

// post sends a message as u; addressed ones mention the bot.
func (b *botProcess) post(ctx context.Context, u discordsim.UserID, addressed bool, text string) (discordsim.MessageID, error) {
	if addressed {
		text = discordsim.MentionUser(b.dsim.BotID()) + " " + text
	}
	m, err := b.dsim.Post(ctx, u, b.ch, text)
	return m.ID, err
}

// textExplained are the log events that explain why an addressed message got no reply, and
// the fields that name the messages they explain.
var textExplained = map[string][]string{
	"turn_shed":          {"message_id"},
	"message_ignored":    {"message_id"},
	"reply_skipped":      {"message_id"},
	"reply_rate_limited": {"message_id", "trigger_ids"},
	"send_lost":          {"turn_id"},
}

// replies counts the bot's replies per replied-to message.
func (b *botProcess) replies() map[discordsim.MessageID]int { return botReplies(b.dsim) }

// duplicates counts replies beyond the first per id.
func (b *botProcess) duplicates(ids []discordsim.MessageID) int {
	replies, dups := b.replies(), 0
	for _, id := range ids {
		dups += max(replies[id]-1, 0)
	}
	return dups
}

// outcomes classifies each id: "answered" (the bot replied to it), "explained" (a log line
// names it as declined or lost), a coalesced turn as its main turn, or "" (not yet / never).
func (b *botProcess) outcomes(ids []discordsim.MessageID) map[discordsim.MessageID]string {
	return textOutcomes(b.replies(), b.logs.since(0), ids)
}

// textOutcomes classifies each id as outcomes does, from the bot's replies and its log lines
// (of every process, for a bot run by several).
func textOutcomes(replies map[discordsim.MessageID]int, lines []logLine, ids []discordsim.MessageID) map[discordsim.MessageID]string {
	explained := map[discordsim.MessageID]bool{}
	into := map[discordsim.MessageID]discordsim.MessageID{}
	for _, line := range lines {
		if line.msg() == "turn_coalesced" {
			into[discordsim.MessageID(line.str("message_id"))] = discordsim.MessageID(line.str("into"))
			continue
		}
		for _, field := range textExplained[line.msg()] {
			for _, id := range line.strs(field) {
				explained[discordsim.MessageID(id)] = true
			}
		}
	}
	var outcome func(id discordsim.MessageID, depth int) string
	outcome = func(id discordsim.MessageID, depth int) string {
		switch {
		case replies[id] > 0:
			return "answered"
		case explained[id]:
			return "explained"
		case into[id] != "" && depth < 8:
			// Answered together with the turn it was coalesced into: only if that one was.
			return outcome(into[id], depth+1)
		}
		return ""
	}
	out := map[discordsim.MessageID]string{}
	for _, id := range ids {
		out[id] = outcome(id, 0)
	}
	return out
}

// textRun is what one run of a text row posted and saw.
type textRun struct {
	ids     []discordsim.MessageID // addressed
	out     map[discordsim.MessageID]string
	typing0 int // the bot's typing events before the run
}

// fault is one text row of the matrix.
type fault struct {
	name        string
	bot         string // which botProcess: "plain", "limited" (5 sends per 5 s), "capped" (2 prompts/h)
	runs        int
	addressed   int // per run
	unaddressed int // per run
	// inject breaks something just before the run's messages are posted.
	inject func(b *botProcess) error
	// check, if set, asserts more about each run.
	check func(t *testing.T, b *botProcess, r textRun)
	// scenario, if set, replaces the above: it starts its own bot, injects, posts and returns
	// the addressed messages (faultmatrix_durable_test.go).
	scenario func(t *testing.T, ctx context.Context) (*botProcess, []discordsim.MessageID)
}

type row struct {
	name                                              string
	runs, addressed, answered, explained, unexplained int
	duplicates                                        int
}

func (r *row) add(o row) {
	r.runs += o.runs
	r.addressed += o.addressed
	r.answered += o.answered
	r.explained += o.explained
	r.unexplained += o.unexplained
	r.duplicates += o.duplicates
}

// botTyping is the bot's typing events so far.
func (b *botProcess) botTyping() []discordsim.TypingEvent {
	var out []discordsim.TypingEvent
	for _, e := range b.dsim.Typing() {
		if e.User == b.dsim.BotID() {
			out = append(out, e)
		}
	}
	return out
}

// checkPromptCap: a turn declined at the prompt cap shows no typing indicator at all; an
// answered one shows it before its reply.
func checkPromptCap(t *testing.T, b *botProcess, r textRun) {
	typing := b.botTyping()[r.typing0:]
	for _, id := range r.ids {
		switch r.out[id] {
		case "explained":
			if len(typing) != 0 {
				t.Errorf("prompt_cap: %d typing indicators for a declined turn", len(typing))
			}
		case "answered":
			var reply time.Time
			for _, m := range b.dsim.Sent() {
				if m.ReplyTo() == id {
					reply = m.Timestamp
				}
			}
			if len(typing) == 0 || typing[0].At.After(reply) {
				t.Errorf("prompt_cap: answered turn without a typing indicator before the reply (%d)", len(typing))
			}
		}
	}
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
		{name: "prompt_cap", bot: "capped", runs: 5, addressed: 1, inject: noop, check: checkPromptCap},
		unansweredSend("send_timeout_before_effect", discordsim.HangBeforeEffect),
		unansweredSend("send_cut_after_effect", discordsim.CutAfterEffect),
		{name: "gateway_op9_quiet_channel", scenario: opQuietChannel},
		{name: "downtime_new_channel", scenario: downtimeNewChannel(banterBinary)},
		{name: "kill9_during_generation", scenario: kill9DuringGeneration(banterBinary)},
	}
}

// runTextRows runs the text rows, each on its kind of bot, and stops the bots.
func runTextRows(t *testing.T, ctx context.Context) []row {
	bots := map[string]*botProcess{}
	botFor := func(kind string) *botProcess {
		if b := bots[kind]; b != nil {
			return b
		}
		var opts []discordsim.Option
		extra, discordExtra := "activity:\n  replyCoalesceWindowSeconds: 0\n", ""
		switch kind {
		case "short_send":
			discordExtra = shortSendAttempt
		case "limited":
			opts = append(opts, discordsim.WithRouteLimit(discordsim.RouteMessageCreate, 5, 5*time.Second))
			extra += "  queueCapacity: 8\n"
		case "capped":
			extra += "  maxPromptsPerHour: 2\n  explicitReservePromptsPerHour: 0\n"
		}
		bots[kind] = startBot(t, ctx, opts, discordExtra, extra, nil)
		return bots[kind]
	}
	var rows []row
	rowIDs := map[int][]discordsim.MessageID{}
	rowBot := map[int]*botProcess{}
	defer func() {
		for kind, b := range bots {
			if err := b.stop(); err != nil {
				t.Errorf("%s bot: run returned %v", kind, err)
			}
		}
		// Duplicates are counted once the bots have stopped: nothing can be posted any more
		// (a retried create could still land after its turn's outcome was seen).
		for i := range rows {
			if b := rowBot[i]; b != nil {
				rows[i].duplicates = b.duplicates(rowIDs[i])
				if rows[i].duplicates > 0 {
					t.Errorf("%s: %d duplicate replies", rows[i].name, rows[i].duplicates)
				}
			}
		}
	}()
	seq := 0
	for _, f := range faults() {
		if f.scenario != nil {
			rows = append(rows, runScenario(t, ctx, f))
			continue
		}
		b := botFor(f.bot)
		r := row{name: f.name, runs: f.runs}
		rowBot[len(rows)] = b
		for run := 0; run < f.runs; run++ {
			if err := retryInject(ctx, func() error { return f.inject(b) }); err != nil {
				t.Fatalf("%s: inject: %v", f.name, err)
			}
			tr := textRun{typing0: len(b.botTyping())}
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
					tr.ids = append(tr.ids, id)
				}
			}
			out := waitOutcomes(ctx, b, tr.ids)
			tr.out = out
			rowIDs[len(rows)] = append(rowIDs[len(rows)], tr.ids...)
			for _, id := range tr.ids {
				if !r.tally(out[id]) {
					t.Errorf("%s run %d: addressed message %s neither answered nor explained", f.name, run, id)
				}
			}
			if f.check != nil {
				f.check(t, b, tr)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func TestFaultMatrix(t *testing.T) {
	// A guard for the whole matrix, well inside the test binary's own timeout: every wait in
	// it has its own failure guard (guard), so a healthy run never comes near this.
	budget := 20 * time.Minute
	if dl, ok := t.Deadline(); ok {
		budget = time.Until(dl) - 30*time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	// os/signal starts its loop goroutine on the process's first Notify and keeps it: start it
	// before the snapshot, so that it is not taken for a leak.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	signal.Stop(sig)
	before := goleak.IgnoreCurrent()

	// The text rows and the voice bots' rows share nothing (each bot has its own simulators,
	// folder and store) and mostly wait on the simulators and real-time audio: they run side by
	// side in three parallel subtests, the STT pipeline rows (the longest) split between two
	// bots of that mode, the text rows then the realtime bot's in the third, and are tallied
	// once all ended.
	var text, sttFirst, sttSecond, realtime []row
	stt := voiceFaults()
	half := len(stt) / 2
	t.Run("rows", func(t *testing.T) {
		t.Run("stt_pipeline_1", func(t *testing.T) {
			t.Parallel()
			sttFirst = runVoiceBot(t, ctx, "stt_pipeline", stt[:half])
		})
		t.Run("stt_pipeline_2", func(t *testing.T) {
			t.Parallel()
			sttSecond = runVoiceBot(t, ctx, "stt_pipeline", stt[half:])
		})
		t.Run("text_realtime", func(t *testing.T) {
			t.Parallel()
			t.Run("text", func(t *testing.T) { text = runTextRows(t, ctx) })
			t.Run("realtime", func(t *testing.T) { realtime = runVoiceBot(t, ctx, "realtime", realtimeFaults()) })
		})
	})
	rows := slices.Concat(text, sttFirst, sttSecond, realtime)

	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\truns\taddressed\tanswered\texplained\tunexplained\tduplicates")
	var total row
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", r.name, r.runs, r.addressed, r.answered, r.explained, r.unexplained, r.duplicates)
		total.add(r)
	}
	tw.Flush()
	fmt.Print(sb.String())

	// Nothing the bots and simulators started outlives them: every goroutine that was not
	// running before the matrix has ended (goleak, with a generous settling guard).
	if err := leakcheck.Find(30*time.Second, before); err != nil {
		t.Errorf("goroutines outlived the matrix: %v", err)
	}
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

// waitOutcomes waits until every id is answered or explained, checking after every log line
// the bot writes (the guard only bounds a broken run), and returns the outcomes; an id still
// without one is unexplained. Duplicates are not counted here (see runTextRows).
func waitOutcomes(ctx context.Context, b *botProcess, ids []discordsim.MessageID) map[discordsim.MessageID]string {
	g, cancel := guard(ctx)
	defer cancel()
	var out map[discordsim.MessageID]string
	b.logs.wait(g, func() bool {
		out = b.outcomes(ids)
		for _, id := range ids {
			if out[id] == "" {
				return false
			}
		}
		return true
	})
	return out
}
