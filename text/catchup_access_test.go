package text_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

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
	h := newHarnessWith(t, false, []discordsim.Option{discordsim.WithIdentifySpacing(identifyHold)}, nil)
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
	h.denyBot(secret, world.PermViewChannel)
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
	h.clock.Advance(identifyHold) // the bot may identify again
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

// TestPendingCatchUpDroppedWhenRemoved: after a new session, a channel's catch-up waits for its
// guild's GUILD_CREATE (the guild is in an outage: a stub in READY). The bot is removed from the
// guild meanwhile (GUILD_DELETE without unavailable): the waiting catch-up is dropped, so when
// the bot is added back, its GUILD_CREATE does not run that stale catch-up (reason ready, from
// a start read before the removal); the guild's new channel is caught up as usual.
func TestPendingCatchUpDroppedWhenRemoved(t *testing.T) {
	h := newHarness(t, nil)
	g := h.dsim.CreateGuildOwnedBy("Alice's", h.alice)
	seen := h.dsim.CreateTextChannel(g, "seen")
	m, err := h.dsim.Post(h.ctx, h.alice, seen, "hello")
	if err != nil {
		t.Fatal(err)
	}
	h.waitStored(m.ID, "saved", func(store.Message) bool { return true }) // the pipeline knows the channel
	// Hidden from the bot, a stale catch-up of #seen would log catch_up result=no_access at once
	// on the GUILD_CREATE, before the new channel's catch-up starts: no race to wait out.
	h.denyBot(seen, world.PermViewChannel)
	if err := h.dsim.SetGuildAvailable(g, false); err != nil {
		t.Fatal(err)
	}
	readies := h.dsim.CountGateway(discordsim.GatewayIdentified)
	simtest.WaitHeartbeat(t, h.dsim) // a fault before it meets discordgo's heartbeat race
	if err := h.dsim.ForceInvalidSession(false); err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitGateway(h.ctx, h.dsim, discordsim.GatewayIdentified, readies+1); err != nil {
		t.Fatal(err)
	}
	// The new session's events arrive, and are handled (discordgo's SyncEvents), in order: READY
	// (#seen's catch-up waits for the guild), GUILD_DELETE, then the GUILD_CREATE of the re-add.
	if err := h.dsim.RemoveMember(g, h.dsim.BotID()); err != nil {
		t.Fatal(err)
	}
	if err := h.dsim.SetGuildAvailable(g, true); err != nil { // the bot is no member: nothing sent
		t.Fatal(err)
	}
	fresh := h.dsim.CreateTextChannel(g, "fresh")
	off := len(h.logs.String())
	if err := h.dsim.AddMember(g, h.dsim.BotID()); err != nil {
		t.Fatal(err)
	}
	h.waitLogAfter(off, 10*time.Second, `"msg":"catch_up"`, `"reason":"guild_create"`, `"channel_id":"`+string(fresh)+`"`)
	for _, line := range strings.Split(h.logs.String()[off:], "\n") {
		if strings.Contains(line, `"msg":"catch_up"`) && strings.Contains(line, `"channel_id":"`+string(seen)+`"`) {
			t.Errorf("a catch-up of #seen ran on the re-add's GUILD_CREATE: %s", line)
		}
	}
}

// identifyHold is the session start limit's spacing (discordsim.WithIdentifySpacing, on the
// harness's settable clock) in the tests that post a message while the bot has no session:
// after op 9, discordgo identifies again at once on the same socket and is refused (op 9
// again) until the test advances the clock by identifyHold, so the message is posted before
// the new session exists, whatever the scheduler does. Without it, a test goroutine delayed
// on a loaded machine posted after the new READY, and the message came live (its catch-up
// found nothing new). Within text.catchUpMaxAgeMinutes: the message is not stale after it.
const identifyHold = 5 * time.Minute

// denyBot sets the bot's member overwrite on channel ch, denying it perms (binding in a guild
// it does not own).
func (h *harness) denyBot(ch discordsim.ChannelID, perms uint64) {
	h.t.Helper()
	o := world.Overwrite{ID: string(h.dsim.BotID()), Type: world.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(perms, 10)}
	if err := h.dsim.SetChannelOverwrite(ch, o); err != nil {
		h.t.Fatal(err)
	}
}
