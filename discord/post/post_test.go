package post_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/post"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type fixture struct {
	sim     *discordsim.Server
	channel discordsim.ChannelID
	sender  *post.Sender
	logs    *syncBuffer
}

// newFixture points a real discordgo session (REST only) at the Discord simulator.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	sim := simtest.Serve(t)
	g := sim.CreateGuild("g")
	ch := sim.CreateTextChannel(g, "log")
	sess, err := discord.NewSession(discord.SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	s := post.New(sess, post.Options{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Logger: logger})
	return &fixture{sim: sim, channel: ch, sender: s, logs: logs}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestCreateRetriesServerErrors: one 500, 503 or 504 on send is retried and the message is
// posted exactly once, even when the failed attempt had in fact created it (the answer was
// lost): the retry carries the same nonce with enforce_nonce.
func TestCreateRetriesServerErrors(t *testing.T) {
	tests := []struct {
		name   string
		inject func(*discordsim.Server)
	}{
		{"500 before commit", func(s *discordsim.Server) {
			s.FailNext(discordsim.RouteMessageCreate, 1, http.StatusInternalServerError)
		}},
		{"503 before commit", func(s *discordsim.Server) {
			s.FailNext(discordsim.RouteMessageCreate, 1, http.StatusServiceUnavailable)
		}},
		{"504 after commit", func(s *discordsim.Server) {
			s.FailNextAfterCommit(discordsim.RouteMessageCreate, 1, http.StatusGatewayTimeout)
		}},
		{"500 after commit twice", func(s *discordsim.Server) {
			s.FailNextAfterCommit(discordsim.RouteMessageCreate, 2, http.StatusInternalServerError)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.inject(f.sim)
			m, err := f.sender.Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "t1"})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			sent := f.sim.Sent()
			if len(sent) != 1 || string(sent[0].ID) != m.ID || sent[0].Content != "hello" {
				t.Fatalf("simulator holds %+v, want exactly the one message %s", sent, m.ID)
			}
			if !strings.Contains(f.logs.String(), `"msg":"send_retry"`) {
				t.Errorf("retry not logged:\n%s", f.logs.String())
			}
		})
	}
}

// TestCreateLossIsLogged: when every attempt fails, the loss is logged with the turn id; a
// 4xx is not retried.
func TestCreateLossIsLogged(t *testing.T) {
	f := newFixture(t)
	f.sim.FailNext(discordsim.RouteMessageCreate, 3, http.StatusServiceUnavailable)
	if _, err := f.sender.Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "turn-42"}); err == nil {
		t.Fatal("create succeeded through three 503s")
	}
	logs := f.logs.String()
	if !strings.Contains(logs, `"msg":"send_lost"`) || !strings.Contains(logs, `"turn_id":"turn-42"`) {
		t.Errorf("loss not logged with the turn id:\n%s", logs)
	}
	if n := len(f.sim.Sent()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
	// A refusal (400: unknown reply target) is final and not a loss.
	before := strings.Count(f.logs.String(), "send_retry")
	if _, err := f.sender.Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "x", ReplyTo: "1234567890123456789"}); err == nil {
		t.Fatal("reply to a missing message succeeded")
	}
	if after := strings.Count(f.logs.String(), "send_retry"); after != before {
		t.Errorf("a 400 was retried")
	}
}

// TestPostSplitsAndNeverPings: a long line is split into messages of at most 2,000 characters,
// and "@everyone" in the text pings nobody.
func TestPostSplitsAndNeverPings(t *testing.T) {
	f := newFixture(t)
	long := "@everyone listen: " + strings.Repeat("word ", 900) // ~4,500 characters
	ids, err := f.sender.Post(ctx(t), string(f.channel), long, "voice-log")
	if err != nil {
		t.Fatal(err)
	}
	sent := f.sim.Sent()
	if len(ids) != 3 || len(sent) != 3 {
		t.Fatalf("%d ids, %d messages; want 3", len(ids), len(sent))
	}
	for _, m := range sent {
		if n := utf8.RuneCountInString(m.Content); n > post.MaxLen {
			t.Errorf("part of %d characters", n)
		}
		if m.MentionEveryone {
			t.Errorf("message %s pings @everyone", m.ID)
		}
		if m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0 {
			t.Errorf("allowed_mentions = %+v, want parse []", m.AllowedMentions)
		}
	}
}

