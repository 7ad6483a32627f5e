package discordsim

import "testing"

// TestDiscordJSMemberLogin logs a simulated member (alice, not the bot) in
// with her own token through the unmodified discord.js client in
// interop/discordjs/member.mjs: login (READY must carry an application,
// which discord.js dereferences), send as alice, receive the bot's message.
func TestDiscordJSMemberLogin(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	n := startNode(t, "member.mjs",
		"SIM_API="+w.sim.APIBaseURL()+"/api",
		"SIM_TOKEN="+w.sim.UserToken(w.alice),
		"SIM_CHANNEL="+string(w.text),
	)
	var l struct {
		User          UserID    `json:"user"`
		Application   UserID    `json:"application"`
		ChannelCached bool      `json:"channelCached"`
		ID            MessageID `json:"id"`
		Author        UserID    `json:"author"`
		Content       string    `json:"content"`
	}
	n.wait("ready", func(nl nodeLine) bool { nl.decode(t, &l); return nl.Event == "ready" })
	if l.User != w.alice || l.Application != w.alice || !l.ChannelCached {
		t.Fatalf("ready as alice: %+v", l)
	}
	n.wait("sent", func(nl nodeLine) bool { nl.decode(t, &l); return nl.Event == "sent" })
	got, ok := w.sim.Message(l.ID)
	if !ok || got.Author != w.alice || got.Content != "hello from a member" || got.ChannelID != w.text {
		t.Fatalf("message %s in the world: %+v (found %v)", l.ID, got, ok)
	}
	bot, err := w.sim.Post(ctx, w.sim.BotID(), w.text, "hi alice")
	if err != nil {
		t.Fatal(err)
	}
	n.wait("received", func(nl nodeLine) bool { nl.decode(t, &l); return nl.Event == "received" })
	if l.ID != bot.ID || l.Author != w.sim.BotID() || l.Content != "hi alice" {
		t.Errorf("alice received %+v, want the bot's %s", l, bot.ID)
	}
	n.exit()
}
