package text_test

import (
	"strconv"
	"strings"
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/world"
	"github.com/banterbot/banter/store"
)

// TestCatchUpWithoutAccess: the bot loses View Channel in a channel it had read (an overwrite
// set in a server it does not own); after a new session the catch-up knows from the guild's
// state (its GUILD_CREATE: roles, overwrites, the bot's member) that it may not read that
// channel: it sends no request there (which Discord would answer 403 50001), logs catch_up
// result=no_access and counts it, while the other channels are caught up: a message the
// gateway never delivered is answered.
func TestCatchUpWithoutAccess(t *testing.T) {
	h := newHarness(t, nil)
	g := h.dsim.CreateGuildOwnedBy("Alice's", h.alice)
	open := h.dsim.CreateTextChannel(g, "open")
	secret := h.dsim.CreateTextChannel(g, "secret")
	for _, ch := range []discordsim.ChannelID{open, secret} {
		m, err := h.dsim.Post(h.ctx, h.alice, ch, "hello "+string(ch))
		if err != nil {
			t.Fatal(err)
		}
		h.waitStored(m.ID, "saved", func(store.Message) bool { return true }) // the pipeline knows the channel
	}
	hide := world.Overwrite{ID: string(h.dsim.BotID()), Type: world.OverwriteMember, Allow: "0",
		Deny: strconv.FormatUint(world.PermViewChannel, 10)}
	if err := h.dsim.SetChannelOverwrite(secret, hide); err != nil {
		t.Fatal(err)
	}
	requestsBefore := len(h.dsim.RESTLog())
	readies := h.dsim.CountGateway(discordsim.GatewayIdentified)
	simtest.WaitHeartbeat(t, h.dsim) // a fault before it meets discordgo's heartbeat race
	if err := h.dsim.ForceInvalidSession(false); err != nil {
		t.Fatal(err)
	}
	missed, err := h.dsim.Post(h.ctx, h.alice, open, mention(h.dsim.BotID())+" still with us?") // no session: not delivered
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitGateway(h.ctx, h.dsim, discordsim.GatewayIdentified, readies+1); err != nil {
		t.Fatal(err)
	}
	h.waitLog(`"msg":"catch_up"`, `"reason":"ready"`, `"channel_id":"`+string(secret)+`"`, `"result":"no_access"`, `"source":"state"`)
	h.waitLog(`"msg":"catch_up"`, `"reason":"ready"`, `"channel_id":"`+string(open)+`"`, `"new":1`)
	if r := h.waitBot(1); r.ReplyTo() != missed.ID {
		t.Errorf("reply references %q, want the missed message %q", r.ReplyTo(), missed.ID)
	}
	if n := h.metric("banter_text_catchups_total", map[string]string{"reason": "ready", "result": "no_access"}); n != 1 {
		t.Errorf("no_access catch-ups counted: %v, want 1", n)
	}
	h.waitLog(`"msg":"catch_up"`, `"reason":"ready"`, `"channel_id":"`+string(h.general)+`"`, `"truncated":false`)
	later := h.post(h.alice, mention(h.dsim.BotID())+" and here?")
	if r := h.waitBot(2); r.ReplyTo() != later.ID {
		t.Errorf("second reply references %q, want %q", r.ReplyTo(), later.ID)
	}
	for _, q := range h.dsim.RESTLog()[requestsBefore:] {
		if strings.Contains(q.Path, "/channels/"+string(secret)+"/") {
			t.Errorf("request to the hidden channel: %s %s answered %d", q.Method, q.Path, q.Status)
		}
	}
}
