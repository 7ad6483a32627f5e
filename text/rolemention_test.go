package text_test

import (
	"strings"
	"testing"
)

// TestRoleMentionAddressesBot: typing "@banter" in Discord's client may pick the bot's own
// managed role (the one Discord makes when the bot is invited with permissions) instead of the
// bot user, so the message carries <@&ROLE> and no <@BOT>. It is a direct mention all the same;
// a mention of another role is not, and the model is told what the role's id stands for.
func TestRoleMentionAddressesBot(t *testing.T) {
	h := newHarness(t, nil, toolReply("weather", "reply", "", "Sunny with a chance of memes."))
	own, err := h.dsim.CreateBotRole(h.guild)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := h.dsim.CreateRole(h.guild, "mods")
	if err != nil {
		t.Fatal(err)
	}
	h.restart() // the roles reach the new session in GUILD_CREATE (TestBotRoleCreatedAfterConnect: as events)

	other := h.post(h.alice, "<@&"+string(mods)+"> what's the weather like?")
	h.waitLog(`"msg":"reply_admission"`, string(other.ID), `"directAddressed":false`)

	m := h.post(h.alice, "<@&"+string(own)+"> what's the weather like?")
	r := h.waitBot(1)
	if r.ReplyTo() != m.ID {
		t.Errorf("reply references %q, want the role mention %q", r.ReplyTo(), m.ID)
	}
	h.waitLog(`"msg":"reply_admission"`, string(m.ID), `"reason":"direct_mention"`)
	if n := len(h.botMessages()); n != 1 {
		t.Errorf("bot sent %d messages, want 1 (none to the other role's mention)", n)
	}
	g := h.generations()
	if len(g) != 1 {
		t.Fatalf("%d generations, want 1", len(g))
	}
	if want := "a mention of your role, <@&" + string(own) + ">, means you too"; !strings.Contains(g[0].Prompt, want) {
		t.Errorf("the prompt does not say whose role <@&%s> is (%q):\n%s", own, want, g[0].Prompt)
	}
}

// TestBotRoleCreatedAfterConnect: the bot's managed role made while the bot is connected (the
// bot invited again with permissions, or its integration re-synced) reaches its state through
// GUILD_ROLE_CREATE and the bot's own GUILD_MEMBER_UPDATE, which Discord sends without the
// GUILD_MEMBERS intent banter does not ask for; a mention of that role is a direct mention.
func TestBotRoleCreatedAfterConnect(t *testing.T) {
	h := newHarness(t, nil, toolReply("weather", "reply", "", "Sunny with a chance of memes."))
	own, err := h.dsim.CreateBotRole(h.guild)
	if err != nil {
		t.Fatal(err)
	}
	m := h.post(h.alice, "<@&"+string(own)+"> what's the weather like?")
	r := h.waitBot(1)
	if r.ReplyTo() != m.ID {
		t.Errorf("reply references %q, want the role mention %q", r.ReplyTo(), m.ID)
	}
	h.waitLog(`"msg":"reply_admission"`, string(m.ID), `"reason":"direct_mention"`)
}
