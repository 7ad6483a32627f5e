package discordsim

import (
	"slices"
	"testing"
)

// TestDiscordJSFidelity runs the unmodified discord.js 14 client in
// interop/discordjs/text.mjs against the simulator: log in (READY,
// GUILD_CREATE), receive a MESSAGE_CREATE, type, send a message and a
// reply, fetch messages (list, before, single). Whatever discord.js needs
// that the simulator lacks fails here.
func TestDiscordJSFidelity(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)

	n := startNode(t, "text.mjs",
		"SIM_API="+w.sim.APIBaseURL()+"/api",
		"SIM_TOKEN="+w.sim.Token(),
		"SIM_CHANNEL="+string(w.text),
	)
	type line struct {
		Event          string    `json:"event"`
		User           UserID    `json:"user"`
		Bot            bool      `json:"bot"`
		Application    UserID    `json:"application"`
		ChannelCached  bool      `json:"channelCached"`
		GuildAvailable bool      `json:"guildAvailable"`
		ID             MessageID `json:"id"`
		Author         UserID    `json:"author"`
		Content        string    `json:"content"`
		Reply          MessageID `json:"reply"`
		ReplyRef       MessageID `json:"replyRef"`
		IDs            []MessageID
		Before         []MessageID
		Single         string
		Commands       []string
		Command        string
		Channel        ChannelID
	}
	var events []line
	var ping Message
	var it Interaction
	n.wait("done", func(nl nodeLine) bool {
		var l line
		nl.decode(t, &l)
		events = append(events, l)
		if l.Event == "ready" {
			if l.User != w.sim.BotID() || !l.Bot || l.Application != w.sim.BotID() || !l.ChannelCached || !l.GuildAvailable {
				t.Errorf("ready: %+v", l)
			}
			if len(l.Commands) != 1 || len(w.sim.Commands(w.guild)) != 1 {
				t.Errorf("commands registered: %v / %+v", l.Commands, w.sim.Commands(w.guild))
			}
			var err error
			if ping, err = w.sim.Post(ctx, w.alice, w.text, "ping from go"); err != nil {
				t.Fatal(err)
			}
			if it, err = w.sim.InvokeCommand(w.alice, w.text, "ping"); err != nil {
				t.Fatal(err)
			}
		}
		return l.Event == "done"
	})
	n.exit()
	byEvent := map[string]line{}
	for _, l := range events {
		byEvent[l.Event] = l
	}
	for _, e := range []string{"ready", "received", "sent", "fetched", "interaction", "done"} {
		if _, ok := byEvent[e]; !ok {
			t.Fatalf("discord.js never reported %q; events %+v", e, events)
		}
	}
	if r := byEvent["received"]; r.ID != ping.ID || r.Author != w.alice || r.Content != "ping from go" {
		t.Errorf("received %+v", r)
	}
	sent := byEvent["sent"]
	if sent.ReplyRef != ping.ID {
		t.Errorf("reply reference %q, want %q", sent.ReplyRef, ping.ID)
	}
	m, ok := w.sim.Message(sent.ID)
	if !ok || m.Content != "hello from discord.js" || m.Author != w.sim.BotID() || m.Origin != OriginREST {
		t.Errorf("sent message %+v", m)
	}
	r, ok := w.sim.Message(sent.Reply)
	if !ok || r.ReplyTo() != ping.ID || r.Type != MessageReply || r.Reference.FailIfNotExists == nil || !*r.Reference.FailIfNotExists {
		t.Errorf("reply %+v", r)
	}
	if _, err := waitTyping(ctx, w.sim, w.text, w.sim.BotID()); err != nil {
		t.Error(err)
	}
	f := byEvent["fetched"]
	// The /ping response may land in the channel in between; leave it out.
	notInteraction := func(id MessageID) bool {
		m, ok := w.sim.Message(id)
		return ok && m.Origin == OriginInteraction
	}
	f.IDs = slices.DeleteFunc(f.IDs, notInteraction)
	f.Before = slices.DeleteFunc(f.Before, notInteraction)
	if want := []MessageID{sent.Reply, sent.ID, ping.ID}; !slices.Equal(f.IDs, want) {
		t.Errorf("fetched %v, want %v", f.IDs, want)
	}
	if want := []MessageID{sent.ID, ping.ID}; !slices.Equal(f.Before, want) {
		t.Errorf("fetched before %v, want %v", f.Before, want)
	}
	if f.Single != "ping from go" {
		t.Errorf("single fetch %q", f.Single)
	}
	if e := byEvent["interaction"]; InteractionID(e.ID) != it.ID || e.Command != "ping" || e.User != w.alice || e.Channel != w.text {
		t.Errorf("interaction %+v", e)
	}
	resp, err := waitInteractionResponse(ctx, w.sim, it.ID)
	if err != nil || resp.Type != CallbackChannelMessage {
		t.Fatalf("interaction response %+v %v", resp, err)
	}
	if m, ok := w.sim.Message(resp.Message); !ok || m.Content != "pong from discord.js" || m.Interaction != it.ID {
		t.Errorf("interaction response message %+v", m)
	}
}
