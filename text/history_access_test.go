package text_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/world"
)

// TestReplyWhereBotMayNotReadHistory: in a guild the bot does not own, a channel overwrite
// denies it Read Message History (it may still see and post). A mention there — a reply to the
// bot's reply to bob, both posted while the bot was away, so that the reply chain's older hop
// must be fetched, which it may not — is answered once,
// with one model call, as a plain message opened by the asker's mention (which pings them, as
// the reply would have). When the session's state holds the guild no create is refused and no
// 4xx reaches Discord: the reply chain's older hop is not even fetched; when it cannot tell (a
// session without state), Discord's 403 160009 on the reply is followed by one plain create.
// Either way the fallback is counted (no_read_history) and no fetch logs a warning.
func TestReplyWhereBotMayNotReadHistory(t *testing.T) {
	tests := []struct {
		name         string
		stateless    bool
		wantStatuses []int  // the creates in the channel
		wantFetch    string // the reply chain's hop to the first message, logged at debug
	}{
		{name: "known from state", wantStatuses: []int{200}, wantFetch: "message_fetch_skipped"},
		{name: "refused by Discord", stateless: true, wantStatuses: []int{403, 200}, wantFetch: "message_fetch_refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			g := h.dsim.CreateGuildOwnedBy("Alice's", h.alice)
			h.dsim.AddMember(g, h.bob)
			quiet := h.dsim.CreateTextChannel(g, "quiet")
			h.shutdown()
			first, err := h.dsim.Post(h.ctx, h.bob, quiet, "pineapple on pizza is fine")
			if err != nil {
				t.Fatal(err)
			}
			second, err := h.dsim.Post(h.ctx, h.dsim.BotID(), quiet, "it is not", discordsim.ReplyTo(first.ID))
			if err != nil {
				t.Fatal(err)
			}
			h.denyBot(quiet, world.PermReadMessageHistory)
			if tt.stateless {
				h.onSession = func(s *discordgo.Session) { s.StateEnabled = false }
			}
			h.start()
			requests := len(h.dsim.RESTLog())

			asked, err := h.dsim.Post(h.ctx, h.alice, quiet, mention(h.dsim.BotID())+" what do you think of pineapple?",
				discordsim.ReplyTo(second.ID))
			if err != nil {
				t.Fatal(err)
			}
			r := h.waitBot(1)
			if r.ChannelID != quiet || r.ReplyTo() != "" {
				t.Fatalf("bot message in %s replying to %q, want a plain message in #quiet", r.ChannelID, r.ReplyTo())
			}
			if !strings.HasPrefix(r.Content, mention(h.alice)+" ") || !r.MentionsUser(h.alice) {
				t.Errorf("bot message %q (mentions %v), want it opened by alice's mention, pinging her", r.Content, r.Mentions)
			}
			h.waitLog(`"msg":"sent_reply"`, `"message_id":"`+string(asked.ID)+`"`, `"fallback":"no_read_history"`)

			var statuses []int
			for _, q := range h.dsim.RESTLog()[requests:] {
				if !strings.Contains(q.Path, "/channels/"+string(quiet)+"/") {
					continue
				}
				if q.Route == discordsim.RouteMessageCreate {
					statuses = append(statuses, q.Status)
				} else if q.Status >= 400 && !tt.stateless {
					t.Errorf("%s %s answered %d: the state said the bot may not read #quiet", q.Method, q.Path, q.Status)
				}
			}
			if !slices.Equal(statuses, tt.wantStatuses) {
				t.Errorf("creates in #quiet answered %v, want %v", statuses, tt.wantStatuses)
			}
			calls := 0
			for _, g := range h.generations() {
				if strings.Contains(g.Prompt, "what do you think of pineapple") {
					calls++
				}
			}
			if calls != 1 {
				t.Errorf("%d reply model calls about the mention, want 1", calls)
			}
			if n := h.metric("banter_text_fallbacks_total", map[string]string{"reason": "no_read_history"}); n != 1 {
				t.Errorf("fallbacks counted no_read_history: %v, want 1", n)
			}
			if !strings.Contains(h.logs.String(), `"msg":"`+tt.wantFetch+`"`) {
				t.Errorf("no %s line: the reply chain's older hop was not tried", tt.wantFetch)
			}
			for _, bad := range []string{`"msg":"message_fetch_failed"`, `"msg":"send_failed"`, `"msg":"reply_failed"`} {
				if strings.Contains(h.logs.String(), bad) {
					t.Errorf("logged %s", bad)
				}
			}
		})
	}
}
