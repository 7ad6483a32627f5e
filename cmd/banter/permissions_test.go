package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/world"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestRunNoReplyWhereBotMayNotSend runs `banter run` in a server the bot does not own, where a
// channel overwrite denies it Send Messages in #muted. A mention there gets no reply: one
// reply_skipped reason=missing_permissions line, no create sent to Discord (so none retried),
// no model call (no spend), counted no_permission; a mention in #open is answered.
func TestRunNoReplyWhereBotMayNotSend(t *testing.T) {
	r := runWhereDenied(t, "muted", world.PermSendMessages, "open")
	dsim, alice, muted, open, osim, logs, waitCtx := r.dsim, r.alice, r.denied, r.others[0], r.osim, r.logs, r.ctx
	if _, err := dsim.Post(waitCtx, alice, muted, "hey banter, can you hear me in here?"); err != nil {
		t.Fatal(err)
	}
	waitLogLine(waitCtx, t, logs, `"msg":"reply_skipped"`, `"reason":"missing_permissions"`, `"channel_id":"`+string(muted)+`"`)
	asked, err := dsim.Post(waitCtx, alice, open, "hey banter, and over here?")
	if err != nil {
		t.Fatal(err)
	}
	reply, err := simtest.WaitMessage(waitCtx, dsim, simtest.From(dsim.BotID()))
	if err != nil {
		t.Fatalf("no reply in #open: %v\n%s", err, logs.String())
	}
	if reply.ReplyTo() != asked.ID || reply.ChannelID != open {
		t.Errorf("reply in %s to %q, want one in #open to %q", reply.ChannelID, reply.ReplyTo(), asked.ID)
	}

	for _, q := range dsim.RESTLog() {
		if q.Method == http.MethodPost && strings.Contains(q.Path, "/channels/"+string(muted)+"/messages") {
			t.Errorf("create sent to #muted: %s answered %d", q.Path, q.Status)
		}
	}
	if n := strings.Count(logs.String(), `"msg":"reply_skipped"`); n != 1 {
		t.Errorf("%d reply_skipped lines, want 1", n)
	}
	for _, r := range osim.Requests() {
		if strings.Contains(r.Prompt, "can you hear me in here") {
			t.Errorf("model asked about the #muted mention (%s): spend where nothing can be sent", r.Path)
		}
	}
	body := httpGet(t, "http://"+metricsAddr(logs.String())+"/metrics")
	if want := `banter_text_replies_total{outcome="no_permission"} 1`; !strings.Contains(body, want) {
		t.Errorf("metrics lack %s", want)
	}
}

// runLoggedIn runs `banter run -config cfgPath` on dsim and osim (runInBackground) and waits
// until it has logged in. The context it returns is the test's failure guard (60 s, not a
// timing requirement), for the waits that follow.
func runLoggedIn(t *testing.T, dsim *discordsim.Server, osim *openaisim.Server, cfgPath string) (context.Context, *logbuf.Buffer) {
	t.Helper()
	vars := map[string]string{"DISCORD_TOKEN": dsim.Token(), "OPENAI_BASE_URL": osim.BaseURL(), "OPENAI_API_KEY": "sk-test"}
	logs := runInBackground(t, cfgPath, vars)
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(stop)
	if err := simtest.WaitReady(ctx, dsim, dsim.BotID()); err != nil {
		t.Fatalf("bot never logged in: %v\n%s", err, logs.String())
	}
	return ctx, logs
}

// deniedRun is `banter run` logged in to a server alice owns, where a member overwrite denies
// the bot some permissions in one channel.
type deniedRun struct {
	dsim   *discordsim.Server
	osim   *openaisim.Server
	alice  discordsim.UserID
	denied discordsim.ChannelID   // where the bot is denied
	others []discordsim.ChannelID // the other channels asked for, in order
	logs   *logbuf.Buffer
	ctx    context.Context // a failure guard for waits, not a timing requirement
}

