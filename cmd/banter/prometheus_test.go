package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestRealPrometheus runs `banter run` against the simulators with a real Prometheus (Debian's
// prometheus package; `make test-deps` installs it) scraping its /metrics every 250 ms and
// loading deploy/prometheus/alerts.yml. After a text conversation, a voice turn and a gateway
// reconnect (resumed, then caught up) it
// evaluates every query of deploy/grafana/banter.json and every alert expression through
// Prometheus's HTTP API: none may fail, the panels that a conversation feeds must return
// series, every rule must be healthy in the rule manager, and no alert may fire.
// (Alerts are only checked for "firing": those with a `for` clause need minutes of the
// condition, so a passing run cannot prove they stay quiet; alerts_test.yml covers that.)
func TestRealPrometheus(t *testing.T) {
	// Not parallel: Prometheus scrapes every 250 ms with a 200 ms timeout, and one scrape that
	// times out marks every series stale, so the dashboard's instant queries come back empty.
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus not found (%v): run `make test-deps` or `apt-get install prometheus`", err)
	}
	vs := voicetest.Serve(t, voicesim.WithDAVE())
	dsim := simtest.Serve(t, discordsim.WithVoiceSim(vs))
	osim := openaitest.Serve(t)
	osim.QueueTranscripts("hey banter, what's the weather like today?")
	g := dsim.CreateGuild("g")
	text := dsim.CreateTextChannel(g, "general")
	vc := dsim.CreateVoiceChannel(g, "Voice")
	alice := dsim.CreateUser("alice")
	dsim.AddMember(g, alice)

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\n  voiceCaFile: %s\nstore:\n  dsn: %s\nactivity:\n  replyCoalesceWindowSeconds: 0\n",
		dsim.APIBaseURL(), vs.CAFile(), filepath.Join(dir, "banter.db"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// The metrics address comes from the environment, as in the container image.
	vars := map[string]string{"DISCORD_TOKEN": dsim.Token(), "OPENAI_BASE_URL": osim.BaseURL(),
		"OPENAI_API_KEY": "sk-test", "BANTER_METRICS_LISTEN": "127.0.0.1:0"}
	logs := runInBackground(t, cfgPath, vars)
	waitCtx, stop := context.WithTimeout(context.Background(), 120*time.Second)
	defer stop()
	if err := simtest.WaitReady(waitCtx, dsim, dsim.BotID()); err != nil {
		t.Fatalf("bot never logged in: %v\n%s", err, logs.String())
	}
	metricsAddr := waitLogField(waitCtx, t, logs, "metrics_listening", "addr")
	prom := startPrometheus(waitCtx, t, promBin, metricsAddr)

	// A text conversation: a mention and its reply.
	if _, err := dsim.Post(waitCtx, alice, text, "hey banter, are you running?"); err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitMessage(waitCtx, dsim, simtest.From(dsim.BotID())); err != nil {
		t.Fatalf("no text reply: %v\n%s", err, logs.String())
	}
	// A voice turn: join, ask by name, hear the answer.
	for !slices.ContainsFunc(dsim.Commands(""), func(c discordsim.Command) bool { return c.Name == "join" }) {
		sleepOrFail(waitCtx, t, "voice commands never registered", logs)
	}
	member, err := dsim.JoinVoiceMember(waitCtx, alice, vc, voicesim.MemberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Leave()
	if _, err := dsim.Post(waitCtx, alice, text, "!join"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs.String(), `"msg":"voice_session_start"`) {
		sleepOrFail(waitCtx, t, "no voice session", logs)
	}
	speech, err := os.ReadFile("testdata/hey-banter-weather.wav")
	if err != nil {
		t.Fatal(err)
	}
	samples, _, err := wav.Decode(nil, speech)
	if err != nil {
		t.Fatal(err)
	}
	if err := member.PlayPCM(waitCtx, samples); err != nil {
		t.Fatal(err)
	}
	if err := member.WaitHeard(waitCtx, string(dsim.BotID()), 25); err != nil {
		t.Fatalf("member heard no answer: %v\n%s", err, logs.String())
	}

	// A gateway gap: Discord asks for a reconnect, the session resumes, and the text pipeline
	// catches up on the channels it watches (the catch-up panel).
	simtest.WaitHeartbeat(t, dsim) // a fault before it meets discordgo's heartbeat race
	if err := dsim.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitGateway(waitCtx, dsim, discordsim.GatewayResumed, 1); err != nil {
		t.Fatalf("no resume after op 7: %v\n%s", err, logs.String())
	}

	// Wait until Prometheus holds at least two scrapes taken after the voice reply (rates need
	// two samples), then evaluate.
	prom.waitData(waitCtx, t, `count_over_time(banter_voice_frames_sent_total[1m]) >= 2 and changes(banter_voice_frames_sent_total[1m]) > 0`)
	prom.waitData(waitCtx, t, `count_over_time(banter_text_replies_total{outcome="sent"}[1m]) >= 2`)
	// The voice turn is counted when its reply has finished playing, after what the member heard.
	prom.waitData(waitCtx, t, `count_over_time(banter_voice_turns_total[1m]) >= 2`)
	prom.waitData(waitCtx, t, `count_over_time(banter_text_catchups_total[1m]) >= 2`)

	t.Run("dashboard", func(t *testing.T) { checkDashboard(waitCtx, t, prom) })
	t.Run("alerts", func(t *testing.T) { checkAlerts(waitCtx, t, prom) })
}

// mustHaveData lists the dashboard queries (by panel title and target refId) that a text
// reply plus a voice turn must feed. The others need failures, retries, realtime mode or load
// (reconnects, fallbacks, shed turns, DAVE rejections, ...), which this conversation has none of.
var mustHaveData = map[string][]string{
	"Decisions by outcome and reason (per second)": {"A"},
	"Messages seen, by result":                     {"A"},
	"Reply attempts, by outcome":                   {"A"},
	"Reply targeting":                              {"A"},
	"Reply phases p50":                             {"A"},
	"Reply phases p95":                             {"A"},
	"Model requests, by op and outcome":            {"A"},
	"Model latency p95, by op":                     {"A"},
	"Time to first token / byte p50":               {"A"},
	"Voice sessions and connections":               {"A"},
	"Voice turns, by outcome":                      {"A"},
	"Voice turn phases p50":                        {"A"},
	"Voice packets":                                {"A", "B"},
	"Send pacing":                                  {"A"},
	"DAVE (end-to-end encryption)":                 {"A"},
	"Voice late-frame ratio (target ≤ 0.5 %)":      {"A", "B"},
	"Voice time to first audio p95, by phase":      {"A"},
	"Shed and skipped work":                        {"B"},
	"Store calls, by op and result":                {"A"},
	"Gateway events, by event and close code":      {"A"},
	"Catch-ups after gateway gaps":                 {"A", "B"},
	"Discord REST 429s, by scope":                  {"A"},
	"Ready and linked libopus":                     {"A", "B"},
	"Memory":                                       {"A", "B"},
	"CPU":                                          {"A"},
	"Goroutines":                                   {"A"},
	"Spend by guild (USD per hour)":                {"A"},
	"Spend by model slot (USD per hour)":           {"A"},
	"Budget day's spend and caps":                  {"A", "C"},
}

func checkDashboard(ctx context.Context, t *testing.T, prom *promServer) {
	raw, err := os.ReadFile("../../deploy/grafana/banter.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	// Grafana's variables, as Grafana would expand them for this scrape interval and job.
	expand := strings.NewReplacer("$__rate_interval", "1m", "$job", "banter")
	queries, seen := 0, map[string]bool{}
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			queries++
			must := slices.Contains(mustHaveData[p.Title], target.RefID)
			seen[p.Title+"/"+target.RefID] = true
			res, err := prom.query(ctx, expand.Replace(target.Expr))
			if err != nil {
				t.Errorf("panel %q %s: %v", p.Title, target.RefID, err)
				continue
			}
			if must {
				if len(res) == 0 {
					t.Errorf("panel %q %s returned no series: %s", p.Title, target.RefID, target.Expr)
				}
			}
		}
	}
	for title, refs := range mustHaveData {
		for _, r := range refs {
			if !seen[title+"/"+r] {
				t.Errorf("panel %q %s is not on the dashboard", title, r)
			}
		}
	}
	t.Logf("%d dashboard queries evaluated", queries)
}

func checkAlerts(ctx context.Context, t *testing.T, prom *promServer) {
	raw, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			n++
			if _, err := prom.query(ctx, r.Expr); err != nil {
				t.Errorf("alert %s: %v", r.Alert, err)
			}
		}
	}
	if n < 8 {
		t.Fatalf("only %d alert rules", n)
	}
	// The healthy bot's own state: scraped, ready, and libopus exported.
	for _, q := range []string{`up{job="banter"} == 1`, `banter_ready == 1`, `banter_libopus_info{version=~"libopus 1\\.[3-9].*"} == 1`} {
		if res, err := prom.query(ctx, q); err != nil || len(res) == 0 {
			t.Errorf("%s: %d series, %v", q, len(res), err)
		}
	}
	// The rule manager has evaluated every rule at least once without error; none fires.
	var rules struct {
		Groups []struct {
			Rules []struct {
				Name      string `json:"name"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
				State     string `json:"state"`
			} `json:"rules"`
		} `json:"groups"`
	}
	for {
		if err := prom.get(ctx, "/api/v1/rules", nil, &rules); err != nil {
			t.Fatal(err)
		}
		evaluated, total := 0, 0
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				total++
				if r.Health != "unknown" {
					evaluated++
				}
			}
		}
		if total == n && evaluated == n {
			break
		}
		sleepOrFail(ctx, t, fmt.Sprintf("rule manager evaluated %d of %d rules (%d in alerts.yml)", evaluated, total, n), nil)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Health != "ok" {
				t.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
			}
			// Pending is allowed: on a loaded machine a few late frames or DAVE decrypt
			// failures while the group forms can meet a condition for a moment; none of the
			// alerts with a `for` can have held it long enough to fire.
			switch r.State {
			case "firing":
				t.Errorf("alert %s fires during a healthy conversation", r.Name)
			case "pending":
				t.Logf("alert %s is pending", r.Name)
			}
		}
	}
}

// promServer is a running Prometheus.
type promServer struct {
	base string
}

// startPrometheus runs prometheus with a temporary config that scrapes target every 250 ms as
// job "banter" and evaluates alerts.yml every 250 ms; it is stopped when the test ends.
func startPrometheus(ctx context.Context, t *testing.T, bin, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	rules, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), rules, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`global:
  scrape_interval: 250ms
  scrape_timeout: 200ms
  evaluation_interval: 250ms
rule_files: [alerts.yml]
scrape_configs:
  - job_name: banter
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out := &logbuf.Buffer{}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr,
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	p := &promServer{base: "http://" + addr}
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("prometheus exited: %v\n%s", err, out.String())
		case <-ctx.Done():
			t.Fatalf("prometheus never ready:\n%s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return p
}

// get calls the HTTP API and decodes its data field into v, or returns the API's error.
func (p *promServer) get(ctx context.Context, path string, params url.Values, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("prometheus %s: %w", path, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status    string          `json:"status"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("prometheus %s: %d: %w", path, resp.StatusCode, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("prometheus %s: %s: %s", path, body.ErrorType, body.Error)
	}
	return json.Unmarshal(body.Data, v)
}

// query evaluates an instant query now and returns its vector (a scalar counts as one
// sample).
func (p *promServer) query(ctx context.Context, q string) ([]json.RawMessage, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return []json.RawMessage{data.Result}, nil
	}
	var vec []json.RawMessage
	err := json.Unmarshal(data.Result, &vec)
	return vec, err
}

// waitData waits until q returns at least one series.
func (p *promServer) waitData(ctx context.Context, t *testing.T, q string) {
	t.Helper()
	for {
		res, err := p.query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(res) > 0 {
			return
		}
		sleepOrFail(ctx, t, "prometheus has no data for "+q, nil)
	}
}

// waitLogField waits for a JSON log event and returns one of its string fields.
func waitLogField(ctx context.Context, t *testing.T, logs *logbuf.Buffer, msg, field string) string {
	t.Helper()
	for {
		for _, line := range strings.Split(logs.String(), "\n") {
			var ev map[string]any
			if json.Unmarshal([]byte(line), &ev) == nil && ev["msg"] == msg {
				if s, ok := ev[field].(string); ok {
					return s
				}
			}
		}
		sleepOrFail(ctx, t, "no "+msg+" event", logs)
	}
}

// sleepOrFail pauses briefly between polls of a condition, failing the test (with the logs,
// if given) when ctx ends first.
func sleepOrFail(ctx context.Context, t *testing.T, what string, logs *logbuf.Buffer) {
	t.Helper()
	select {
	case <-ctx.Done():
		if logs != nil {
			t.Fatalf("%s:\n%s", what, logs.String())
		}
		t.Fatal(what)
	case <-time.After(50 * time.Millisecond):
	}
}
