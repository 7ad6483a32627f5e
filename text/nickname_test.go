package text_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
)

// TestNicknameAddressesBot: the server's admins renamed the bot "Jarvis" (its guild nickname,
// set through the simulator's scripting, as the control API does: the conformance spec the
// simulator checks requests against has no PATCH of a member). In that server "jarvis, what's up?"
// addresses it without a mention and its prompt says what the server calls it; in another
// server, where it has no nickname, the word is not its name; once the nickname is cleared, nor
// is it in the first; with bot.answerToNickname off it is not its name either.
func TestNicknameAddressesBot(t *testing.T) {
	h := newHarness(t, nil)
	bot := string(h.dsim.BotID())
	renamed := make(chan string, 4)
	remove := h.sess.AddHandler(func(_ *discordgo.Session, u *discordgo.GuildMemberUpdate) {
		if u.Member != nil && u.User != nil && u.User.ID == bot && u.GuildID == string(h.guild) {
			renamed <- u.Nick // the state holds it before handlers run
		}
	})
	defer remove()
	setNick := func(nick string) {
		t.Helper()
		if err := h.dsim.SetNick(h.guild, h.dsim.BotID(), nick); err != nil {
			t.Fatalf("set nick %q: %v", nick, err)
		}
		select {
		case got := <-renamed:
			if got != nick {
				t.Fatalf("GUILD_MEMBER_UPDATE nick %q, want %q", got, nick)
			}
		case <-h.ctx.Done():
			t.Fatalf("no GUILD_MEMBER_UPDATE for nick %q", nick)
		}
	}

	// Another server, where the bot has no nickname.
	other := h.dsim.CreateGuild("Elsewhere")
	otherGeneral := h.dsim.CreateTextChannel(other, "general")
	h.dsim.AddMember(other, h.alice)

	setNick("Jarvis 🤖")
	m := h.post(h.alice, "jarvis, what's up?")
	r := h.waitBot(1)
	if r.ReplyTo() != m.ID {
		t.Errorf("reply references %q, want %q", r.ReplyTo(), m.ID)
	}
	h.waitLog(`"msg":"reply_admission"`, string(m.ID), `"reason":"nickname_address"`, `"signal":"name_nickname"`)
	h.waitLog(`"msg":"bot_nickname"`, `"pipeline":"text"`, `"status":"in_use"`, `"name":"Jarvis"`)
	if g := h.generations(); len(g) != 1 || !strings.Contains(g[0].Instructions, `In this server you are called "Jarvis"`) {
		t.Errorf("%d generations; the first's instructions do not name the nickname", len(g))
	}

	elsewhere, err := h.dsim.Post(h.ctx, h.alice, otherGeneral, "jarvis, what's up?")
	if err != nil {
		t.Fatal(err)
	}
	h.waitLog(`"msg":"reply_admission"`, string(elsewhere.ID), `"allow":false`)

	setNick("")
	cleared := h.post(h.alice, "jarvis, you still there?")
	h.waitLog(`"msg":"reply_admission"`, string(cleared.ID), `"allow":false`)
	h.waitLog(`"msg":"bot_nickname"`, `"status":"cleared"`)

	setNick("Jarvis")
	h.reconfigure(func(c *config.Config) { c.Bot.AnswerToNickname = false })
	off := h.post(h.alice, "jarvis, are you there?")
	h.waitLog(`"msg":"reply_admission"`, string(off.ID), `"allow":false`)
	// The name itself still works in the same state.
	named := h.post(h.alice, "banter, are you there?")
	if r := h.waitBot(2); r.ReplyTo() != named.ID {
		t.Errorf("reply references %q, want %q", r.ReplyTo(), named.ID)
	}
	if n := len(h.botMessages()); n != 2 {
		t.Errorf("bot sent %d messages, want 2", n)
	}
	if g := h.generations(); len(g) != 2 || strings.Contains(g[1].Instructions, "In this server you are called") {
		t.Errorf("with answerToNickname off the prompt still names the nickname")
	}
}