// dropProxy stands between the sender and the Discord simulator and cuts the TCP connection of
// the next message creates without an HTTP answer: before forwarding them (the create never
// reached Discord) or after (it happened, its answer was lost). Everything else is forwarded.
type dropProxy struct {
	mu          sync.Mutex
	before      int // creates to drop before forwarding
	after       int // creates to forward, then drop the answer of
	dropped     int
	srv         *httptest.Server
	upstream    *url.URL
	passthrough *httputil.ReverseProxy
}

func newDropProxy(t *testing.T, sim *discordsim.Server) *dropProxy {
	t.Helper()
	up, err := url.Parse(sim.APIBaseURL())
	if err != nil {
		t.Fatal(err)
	}
	up.Path = ""
	p := &dropProxy{upstream: up, passthrough: httputil.NewSingleHostReverseProxy(up)}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// apiURL is the simulator's API base URL through the proxy.
func (p *dropProxy) apiURL(sim *discordsim.Server) string {
	u, _ := url.Parse(sim.APIBaseURL())
	return p.srv.URL + u.Path
}

func (p *dropProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	create := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages")
	p.mu.Lock()
	before, after := create && p.before > 0, create && p.before == 0 && p.after > 0
	switch {
	case before:
		p.before--
		p.dropped++
	case after:
		p.after--
		p.dropped++
	}
	p.mu.Unlock()
	if !before && !after {
		p.passthrough.ServeHTTP(w, r)
		return
	}
	if after {
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.RequestURI = p.upstream.Scheme, p.upstream.Host, ""
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	panic(http.ErrAbortHandler) // close the connection without an answer
}

// TestCreateRetriesNetworkErrors: a connection cut without an answer is retried, and the
// message is posted exactly once, also when the cut create had in fact happened (same nonce,
// enforce_nonce). When every attempt is cut, the loss is logged for the turn and for each turn
// coalesced into it.
func TestCreateRetriesNetworkErrors(t *testing.T) {
	for _, tt := range []struct {
		name          string
		before, after int
	}{
		{"cut before the create", 1, 0},
		{"cut after the create", 0, 1},
		{"cut after the create twice", 0, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			p := newDropProxy(t, f.sim)
			s := f.senderVia(t, p.apiURL(f.sim))
			p.mu.Lock()
			p.before, p.after = tt.before, tt.after
			p.mu.Unlock()
			m, err := s.Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "t1"})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			sent := f.sim.Sent()
			if len(sent) != 1 || string(sent[0].ID) != m.ID {
				t.Fatalf("simulator holds %d messages, want exactly the one %s", len(sent), m.ID)
			}
			p.mu.Lock()
			dropped := p.dropped
			p.mu.Unlock()
			if dropped != tt.before+tt.after {
				t.Fatalf("%d connections cut, want %d", dropped, tt.before+tt.after)
			}
			if n := strings.Count(f.logs.String(), `"msg":"send_retry"`); n != tt.before+tt.after {
				t.Errorf("%d retries logged, want %d:\n%s", n, tt.before+tt.after, f.logs.String())
			}
		})
	}
	t.Run("every attempt cut", func(t *testing.T) {
		f := newFixture(t)
		p := newDropProxy(t, f.sim)
		s := f.senderVia(t, p.apiURL(f.sim))
		p.mu.Lock()
		p.before = 3
		p.mu.Unlock()
		_, err := s.Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "turn-7",
			CoalescedTurnIDs: []string{"turn-5", "turn-6"}})
		if err == nil || !post.Retryable(errors.Unwrap(err)) {
			t.Fatalf("create through three cut connections: %v", err)
		}
		lost := map[string]string{}
		for _, line := range strings.Split(f.logs.String(), "\n") {
			var e struct {
				Msg           string `json:"msg"`
				TurnID        string `json:"turn_id"`
				CoalescedInto string `json:"coalesced_into"`
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "send_lost" {
				lost[e.TurnID] = e.CoalescedInto
			}
		}
		want := map[string]string{"turn-7": "", "turn-5": "turn-7", "turn-6": "turn-7"}
		if !maps.Equal(lost, want) {
			t.Errorf("send_lost entries (turn -> coalesced into) = %v, want %v", lost, want)
		}
		if n := len(f.sim.Sent()); n != 0 {
			t.Errorf("%d messages sent", n)
		}
	})
}

// senderVia is a Sender like the fixture's whose REST goes to apiURL.
func (f *fixture) senderVia(t *testing.T, apiURL string) *post.Sender {
	t.Helper()
	sess, err := discord.NewSession(discord.SessionOptions{Token: f.sim.Token(), APIURL: apiURL})
	if err != nil {
		t.Fatal(err)
	}
	return post.New(sess, post.Options{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(f.logs, nil))})
}
