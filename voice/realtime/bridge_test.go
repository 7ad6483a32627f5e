package realtime

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/internal/logbuf"
	"github.com/banterbot/banter/llm"
	llmrt "github.com/banterbot/banter/llm/realtime"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/voice"
	"github.com/prometheus/client_golang/prometheus"
)

func TestParseStrategy(t *testing.T) {
	tests := []struct {
		in   string
		want Strategy
		err  bool
	}{
		{"native", StrategyNative, false},
		{"brain", StrategyBrain, false},
		{"", StrategyUnknown, true},
		{"Native", StrategyUnknown, true},
	}
	for _, tt := range tests {
		got, err := ParseStrategy(tt.in)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ParseStrategy(%q) = %v, %v", tt.in, got, err)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("String() = %q, want %q", got.String(), tt.in)
		}
	}
	if Strategy(200).String() != "unknown" {
		t.Error("out of range strategy")
	}
}

func TestFromConfig(t *testing.T) {
	c := config.Default()
	c.Voice.RealtimeReplyStrategy = "brain"
	c.Voice.OpenAIRealtime.ServerTurnDetection = true
	c.LLM.BaseURL = "http://127.0.0.1:1/v1"
	c.Secrets.OpenAIAPIKey = "sk-x"
	got, err := FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Strategy != StrategyBrain || got.Voice != c.Voice.OpenAIRealtime.Voice || !got.ServerTurnDetection ||
		got.SessionMax != time.Duration(c.Voice.OpenAIRealtime.SessionMaxMinutes)*time.Minute ||
		got.Realtime.URL != c.LLM.BaseURL || got.Realtime.APIKey != "sk-x" || got.Realtime.Model != c.Voice.OpenAIRealtime.Model {
		t.Errorf("FromConfig = %+v", got)
	}
	c.Voice.RealtimeReplyStrategy = "sometimes"
	if _, err := FromConfig(c); err == nil {
		t.Error("bad strategy accepted")
	}
}

// simConfig is a Bridge Config on the OpenAI simulator, logging to logs.
func simConfig(oa *openaisim.Server, s Strategy, logs *logbuf.Buffer) Config {
	log := slog.New(slog.NewJSONHandler(logs, nil))
	return Config{Realtime: llmrt.Config{URL: oa.BaseURL(), APIKey: "sk-test", Model: "gpt-realtime", Logger: log},
		Strategy: s, Instructions: "You are banter.", Voice: "marin",
		ReconnectBackoff: 10 * time.Millisecond, ConnectAttempts: 1, Logger: log, Metrics: NewMetrics(prometheus.NewRegistry())}
}

func TestStartErrors(t *testing.T) {
	oa := openaitest.Serve(t, openaisim.WithAPIKey("sk-right"))
	tests := []struct {
		name  string
		edit  func(*Config)
		check func(error) bool
	}{
		{"no strategy", func(c *Config) { c.Strategy = StrategyUnknown }, nil},
		{"no url", func(c *Config) { c.Realtime.URL = "" }, nil},
		{"bad key", func(c *Config) {}, func(err error) bool {
			var he *llmrt.HandshakeError
			return errors.As(err, &he) && he.Status == 401
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := simConfig(oa, StrategyNative, newTestLog())
			tt.edit(&cfg)
			b, err := Start(t.Context(), cfg)
			if err == nil {
				b.Close()
				t.Fatal("Start succeeded")
			}
			if tt.check != nil && !tt.check(err) {
				t.Errorf("error %v", err)
			}
		})
	}
}

// TestReconnectBackoff: the socket drops right after the session is set up,
// the first reconnects are refused (503), the Bridge backs off and retries
// until a session is up, restoring the instructions; the reply (the join
// greeting, brain) waits for it and is spoken.
func TestReconnectBackoff(t *testing.T) {
	oa := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Name: "drop", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
			Fault: openaisim.Fault{DropAfterEvents: 2}, Times: 1},
		openaisim.Rule{Name: "refuse", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
			Fault: openaisim.Fault{Status: 503}, Times: 2},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Text: "I am back."}},
	))
	client, err := llm.New(llm.Options{BaseURL: oa.BaseURL(), APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	logs := newTestLog()
	p, err := NewResponder(t.Context(), ResponderOptions{Config: simConfig(oa, StrategyBrain, logs), Gen: client, Model: "gpt-5-mini"},
		voice.SessionInfo{GuildID: "g1", ChannelID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Open the session's Bridge and let the socket drop before the reply.
	if _, err := p.bridge(t.Context()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(guard); len(logs.Events("realtime_socket_dropped")) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the drop was not noticed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sender := &frameSender{}
	pb, err := voice.NewPlayback(sender, pcm.Mono24k(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The reply waits for the new session.
	res, err := respondOnce(t, p, pb, &voice.Reply{Instructions: "Greet."})
	if err != nil || res.Spoken != "I am back." {
		t.Fatalf("Respond = %+v, %v", res, err)
	}
	if f, stops := sender.frames.Load(), sender.stops.Load(); f < 10 || stops != 1 {
		t.Errorf("sink: %d frames, %d stops", f, stops)
	}
	if n := len(logs.Events("realtime_socket_dropped")); n != 1 {
		t.Errorf("%d realtime_socket_dropped, want 1", n)
	}
	if n := len(logs.Events("realtime_reconnect_failed")); n != 2 {
		t.Errorf("%d realtime_reconnect_failed, want 2", n)
	}
	var upgrades, refused int
	for _, r := range oa.RequestsFor(openaisim.EndpointRealtime) {
		switch r.Status {
		case 101:
			upgrades++
		case 503:
			refused++
		}
	}
	if upgrades != 2 || refused != 2 {
		t.Errorf("%d upgrades, %d refused; want 2 and 2", upgrades, refused)
	}
	var updates []string
	for _, e := range oa.RealtimeEvents() {
		if e.Type == "session.update" {
			updates = append(updates, string(e.Raw))
		}
	}
	if len(updates) != 2 || !strings.Contains(updates[1], "You are banter.") {
		t.Errorf("session.update after reconnect: %v", updates)
	}
}

// FuzzCutText: transcripts come from the server; cutting them at any
// offset must not panic and must return a prefix of the words.
func FuzzCutText(f *testing.F) {
	f.Add("hello there my friend", 3, 10)
	f.Add("", 0, 0)
	f.Add("ünïcödé wörds", 5, 7)
	f.Add("a", -1, 5)
	f.Fuzz(func(t *testing.T, text string, played, total int) {
		got := cutText(text, played, total)
		if !strings.HasPrefix(strings.TrimSpace(text), got) && !strings.HasPrefix(text, got) {
			t.Fatalf("cutText(%q, %d, %d) = %q: not a prefix", text, played, total, got)
		}
		h := &history{max: 3, maxChars: 8}
		h.add("", "x", text, true)
		_ = h.summary()
	})
}
