package post_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/world"
)

// TestCreateRefusedForPermissions: where the bot lacks Send Messages (50013) or View Channel
// (50001) — a member overwrite in a guild it does not own — the simulator answers 403 as
// Discord does; the Sender sends once, never retries, names the refusal (Refusal) and counts
// it forbidden, not lost.
func TestCreateRefusedForPermissions(t *testing.T) {
	tests := []struct {
		name string
		deny uint64
		want string
	}{
		{"no send messages", world.PermSendMessages, "missing_permissions"},
		{"no view channel", world.PermViewChannel, "missing_access"},
		{"allowed", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newDeniedFixture(t)
			sim, ch, reg, s := f.sim, f.ch, f.reg, f.sender
			f.deny(t, tt.deny)
			_, err := s.Create(ctx(t), post.Message{ChannelID: string(ch), Content: "hello", TurnID: "t1"})
			if got := post.Refusal(err); got != tt.want {
				t.Errorf("Refusal(%v) = %q, want %q", err, got, tt.want)
			}
			creates := 0
			for _, r := range sim.RESTLog() {
				if r.Route == discordsim.RouteMessageCreate {
					creates++
				}
			}
			if creates != 1 {
				t.Errorf("%d creates sent, want 1 (a refusal is not retried)", creates)
			}
			wantForbidden := 0.0
			if tt.want != "" {
				wantForbidden = 1
			}
			if got := sends(t, reg, "forbidden"); got != wantForbidden {
				t.Errorf("forbidden counted %v, want %v", got, wantForbidden)
			}
		})
	}
}

// deniedFixture is a Sender (3 attempts, counted, logged as JSON) on a channel of a guild alice
// owns, whose overwrites bind the bot.
type deniedFixture struct {
	sim    *discordsim.Server
	alice  discordsim.UserID
	ch     discordsim.ChannelID
	reg    *prometheus.Registry
	logs   *logbuf.Buffer
	sender *post.Sender
}

func newDeniedFixture(t *testing.T) *deniedFixture {
	t.Helper()
	f := &deniedFixture{sim: simtest.Serve(t), reg: prometheus.NewRegistry(), logs: &logbuf.Buffer{}}
	f.alice = f.sim.CreateUser("alice")
	f.ch = f.sim.CreateTextChannel(f.sim.CreateGuildOwnedBy("Alice's", f.alice), "general")
	sess, err := discord.NewSession(discord.SessionOptions{Token: f.sim.Token(), APIURL: f.sim.APIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	f.sender = post.New(sess, post.Options{Attempts: 3, Logger: slog.New(slog.NewJSONHandler(f.logs, nil)), Metrics: post.NewMetrics(f.reg)})
	return f
}

// deny sets the bot's member overwrite on the channel, denying perms.
func (f *deniedFixture) deny(t *testing.T, perms uint64) {
	t.Helper()
	o := world.Overwrite{ID: string(f.sim.BotID()), Type: world.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(perms, 10)}
	if err := f.sim.SetChannelOverwrite(f.ch, o); err != nil {
		t.Fatal(err)
	}
}

// sends reads banter_discord_sends_total{result} from reg.
func sends(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if mf.GetName() == "banter_discord_sends_total" && l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestCreateReplyUnreferenced: where the bot may not read the channel's history (a member
// overwrite denies Read Message History), Discord refuses a reply with 160009; the Sender sends
// the same text once more as a plain message opened by the addressee's mention, which pings
// only with PingRepliedUser, counts reply_unreferenced (not refused, not forbidden) and logs it.
func TestCreateReplyUnreferenced(t *testing.T) {
	for _, ping := range []bool{true, false} {
		t.Run("ping="+strconv.FormatBool(ping), func(t *testing.T) {
			f := newDeniedFixture(t)
			sim, alice, ch, reg, logs, s := f.sim, f.alice, f.ch, f.reg, f.logs, f.sender
			q, err := sim.Post(ctx(t), alice, ch, "hello bot")
			if err != nil {
				t.Fatal(err)
			}
			f.deny(t, world.PermReadMessageHistory)
			sent, err := s.Create(ctx(t), post.Message{ChannelID: string(ch), Content: "hi alice", ReplyTo: string(q.ID),
				Addressee: string(alice), PingRepliedUser: ping, TurnID: string(q.ID)})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			var statuses []int
			for _, r := range sim.RESTLog() {
				if r.Route == discordsim.RouteMessageCreate {
					statuses = append(statuses, r.Status)
				}
			}
			if len(statuses) != 2 || statuses[0] != 403 || statuses[1] != 200 {
				t.Errorf("create statuses %v, want [403 200] (one refused reply, one plain message)", statuses)
			}
			got := sim.Sent()
			if len(got) != 1 || string(got[0].ID) != sent.ID {
				t.Fatalf("sim holds %d bot messages, want the one sent", len(got))
			}
			m := got[0]
			if m.ReplyTo() != "" || m.Content != "<@"+string(alice)+"> hi alice" {
				t.Errorf("message %q replying to %q, want a plain message opened by alice's mention", m.Content, m.ReplyTo())
			}
			if m.MentionsUser(alice) != ping {
				t.Errorf("alice pinged: %v, want %v", m.MentionsUser(alice), ping)
			}
			for result, want := range map[string]float64{"reply_unreferenced": 1, "sent": 1, "refused": 0, "forbidden": 0} {
				if n := sends(t, reg, result); n != want {
					t.Errorf("sends{%s} = %v, want %v", result, n, want)
				}
			}
			if !strings.Contains(logs.String(), `"msg":"reply_unreferenced"`) {
				t.Errorf("no reply_unreferenced log line: %s", logs.String())
			}
		})
	}
}

// TestUnreferenceable: the JSON code decides (160009, or the older reply-only 160002), whatever the
// status; such an error is no Refusal (sending plain may succeed).
func TestUnreferenceable(t *testing.T) {
	rest := func(status, code int) error {
		return &discordgo.RESTError{Response: &http.Response{StatusCode: status}, Message: &discordgo.APIErrorMessage{Code: code}}
	}
	tests := []struct {
		err     error
		want    bool
		refusal string
	}{
		{rest(403, 160009), true, ""},
		{rest(400, 160009), true, ""},
		{rest(403, 160002), true, ""},
		{fmt.Errorf("wrapped: %w", rest(403, 160009)), true, ""},
		{rest(403, 50013), false, "missing_permissions"},
		{rest(400, 50035), false, ""},
		{errors.New("network"), false, ""},
		{nil, false, ""},
	}
	for _, tt := range tests {
		if got := post.Unreferenceable(tt.err); got != tt.want {
			t.Errorf("Unreferenceable(%v) = %v, want %v", tt.err, got, tt.want)
		}
		if got := post.Refusal(tt.err); got != tt.refusal {
			t.Errorf("Refusal(%v) = %q, want %q", tt.err, got, tt.refusal)
		}
	}
}