// runWhereDenied creates the server (channel denied, denying the bot deny, and the channels
// named others) and runs banter until it logged in.
func runWhereDenied(t *testing.T, denied string, deny uint64, others ...string) *deniedRun {
	t.Helper()
	r := &deniedRun{dsim: simtest.Serve(t), osim: openaitest.Serve(t)}
	r.alice = r.dsim.CreateUser("alice")
	g := r.dsim.CreateGuildOwnedBy("Alice's", r.alice)
	r.denied = r.dsim.CreateTextChannel(g, denied)
	for _, name := range others {
		r.others = append(r.others, r.dsim.CreateTextChannel(g, name))
	}
	o := world.Overwrite{ID: string(r.dsim.BotID()), Type: world.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(deny, 10)}
	if err := r.dsim.SetChannelOverwrite(r.denied, o); err != nil {
		t.Fatal(err)
	}
	r.ctx, r.logs = runLoggedIn(t, r.dsim, r.osim, writeRunConfig(t, r.dsim, ""))
	return r
}

// runInBackground runs `banter run -config cfgPath` with the environment vars until the test
// ends (then it must stop without an error), and returns its log.
func runInBackground(t *testing.T, cfgPath string, vars map[string]string) *logbuf.Buffer {
	t.Helper()
	logs := &logbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, env{args: []string{"run", "-config", cfgPath}, stdout: io.Discard, stderr: logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return logs
}

// waitLogLine waits for a log line holding every fragment and returns it, failing the test
// with the logs when ctx ends first.
func waitLogLine(ctx context.Context, t *testing.T, logs *logbuf.Buffer, fragments ...string) string {
	t.Helper()
	for {
		for _, line := range strings.Split(logs.String(), "\n") {
			ok := line != ""
			for _, f := range fragments {
				ok = ok && strings.Contains(line, f)
			}
			if ok {
				return line
			}
		}
		sleepOrFail(ctx, t, "no log line with "+strings.Join(fragments, " "), logs)
	}
}

// TestRunReplyWhereBotMayNotReadHistory: through `banter run`, a mention in a channel where an
// overwrite denies the bot Read Message History (it may still post) is answered as a plain
// message opened by the asker's mention; no create is refused (the state knew), and the
// fallback is counted.
func TestRunReplyWhereBotMayNotReadHistory(t *testing.T) {
	r := runWhereDenied(t, "quiet", world.PermReadMessageHistory)
	dsim, alice, quiet, logs, waitCtx := r.dsim, r.alice, r.denied, r.logs, r.ctx
	// The guild's GUILD_CREATE has reached the state when its catch-up says it may not read.
	waitLogLine(waitCtx, t, logs, `"msg":"catch_up"`, `"channel_id":"`+string(quiet)+`"`, `"result":"no_access"`)
	if _, err := dsim.Post(waitCtx, alice, quiet, "hey banter, what do you think?"); err != nil {
		t.Fatal(err)
	}
	reply, err := simtest.WaitMessage(waitCtx, dsim, simtest.From(dsim.BotID()))
	if err != nil {
		t.Fatalf("no answer in #quiet: %v\n%s", err, logs.String())
	}
	if reply.ChannelID != quiet || reply.ReplyTo() != "" || !strings.HasPrefix(reply.Content, discordsim.MentionUser(alice)+" ") {
		t.Errorf("answer %q in %s replying to %q, want a plain message in #quiet opened by alice's mention",
			reply.Content, reply.ChannelID, reply.ReplyTo())
	}
	for _, q := range dsim.RESTLog() {
		if strings.Contains(q.Path, "/channels/"+string(quiet)+"/") && q.Status >= 400 {
			t.Errorf("%s %s answered %d", q.Method, q.Path, q.Status)
		}
	}
	body := httpGet(t, "http://"+metricsAddr(logs.String())+"/metrics")
	if want := `banter_text_fallbacks_total{reason="no_read_history"} 1`; !strings.Contains(body, want) {
		t.Errorf("metrics lack %s", want)
	}
}
