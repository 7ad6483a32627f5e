package text_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/world"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// TestNoReplyWhereBotMayNotSend: in a guild the bot does not own, a channel overwrite denies it
// Send Messages. A mention there gets no reply and costs at most one refused create: when the
// session's state holds the guild, the pipeline knows before any model call (reply_skipped
// reason=missing_permissions, counted no_permission, no request to Discord); when it cannot
// tell (a session without state), the reply model answers and Discord's 403 50013 is final:
// one create, no retry, one reply_failed reason=missing_permissions, counted forbidden. Either
// way the durable turn is closed, and a mention in another channel of the guild is answered.
func TestNoReplyWhereBotMayNotSend(t *testing.T) {
	tests := []struct {
		name       string
		stateless  bool
		wantLog    string
		wantCount  string
		wantPosts  int
		wantCalled bool
	}{
		{name: "known from state", wantLog: "reply_skipped", wantCount: "no_permission"},
		{name: "refused by Discord", stateless: true, wantLog: "reply_failed", wantCount: "forbidden", wantPosts: 1, wantCalled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if tt.stateless {
				h.shutdown()
				h.onSession = func(s *discordgo.Session) { s.StateEnabled = false }
				h.start()
			}
			g := h.dsim.CreateGuildOwnedBy("Alice's", h.alice)
			muted := h.dsim.CreateTextChannel(g, "muted")
			open := h.dsim.CreateTextChannel(g, "open")
			h.denyBot(muted, world.PermSendMessages)
			requests := len(h.dsim.RESTLog())

			hush, err := h.dsim.Post(h.ctx, h.alice, muted, mention(h.dsim.BotID())+" can you hear me in here?")
			if err != nil {
				t.Fatal(err)
			}
			h.waitLog(`"msg":"`+tt.wantLog+`"`, `"reason":"missing_permissions"`, `"channel_id":"`+string(muted)+`"`)
			asked, err := h.dsim.Post(h.ctx, h.alice, open, mention(h.dsim.BotID())+" and over here?")
			if err != nil {
				t.Fatal(err)
			}
			if r := h.waitBot(1); r.ReplyTo() != asked.ID || r.ChannelID != open {
				t.Errorf("reply %+v, want one to %s in #open", r, asked.ID)
			}
			h.waitOpenTurnClosed(g, hush.ID)

			posts := 0
			for _, q := range h.dsim.RESTLog()[requests:] {
				if q.Method == "POST" && strings.Contains(q.Path, "/channels/"+string(muted)+"/messages") {
					posts++
				}
			}
			if posts != tt.wantPosts {
				t.Errorf("%d creates sent to the muted channel, want %d (never a retry)", posts, tt.wantPosts)
			}
			if n := strings.Count(h.logs.String(), `"msg":"`+tt.wantLog+`"`); n != 1 {
				t.Errorf("%d %s lines, want 1", n, tt.wantLog)
			}
			called := slices.ContainsFunc(h.osim.Requests(), func(r openaisim.Recorded) bool { return strings.Contains(r.Prompt, "can you hear me in here") })
			if called != tt.wantCalled {
				t.Errorf("reply model asked about the muted channel's mention: %v, want %v", called, tt.wantCalled)
			}
			if n := h.metric("banter_text_replies_total", map[string]string{"outcome": tt.wantCount}); n != 1 {
				t.Errorf("replies counted %s: %v, want 1", tt.wantCount, n)
			}
		})
	}
}

// waitOpenTurnClosed waits until message id has no open durable turn in guild g.
func (h *harness) waitOpenTurnClosed(g discordsim.GuildID, id discordsim.MessageID) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a failure guard, not a timing requirement
	for {
		open, err := h.st.OpenTurns(h.ctx, string(g))
		if err != nil {
			h.t.Fatal(err)
		}
		if !slices.ContainsFunc(open, func(tr store.Turn) bool { return tr.MessageID == string(id) }) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("turn %s still open; logs:\n%s", id, h.tail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOpenTurnWhereBotMayNoLongerSee: a process stopped with an addressed turn open (its reply
// never sent); meanwhile a moderator hid the channel from the bot (View Channel and Send
// Messages denied). The next process does not ask Discord about it at every GUILD_CREATE (each
// a 403): it closes the turn, logged turn_recovered result=no_permission with the reason, and
// sends nothing to the hidden channel.
func TestOpenTurnWhereBotMayNoLongerSee(t *testing.T) {
	h := newHarness(t, nil)
	g := h.dsim.CreateGuildOwnedBy("Alice's", h.alice)
	hidden := h.dsim.CreateTextChannel(g, "hidden")
	h.shutdown()
	m, err := h.dsim.Post(h.ctx, h.alice, hidden, mention(h.dsim.BotID())+" are you there?")
	if err != nil {
		t.Fatal(err)
	}
	st := reopen(t, h)
	if err := st.OpenTurn(h.ctx, store.Turn{MessageID: string(m.ID), ChannelID: string(hidden), GuildID: string(g), AdmittedAt: h.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	h.denyBot(hidden, world.PermViewChannel|world.PermSendMessages)
	requests := len(h.dsim.RESTLog())
	h.start()
	h.waitLog(`"msg":"turn_recovered"`, `"message_id":"`+string(m.ID)+`"`, `"result":"no_permission"`, `"reason":"missing_access"`)
	h.waitOpenTurnClosed(g, m.ID)
	for _, q := range h.dsim.RESTLog()[requests:] {
		if strings.Contains(q.Path, "/channels/"+string(hidden)+"/") {
			t.Errorf("request to the hidden channel: %s %s answered %d", q.Method, q.Path, q.Status)
		}
	}
	if n := h.metric("banter_text_durable_turns_recovered_total", map[string]string{"result": "no_permission"}); n != 1 {
		t.Errorf("recovered no_permission counted %v, want 1", n)
	}
}
