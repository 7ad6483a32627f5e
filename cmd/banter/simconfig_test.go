package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestSimWrittenConfigRunsBanter: `banter sim discord -write-config F`
// then `banter run -config F` with only the printed DISCORD_TOKEN (and the
// OpenAI key) in the environment; a member speaks through the control API
// and the bot's reply is read back through it.
func TestSimWrittenConfigRunsBanter(t *testing.T) {
	osim := openaitest.Serve(t)
	dir := t.TempDir()
	// The written config keeps banter's defaults for everything else, such as
	// store.dsn (data/banter.db, relative): run from a scratch directory.
	t.Chdir(dir)
	cfgPath := filepath.Join(dir, "banter.sim.yaml")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	pr, pw := io.Pipe()
	simDone := make(chan error, 1)
	go func() {
		err := dispatch(ctx, env{args: []string{"sim", "discord", "-write-config", cfgPath, "-openai-url", osim.BaseURL(), "-bot-token", "sim-bot-token"},
			stdout: pw, stderr: io.Discard, getenv: func(string) string { return "" }})
		pw.Close()
		simDone <- err
	}()
	defer func() {
		cancel()
		if err := <-simDone; err != nil {
			t.Errorf("sim: %v", err)
		}
	}()
	var ctl, runLine string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "control API"); ok {
			ctl = strings.Fields(v)[0]
		}
		if v, ok := strings.CutPrefix(line, "run banter"); ok {
			runLine = strings.TrimSpace(v)
		}
		if line == "serving until interrupted" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	token, ok := strings.CutPrefix(strings.Fields(runLine + " x")[0], "DISCORD_TOKEN=")
	if ctl == "" || !ok || token != "sim-bot-token" || !strings.HasSuffix(runLine, "-config "+cfgPath) {
		t.Fatalf("printout: control %q, run line %q", ctl, runLine)
	}

	logs := &logbuf.Buffer{}
	vars := map[string]string{"DISCORD_TOKEN": token, "OPENAI_API_KEY": "sk-test"}
	runDone := make(chan error, 1)
	runCtx, stopRun := context.WithCancel(ctx)
	go func() {
		runDone <- dispatch(runCtx, env{args: []string{"run", "-config", cfgPath}, stdout: io.Discard, stderr: logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	defer func() {
		stopRun()
		<-runDone
	}()

	post := func(method, url string, body any, out any) int {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	// Wait until the bot is connected (its gateway session shows in the log).
	deadline := time.Now().Add(30 * time.Second)
	for {
		var log struct {
			Gateway []struct{ Kind, User string } `json:"gateway"`
		}
		post("GET", ctl+"/requests", nil, &log)
		if identified(log.Gateway) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bot never connected:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var m struct{ ID string }
	if st := post("POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": "hey banter, are you there?"}, &m); st != 201 {
		t.Fatalf("post: %d", st)
	}
	for {
		var replies []struct {
			Content string `json:"content"`
			ReplyTo string `json:"reply_to"`
		}
		post("GET", ctl+"/messages?from=bot", nil, &replies)
		if len(replies) > 0 {
			if replies[0].ReplyTo != m.ID || replies[0].Content == "" {
				t.Errorf("bot reply %+v, want a reply to %s", replies[0], m.ID)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no bot reply:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// identified reports whether the control API's gateway log shows an
// Identify (the bot logged in).
func identified(events []struct{ Kind, User string }) bool {
	for _, e := range events {
		if e.Kind == "identified" {
			return true
		}
	}
	return false
}
