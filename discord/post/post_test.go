package post_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

type fixture struct {
	sim     *discordsim.Server
	channel discordsim.ChannelID
	sender  *post.Sender
	logs    *logbuf.Buffer
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
	logs := &logbuf.Buffer{}
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

// TestCreateRetriesUnanswered: an attempt that gets no answer is retried, with the same nonce
// and enforce_nonce, and the message is posted exactly once: a connection cut before the create
// reached Discord, cut after it happened (the answer lost), or a request that hung without
// effect until the attempt's own deadline. When every attempt is cut, the loss is logged for
// the turn and for each turn coalesced into it.
func TestCreateRetriesUnanswered(t *testing.T) {
	for _, tt := range []struct {
		name   string
		inject func(*discordsim.Server)
		faults int
	}{
		{"cut before the create", func(s *discordsim.Server) { s.CutNext(discordsim.RouteMessageCreate, 1) }, 1},
		{"cut after the create", func(s *discordsim.Server) { s.CutNextAfterEffect(discordsim.RouteMessageCreate, 1) }, 1},
		{"cut after the create twice", func(s *discordsim.Server) { s.CutNextAfterEffect(discordsim.RouteMessageCreate, 2) }, 2},
		{"hang before the create", func(s *discordsim.Server) { s.HangNext(discordsim.RouteMessageCreate, 1) }, 1},
		{"hang, then cut after the create", func(s *discordsim.Server) {
			s.HangNext(discordsim.RouteMessageCreate, 1)
			s.CutNextAfterEffect(discordsim.RouteMessageCreate, 1)
		}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			// An attempt's deadline short enough for a quick test; a hang outlasts any.
			s := f.senderWith(t, post.Options{AttemptTimeout: 200 * time.Millisecond})
			tt.inject(f.sim)
			m, err := s.Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "t1"})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			sent := f.sim.Sent()
			if len(sent) != 1 || string(sent[0].ID) != m.ID || sent[0].Content != "hello" {
				t.Fatalf("simulator holds %d messages, want exactly the one %s", len(sent), m.ID)
			}
			creates, faulted, nonces := f.creates()
			if faulted != tt.faults || creates != tt.faults+1 || len(nonces) != 1 {
				t.Errorf("%d creates (%d without an answer) with nonces %v; want %d, %d faulted, one nonce",
					creates, faulted, nonces, tt.faults+1, tt.faults)
			}
			if n := strings.Count(f.logs.String(), `"msg":"send_retry"`); n != tt.faults {
				t.Errorf("%d retries logged, want %d:\n%s", n, tt.faults, f.logs.String())
			}
		})
	}
	t.Run("every attempt cut", func(t *testing.T) {
		f := newFixture(t)
		f.sim.CutNext(discordsim.RouteMessageCreate, 3)
		_, err := f.senderWith(t, post.Options{}).Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "turn-7",
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

// TestCreateTimeoutsFinal: the caller's own deadline is final (the hung attempt is not
// retried), and so is the budget: a create whose every attempt hangs is lost once the budget
// is spent, however many attempts remain.
func TestCreateTimeoutsFinal(t *testing.T) {
	for _, tt := range []struct {
		name      string
		opts      post.Options
		callerTTL time.Duration
		maxTries  int
	}{
		{"caller's deadline", post.Options{AttemptTimeout: time.Minute}, 200 * time.Millisecond, 1},
		{"budget spent", post.Options{Attempts: 1000, AttemptTimeout: 100 * time.Millisecond, Budget: 300 * time.Millisecond}, time.Minute, 999},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.sim.HangNext(discordsim.RouteMessageCreate, 1000)
			c, cancel := context.WithTimeout(ctx(t), tt.callerTTL)
			defer cancel()
			_, err := f.senderWith(t, tt.opts).Create(c, post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "turn-9"})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("create into hanging requests: %v, want a deadline error", err)
			}
			if !strings.Contains(f.logs.String(), `"msg":"send_lost"`) {
				t.Errorf("loss not logged:\n%s", f.logs.String())
			}
			// The hung attempts are recorded once the simulator has seen the client go.
			if err := f.sim.Await(ctx(t), func() bool { n, _, _ := f.creates(); return n >= 1 }); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(f.logs.String(), `"msg":"send_retry"`); n > tt.maxTries-1 {
				t.Errorf("%d retries logged, want at most %d", n, tt.maxTries-1)
			}
			if n := len(f.sim.Sent()); n != 0 {
				t.Errorf("%d messages sent", n)
			}
		})
	}
}

// creates counts the message creates the simulator has recorded, those it left without an
// answer, and the nonces they carried.
func (f *fixture) creates() (n, faulted int, nonces []string) {
	seen := map[string]bool{}
	for _, r := range f.sim.RESTLog() {
		if r.Route != discordsim.RouteMessageCreate {
			continue
		}
		n++
		if r.Fault != discordsim.RESTFaultNone {
			faulted++
		}
		var b struct {
			Nonce   string `json:"nonce"`
			Enforce bool   `json:"enforce_nonce"`
		}
		if json.Unmarshal(r.Body, &b) == nil && b.Enforce && !seen[b.Nonce] {
			seen[b.Nonce] = true
			nonces = append(nonces, b.Nonce)
		}
	}
	return n, faulted, nonces
}

// senderWith is a Sender like the fixture's, with opts (Attempts 3 and millisecond back-off
// unless set).
func (f *fixture) senderWith(t *testing.T, opts post.Options) *post.Sender {
	t.Helper()
	sess, err := discord.NewSession(discord.SessionOptions{Token: f.sim.Token(), APIURL: f.sim.APIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Attempts == 0 {
		opts.Attempts = 3
	}
	if opts.BaseDelay == 0 {
		opts.BaseDelay, opts.MaxDelay = time.Millisecond, 5*time.Millisecond
	}
	opts.Logger = slog.New(slog.NewJSONHandler(f.logs, nil))
	return post.New(sess, opts)
}
