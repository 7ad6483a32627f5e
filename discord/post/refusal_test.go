package post_test

import (
	"log/slog"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/post"
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
			sim := simtest.Serve(t)
			alice := sim.CreateUser("alice")
			ch := sim.CreateTextChannel(sim.CreateGuildOwnedBy("Alice's", alice), "general")
			o := world.Overwrite{ID: string(sim.BotID()), Type: world.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(tt.deny, 10)}
			if err := sim.SetChannelOverwrite(ch, o); err != nil {
				t.Fatal(err)
			}
			sess, err := discord.NewSession(discord.SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL()})
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			s := post.New(sess, post.Options{Attempts: 3, Logger: slog.New(slog.DiscardHandler), Metrics: post.NewMetrics(reg)})
			_, err = s.Create(ctx(t), post.Message{ChannelID: string(ch), Content: "hello", TurnID: "t1"})
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
