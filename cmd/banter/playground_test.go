package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// httpDo makes one request and decodes a JSON answer into out (when not nil).
func httpDo(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, url, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// TestRunWithoutTokenStartsPlayground: `banter run` (make run) with nothing set says why it
// starts the playground, what it started, and serves the page.
func TestRunWithoutTokenStartsPlayground(t *testing.T) {
	url, printed := startCLI(t, nil, "run")
	for _, want := range []string{"DISCORD_TOKEN is not set", "discord.com/developers/applications", "Message Content intent",
		"banter playground: open http://127.0.0.1:", "demo brain", "config ", "control API", "real server"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the output lacks %q:\n%s", want, printed)
		}
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(page, []byte("banter <span>playground</span>")) {
		t.Errorf("GET %s: %d\n%s", url, resp.StatusCode, page)
	}
	for _, asset := range []string{"/static/app.js", "/static/voice.js", "/static/charts.js", "/static/capture-worklet.js", "/static/memory.js", "/static/style.css"} {
		resp, err := http.Get(url + asset)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", asset, resp.StatusCode)
		}
	}
}

// TestPlaygroundFlags: a taken -addr is an error naming the port; a non-loopback address and
// a bad config are refused with what is wrong.
func TestPlaygroundFlags(t *testing.T) {
	t.Chdir(t.TempDir())
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	_, _, err = runCLI(t, nil, "playground", "-addr", busy.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "port "+port+" is in use") {
		t.Errorf("busy port: %v", err)
	}
	if _, _, err := runCLI(t, nil, "playground", "-addr", "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("non-loopback: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("activity:\n  replyLevelInitiative: 500\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, nil, "playground", "-config", bad)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "activity.replyLevelInitiative") {
		t.Errorf("bad config: exit %d, %v", exitCode(err), err)
	}
}

// TestPlaygroundScriptable: what the page does, a script does over HTTP: post a mention through
// the Discord control API (proxied at /discord/), read the bot's answer and its decisions from
// the event streams, edit the config through /api/config (a bad edit is refused naming the
// field, the bot keeps its config), read /metrics.
func TestPlaygroundScriptable(t *testing.T) {
	url := startPlayground(t, nil)
	var info struct {
		BotID string `json:"bot_id"`
		Demo  bool   `json:"demo"`
	}
	httpDo(t, "GET", url+"/api/info", nil, &info)
	if !info.Demo || info.BotID == "" {
		t.Fatalf("info %+v", info)
	}
	decisions := sse(t, url+"/api/events")
	discord := sse(t, url+"/discord/events")

	var posted struct{ ID string }
	if st := httpDo(t, "POST", url+"/discord/messages", map[string]any{"as": "bob", "channel": "general",
		"content": fmt.Sprintf("<@%s> how are you?", info.BotID)}, &posted); st != 201 {
		t.Fatalf("post: %d", st)
	}
	discord("the bot's reply", func(e map[string]any) bool {
		m, _ := e["message"].(map[string]any)
		return e["type"] == "message" && m["from_bot"] == true && m["reply_to"] == posted.ID
	})
	discord("the bot typing", func(e map[string]any) bool { return e["type"] == "typing" && e["user_id"] == info.BotID })
	attr := func(e map[string]any, k string) any { a, _ := e["attrs"].(map[string]any); return a[k] }
	decisions("Stage A", func(e map[string]any) bool {
		return e["event"] == "reply_admission" && attr(e, "turnId") == posted.ID && attr(e, "reason") == "direct_mention"
	})
	decisions("Stage B", func(e map[string]any) bool {
		return e["event"] == "reply_accepted" && attr(e, "turnId") == posted.ID
	})

	var v struct {
		Outcome string         `json:"outcome"`
		Error   string         `json:"error"`
		Values  map[string]any `json:"values"`
		File    string         `json:"file"`
	}
	if st := httpDo(t, "POST", url+"/api/config", map[string]any{"set": map[string]any{"voice.replyEagerness": 70}}, &v); st != 200 || v.Outcome != "reloaded" || v.Values["voice.replyEagerness"] != 70.0 {
		t.Fatalf("edit: %d %+v", st, v)
	}
	decisions("the bot's own reload", func(e map[string]any) bool { return e["event"] == "config_reloaded" })
	if st := httpDo(t, "POST", url+"/api/config", map[string]any{"set": map[string]any{"voice.mode": "loud"}}, &v); st != 422 ||
		v.Outcome != "rejected" || !strings.Contains(v.Error, "voice.mode") || !strings.Contains(v.Error, "stt_pipeline, realtime") ||
		v.Values["voice.mode"] != "stt_pipeline" || strings.Contains(v.File, "loud") {
		t.Errorf("bad edit: %d %+v", st, v)
	}
	decisions("the bot's refusal", func(e map[string]any) bool { return e["event"] == "config_reload_rejected" })
	if st := httpDo(t, "POST", url+"/api/config", map[string]any{"set": map[string]any{"voice.replyEagerness": 70}}, &v); st != 200 || v.Outcome != "unchanged" {
		t.Errorf("same value again: %d %+v", st, v)
	}
	if st := httpDo(t, "POST", url+"/api/config", map[string]any{"nope": 1}, nil); st != 400 {
		t.Errorf("malformed edit: %d", st)
	}
	req, _ := http.NewRequest("POST", url+"/api/config", strings.NewReader(`{"set":{"voice.replyEagerness":10}}`))
	req.Header.Set("Origin", "http://evil.example")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("cross-site edit: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(`banter_decisions_total{outcome="allow",pipeline="text",reason="direct_mention",stage="A"}`)) {
		t.Errorf("/metrics lacks the decision:\n%.2000s", body)
	}
}

// sse follows a text/event-stream of JSON events; the returned function waits for the first
// event (from the start of the stream) that matches.
func sse(t *testing.T, url string) func(what string, match func(map[string]any) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	events := make(chan map[string]any, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e map[string]any
				if json.Unmarshal([]byte(data), &e) == nil {
					select {
					case events <- e:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	var seen []map[string]any
	return func(what string, match func(map[string]any) bool) {
		t.Helper()
		for _, e := range seen {
			if match(e) {
				return
			}
		}
		guard := time.NewTimer(90 * time.Second) // a failure guard, not a timing requirement
		defer guard.Stop()
		for {
			select {
			case e := <-events:
				seen = append(seen, e)
				if match(e) {
					return
				}
			case <-guard.C:
				t.Fatalf("%s: no %s event", url, what)
			}
		}
	}
}

// TestPlaygroundRealModels: with OPENAI_BASE_URL (or OPENAI_API_KEY) the playground runs no demo
// brain: the bot uses the given endpoint, and the page says which model it runs.
func TestPlaygroundRealModels(t *testing.T) {
	osim := openaitest.Serve(t)
	url := startPlayground(t, map[string]string{"OPENAI_BASE_URL": osim.BaseURL(), "OPENAI_API_KEY": "sk-real"})
	var info struct {
		BotID    string `json:"bot_id"`
		Demo     bool   `json:"demo"`
		Model    string `json:"model"`
		ModelURL string `json:"model_url"`
		OpenAI   string `json:"openai_url"`
	}
	httpDo(t, "GET", url+"/api/info", nil, &info)
	if info.Demo || info.Model != "gpt-5-mini" || info.ModelURL != osim.BaseURL() || info.OpenAI != "" {
		t.Errorf("info %+v", info)
	}
	if st := httpDo(t, "POST", url+"/openai/_sim/script", map[string]any{"transcripts": []string{"x"}}, nil); st != 404 {
		t.Errorf("the demo brain's routes are served with real models: %d", st)
	}
	discord := sse(t, url+"/discord/events")
	httpDo(t, "POST", url+"/discord/messages", map[string]any{"as": "alice", "channel": "general",
		"content": fmt.Sprintf("<@%s> ping", info.BotID)}, nil)
	// The plain simulator (no demo brain) echoes: the bot asked the endpoint it was given.
	discord("the reply from the given endpoint", func(e map[string]any) bool {
		m, _ := e["message"].(map[string]any)
		c, _ := m["content"].(string)
		return e["type"] == "message" && m["from_bot"] == true && strings.HasPrefix(c, "You said:")
	})
	if len(osim.Requests()) == 0 {
		t.Error("the endpoint got no request")
	}
}

// TestRunRequireToken: a deployment (the container image sets BANTER_REQUIRE_TOKEN) without a
// token stops with what to set, exit status 2, instead of starting a playground nobody reaches.
func TestRunRequireToken(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
	}{
		{"flag", nil, []string{"run", "-require-token"}},
		{"env", map[string]string{"BANTER_REQUIRE_TOKEN": "1"}, []string{"run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, _, err := runCLI(t, tc.vars, tc.args...)
			if exitCode(err) != 2 || !strings.Contains(err.Error(), "discord.com/developers/applications") {
				t.Fatalf("want exit 2 with what to set, got %d: %v", exitCode(err), err)
			}
			if strings.Contains(stdout, "playground") {
				t.Errorf("a playground was started:\n%s", stdout)
			}
		})
	}
}

// TestPlaygroundGeminiDemo: with voice.realtime.provider gemini and no Gemini key, the
// playground points voice.geminiRealtime at the demo brain's Gemini face (a kind gemini
// provider on the embedded simulator, the demo key), and the bot starts on that config.
func TestPlaygroundGeminiDemo(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "seed.yaml")
	if err := os.WriteFile(seed, []byte("voice:\n  mode: realtime\n  realtime:\n    provider: gemini\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	t.Cleanup(func() { keepBotLog(t, filepath.Join(state, "banter.log")) })
	url, _ := startCLI(t, nil, "playground", "-addr", "127.0.0.1:0", "-dir", state, "-config", seed)
	var info struct {
		BotID string `json:"bot_id"`
		Demo  bool   `json:"demo"`
	}
	httpDo(t, "GET", url+"/api/info", nil, &info)
	if !info.Demo || info.BotID == "" {
		t.Fatalf("info %+v", info)
	}
	written, err := os.ReadFile(filepath.Join(state, "playground.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(filepath.Join(state, "playground.yaml"), func(k string) string {
		if k == config.EnvGeminiAPIKey {
			return "sk-playground-demo"
		}
		return ""
	})
	if err != nil {
		t.Fatalf("the playground's config: %v\n%s", err, written)
	}
	p, err := cfg.Provider(cfg.Voice.GeminiRealtime.Provider)
	if err != nil || p.Kind != config.KindGemini || !strings.HasPrefix(p.BaseURL, "http://127.0.0.1:") || p.APIKey == "" {
		t.Errorf("voice.geminiRealtime's provider %+v, %v; want the demo brain's Gemini face\n%s", p, err, written)
	}
}
