package playground

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestListenPage(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port

	// Asked for and taken: an error naming the port.
	if _, err := listenPage(busy.Addr().String(), 0); err == nil || !strings.Contains(err.Error(), "port "+strconv.Itoa(port)+" is in use") {
		t.Errorf("busy -addr: %v", err)
	}
	// Not asked for: the next free port after the default.
	ln, err := listenPage("", port)
	if err != nil {
		t.Fatal(err)
	}
	got := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if got <= port || got >= port+portTries {
		t.Errorf("took port %d, want the next free one after %d", got, port)
	}
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:8080", "example.com:80", "8080"} {
		if ln, err := listenPage(addr, 0); err == nil {
			ln.Close()
			t.Errorf("%q: a non-loopback or malformed address was accepted", addr)
		}
	}
}

func TestHubCollectsEvents(t *testing.T) {
	hub := NewHub()
	logger := slog.New(hub.Handler()).With("guild_id", "g1").WithGroup("voice")
	logger.Debug("not_collected")
	logger.Info("reply_admission", "reason", "direct_mention", "confidence", 1.0, "latency", 1500*time.Microsecond,
		"err", errors.New("boom"), slog.Group("classifier", "model", "nano"))
	backlog, events, cancel := hub.Subscribe()
	defer cancel()
	if len(backlog) != 1 {
		t.Fatalf("backlog %+v", backlog)
	}
	e := backlog[0]
	want := map[string]any{"guild_id": "g1", "voice.reason": "direct_mention", "voice.confidence": 1.0,
		"voice.latency": 1.5, "voice.err": "boom", "voice.classifier.model": "nano"}
	for k, v := range want {
		if e.Attrs[k] != v {
			t.Errorf("%s = %#v, want %#v (all: %v)", k, e.Attrs[k], v, e.Attrs)
		}
	}
	if e.Name != "reply_admission" || e.Seq != 1 || e.Level != "INFO" {
		t.Errorf("event %+v", e)
	}
	logger.Warn("config_reload_rejected")
	select {
	case e := <-events:
		if e.Name != "config_reload_rejected" || e.Seq != 2 {
			t.Errorf("live event %+v", e)
		}
	default:
		t.Error("the live event did not reach the subscriber")
	}
}

func TestTeeHonoursEachLevel(t *testing.T) {
	var quiet, all []string
	q := recordHandler{level: slog.LevelWarn, got: &quiet}
	a := recordHandler{level: slog.LevelDebug, got: &all}
	l := slog.New(Tee(q, a))
	l.Info("info")
	l.Error("error")
	if strings.Join(quiet, ",") != "error" || strings.Join(all, ",") != "info,error" {
		t.Errorf("quiet %v, all %v", quiet, all)
	}
}

type recordHandler struct {
	level slog.Level
	got   *[]string
}

func (r recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r recordHandler) Handle(_ context.Context, rec slog.Record) error {
	*r.got = append(*r.got, rec.Message)
	return nil
}
func (r recordHandler) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r recordHandler) WithGroup(string) slog.Handler      { return r }

func TestSetKeysKeepsTheRest(t *testing.T) {
	in := []byte("# my config\nbot:\n  name: banter # who\nactivity:\n  replyLevelInitiative: 50 # eagerness\n")
	out, err := setKeys(in, map[string]any{
		"activity.replyLevelInitiative": float64(80),
		"voice.replyDecisionLlm.model":  "gpt-5-nano",
		"voice.autoJoin":                []map[string]string{{"guildId": "1", "channelId": "2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"# my config", "name: banter # who", "replyLevelInitiative: 80 # eagerness",
		"replyDecisionLlm:\n    model: gpt-5-nano", "guildId: \"1\""} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if _, err := setKeys(in, map[string]any{"bot.name.first": "x"}); err == nil {
		t.Error("a key under a scalar was accepted")
	}
	if _, err := setKeys(in, map[string]any{"bot..name": "x"}); err == nil {
		t.Error("an empty key part was accepted")
	}
	if out, err := setKeys(nil, map[string]any{"llm.model": "m"}); err != nil || !strings.Contains(string(out), "llm:\n  model: m") {
		t.Errorf("empty file: %q %v", out, err)
	}
}

func TestGuardRefusesOtherSites(t *testing.T) {
	// guard is exercised over HTTP by cmd/banter's tests; here its decisions on their own.
	ok := func(host, origin string) bool {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "http://"+host+"/api/info", nil)
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })).ServeHTTP(rec, r)
		return rec.Code == http.StatusOK
	}
	cases := []struct {
		host, origin string
		want         bool
	}{
		{"127.0.0.1:8080", "", true},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"localhost:8080", "http://localhost:8080", true},
		{"127.0.0.1:8080", "http://evil.example", false},
		{"evil.example:8080", "", false}, // DNS rebinding
		{"127.0.0.1:8080", "http://127.0.0.1:9999", false},
	}
	for _, c := range cases {
		if got := ok(c.host, c.origin); got != c.want {
			t.Errorf("host %q origin %q: allowed %v, want %v", c.host, c.origin, got, c.want)
		}
	}
}

// FuzzSetKeys: any file content and any key from the page give a YAML document or an error,
// never a panic; a key that was set reads back.
func FuzzSetKeys(f *testing.F) {
	f.Add([]byte("bot:\n  name: banter\n"), "activity.replyLevelInitiative", "80")
	f.Add([]byte(""), "voice.replyDecisionLlm.model", "gpt-5-nano")
	f.Add([]byte("- a\n- b\n"), "a.b", "x")
	f.Add([]byte("a: [1, 2]\n"), "a.b", "x")
	f.Add([]byte("a: &x {b: 1}\nc: *x\n"), "c.b", "2")
	f.Fuzz(func(t *testing.T, data []byte, key, value string) {
		out, err := setKeys(data, map[string]any{key: value})
		if err != nil {
			return
		}
		var doc map[string]any
		if yaml.Unmarshal(out, &doc) != nil {
			return // a document with other top-level kinds, kept as it was
		}
		if got, ok := lookup(doc, key); ok && fmt.Sprint(got) != value {
			t.Errorf("set %q = %q, read back %#v from:\n%s", key, value, got, out)
		}
	})
}

// TestFreshKeys: a fresh playground config turns memory on with a short quiet spell, unless the
// config it starts from sets those keys (then its values stay).
func TestFreshKeys(t *testing.T) {
	for _, c := range []struct {
		seed           string
		enabled, quiet any
	}{
		{"", true, 5},
		{"bot:\n  name: x\n", true, 5},
		{"memory:\n  enabled: false\n", nil, 5},
		{"memory:\n  quietSeconds: 60\n  batchMessages: 1\n", true, nil},
		{"not: [valid", true, 5},
	} {
		got := freshKeys([]byte(c.seed))
		if got["memory.enabled"] != c.enabled || got["memory.quietSeconds"] != c.quiet || got["permissions.allowInitiativeReplies"] != true {
			t.Errorf("seed %q: %v", c.seed, got)
		}
	}
}
