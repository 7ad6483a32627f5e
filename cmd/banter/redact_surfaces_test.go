package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// urlSecret is the credential written into OPENAI_BASE_URL; no surface may show it.
const urlSecret = "Hunter2InTheURL"

// TestNoCredentialOnAnySurface: with credentials in OPENAI_BASE_URL (userinfo, or a key=
// query value), every surface that prints a URL or the configuration keeps them out: `banter
// config check` and its errors (as main prints them), `banter run`'s log and /metrics, the
// playground's printout, GET /api/info and /api/config, its bot log and /metrics, and the
// sandbox's printout and log. The model refuses every request, so that its errors (which
// carry the request's URL) reach the logs too.
func TestNoCredentialOnAnySurface(t *testing.T) {
	osim := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{Name: "refuse", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
		Fault: openaisim.Fault{Status: http.StatusBadRequest, Message: "refused"}}))
	for _, form := range []struct{ name, url string }{
		{"userinfo", strings.Replace(osim.BaseURL(), "http://", "http://banter:"+urlSecret+"@", 1)},
		{"query", osim.BaseURL() + "?key=" + urlSecret},
	} {
		t.Run(form.name, func(t *testing.T) {
			vars := map[string]string{"OPENAI_BASE_URL": form.url, "OPENAI_API_KEY": "sk-test", "DISCORD_TOKEN": "t"}
			surfaces := map[string]string{}
			configSurfaces(t, vars, surfaces)
			runSurfaces(t, vars, surfaces)
			playgroundSurfaces(t, vars, surfaces)
			sandboxSurfaces(t, vars, surfaces)
			host := strings.TrimPrefix(osim.BaseURL(), "http://")
			// The surfaces that name the model's URL (the logs and /metrics name it nowhere
			// today: they are searched all the same).
			for _, name := range []string{"config check", "config error", "playground printout", "GET /api/info", "GET /api/config", "sandbox printout"} {
				if !strings.Contains(surfaces[name], host) && !strings.Contains(surfaces[name], "REDACTED") {
					t.Errorf("%s does not show the model's URL at all (the check would pass vacuously):\n%s", name, surfaces[name])
				}
			}
			for name, text := range surfaces {
				if strings.Contains(text, urlSecret) {
					t.Errorf("%s shows the credential:\n%s", name, text)
				}
			}
		})
	}
}

// configSurfaces: `banter config check` on a valid config, and the error of an invalid one
// (the model URL in another scheme) as main prints it, for both config check and run.
func configSurfaces(t *testing.T, vars map[string]string, surfaces map[string]string) {
	out, errOut, err := runCLI(t, vars, "config", "check", "../../banter.example.yaml")
	if err != nil {
		t.Fatalf("config check: %v", err)
	}
	surfaces["config check"] = out + errOut
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("llm:\n  baseUrl: \""+strings.Replace(vars["OPENAI_BASE_URL"], "http", "ftp", 1)+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"config", "check", bad}, {"run", "-config", bad}} {
		_, _, err := runCLI(t, map[string]string{"DISCORD_TOKEN": "t", "OPENAI_API_KEY": "sk-test"}, args...)
		if err == nil {
			t.Fatalf("%v accepted a model URL that is not http(s)", args)
		}
		var printed bytes.Buffer
		reportError(&printed, err)
		surfaces["config error"] += printed.String()
	}
}

// runSurfaces runs `banter run` until it has answered an addressed message (with an apology:
// the model refuses), and keeps its log and /metrics.
func runSurfaces(t *testing.T, vars map[string]string, surfaces map[string]string) {
	dsim, ch, alice, cfgPath := newRunWorld(t, "llm:\n  maxRetries: 0\n")
	env := map[string]string{"DISCORD_TOKEN": dsim.Token(), "OPENAI_BASE_URL": vars["OPENAI_BASE_URL"], "OPENAI_API_KEY": vars["OPENAI_API_KEY"]}
	logs := &logbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, env2(env, []string{"run", "-config", cfgPath}, logs))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		surfaces["banter run log"] = logs.String()
	}()
	g2, stop := context.WithTimeout(ctx, 90*time.Second) // a failure guard
	defer stop()
	if err := simtest.WaitReady(g2, dsim, dsim.BotID()); err != nil {
		t.Fatalf("bot never logged in: %v\n%s", err, logs.String())
	}
	q, err := dsim.Post(g2, alice, ch, discordsim.MentionUser(dsim.BotID())+" are you there?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitMessage(g2, dsim, func(m discordsim.Message) bool { return m.Author == dsim.BotID() && m.ReplyTo() == q.ID }); err != nil {
		t.Fatalf("no answer: %v\n%s", err, logs.String())
	}
	surfaces["banter run /metrics"] = httpGet(t, "http://"+metricsAddr(logs.String())+"/metrics")
}

// env2 is an env for dispatch with vars, args, and out for both streams.
func env2(vars map[string]string, args []string, out io.Writer) env {
	return env{args: args, stdout: out, stderr: out, getenv: func(k string) string { return vars[k] }}
}

// playgroundSurfaces runs the playground on the model URL until the bot has answered a
// message there, and keeps its printout, /api/info, /api/config, its bot log and /metrics.
func playgroundSurfaces(t *testing.T, vars map[string]string, surfaces map[string]string) {
	state := t.TempDir()
	// The config it starts from names the URL too: the page shows that file.
	seed := filepath.Join(t.TempDir(), "seed.yaml")
	if err := os.WriteFile(seed, []byte("llm:\n  baseUrl: \""+vars["OPENAI_BASE_URL"]+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, printed := startCLI(t, map[string]string{"OPENAI_BASE_URL": vars["OPENAI_BASE_URL"], "OPENAI_API_KEY": vars["OPENAI_API_KEY"]},
		"playground", "-addr", "127.0.0.1:0", "-dir", state, "-config", seed)
	surfaces["playground printout"] = printed
	var info struct {
		BotID      string `json:"bot_id"`
		MetricsURL string `json:"metrics_url"`
	}
	httpDo(t, "GET", url+"/api/info", nil, &info)
	discord := sse(t, url+"/discord/events")
	httpDo(t, "POST", url+"/discord/messages", map[string]any{"as": "alice", "channel": "general",
		"content": fmt.Sprintf("<@%s> ping", info.BotID)}, nil)
	discord("the bot's answer", func(e map[string]any) bool {
		m, _ := e["message"].(map[string]any)
		return e["type"] == "message" && m["from_bot"] == true
	})
	surfaces["GET /api/info"] = httpGet(t, url+"/api/info")
	surfaces["GET /api/config"] = httpGet(t, url+"/api/config")
	httpDo(t, "GET", url+"/api/info", nil, &info)
	if info.MetricsURL != "" {
		surfaces["playground /metrics"] = httpGet(t, info.MetricsURL)
	}
	log, err := os.ReadFile(filepath.Join(state, "banter.log"))
	if err != nil {
		t.Fatal(err)
	}
	surfaces["playground bot log"] = string(log)
}

// sandboxSurfaces starts `banter sandbox` on the model URL, quits it, and keeps its printout
// and log.
func sandboxSurfaces(t *testing.T, vars map[string]string, surfaces map[string]string) {
	dir := t.TempDir()
	out := &logbuf.Buffer{}
	e := env2(map[string]string{"OPENAI_BASE_URL": vars["OPENAI_BASE_URL"], "OPENAI_API_KEY": vars["OPENAI_API_KEY"]},
		[]string{"sandbox", "-config", filepath.Join(dir, "none.yaml"), "-log", filepath.Join(dir, "bot.log")}, out)
	if err := os.WriteFile(filepath.Join(dir, "none.yaml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.stdin = strings.NewReader("/quit\n")
	if err := dispatch(context.Background(), e); err != nil {
		t.Fatalf("sandbox: %v\n%s", err, out.String())
	}
	surfaces["sandbox printout"] = out.String()
	log, err := os.ReadFile(filepath.Join(dir, "bot.log"))
	if err != nil {
		t.Fatal(err)
	}
	surfaces["sandbox log"] = string(log)
}

// httpGet returns the body of GET url.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return string(b)
}
