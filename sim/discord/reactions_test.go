package discordsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/sim/discord/world"
)

// TestReactionsThroughDiscordgo: discordgo reacts and unreacts through the
// reaction routes, and receives MESSAGE_REACTION_ADD/REMOVE for a simulated
// user's reaction; the message object shows the reactions.
func TestReactionsThroughDiscordgo(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	dg, ev := openDiscordgo(t, w.sim)
	ev.wait(t, ctx, func(v any) bool { _, ok := v.(*discordgo.GuildCreate); return ok })
	m, err := w.sim.Post(ctx, w.alice, w.text, "react to me")
	if err != nil {
		t.Fatal(err)
	}
	if err := dg.MessageReactionAdd(string(w.text), string(m.ID), "👍"); err != nil {
		t.Fatalf("bot reacts: %v", err)
	}
	add := ev.wait(t, ctx, func(v any) bool {
		r, ok := v.(*discordgo.MessageReactionAdd)
		return ok && r.UserID == string(w.sim.BotID())
	}).(*discordgo.MessageReactionAdd)
	if add.Emoji.Name != "👍" || add.MessageID != string(m.ID) || add.ChannelID != string(w.text) || add.GuildID != string(w.guild) || add.Member == nil {
		t.Errorf("MESSAGE_REACTION_ADD %+v", add.MessageReaction)
	}
	if err := w.sim.React(ctx, w.alice, m.ID, "👍"); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, func(v any) bool {
		r, ok := v.(*discordgo.MessageReactionAdd)
		return ok && r.UserID == string(w.alice)
	})
	got, err := dg.ChannelMessage(string(w.text), string(m.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Reactions) != 1 || got.Reactions[0].Count != 2 || !got.Reactions[0].Me || got.Reactions[0].Emoji.Name != "👍" {
		t.Errorf("reactions on the message: %+v", got.Reactions)
	}
	users, err := dg.MessageReactions(string(w.text), string(m.ID), "👍", 100, "", "")
	if err != nil || len(users) != 2 {
		t.Errorf("who reacted: %v, %v", users, err)
	}
	if err := w.sim.Unreact(ctx, w.alice, m.ID, "👍"); err != nil {
		t.Fatal(err)
	}
	rm := ev.wait(t, ctx, func(v any) bool { _, ok := v.(*discordgo.MessageReactionRemove); return ok }).(*discordgo.MessageReactionRemove)
	if rm.UserID != string(w.alice) || rm.Emoji.Name != "👍" {
		t.Errorf("MESSAGE_REACTION_REMOVE %+v", rm.MessageReaction)
	}
	if err := dg.MessageReactionRemove(string(w.text), string(m.ID), "👍", "@me"); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.sim.Message(m.ID); len(got.Reactions) != 0 {
		t.Errorf("reactions left after both were taken back: %+v", got.Reactions)
	}
}

// TestReactionRules: what Discord refuses on the reaction routes.
func TestReactionRules(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	m, err := w.sim.Post(ctx, w.alice, w.text, "hi")
	if err != nil {
		t.Fatal(err)
	}
	bot, alice := "Bot "+w.sim.Token(), w.sim.UserToken(w.alice)
	path := func(emoji, who string) string {
		return "/api/v10/channels/" + string(w.text) + "/messages/" + string(m.ID) + "/reactions/" + url.PathEscape(emoji) + who
	}
	tests := []struct {
		name, method, path, token string
		status, code              int
	}{
		{"bot reacts", "PUT", path("🎉", "/@me"), bot, 204, 0},
		{"reacting twice is fine", "PUT", path("🎉", "/@me"), bot, 204, 0},
		{"alice reacts", "PUT", path("🎉", "/@me"), alice, 204, 0},
		{"a word is no emoji", "PUT", path("thumbsup", "/@me"), bot, 400, world.CodeUnknownEmoji},
		{"a custom emoji the guild lacks", "PUT", path("party:123456789012345678", "/@me"), bot, 400, world.CodeUnknownEmoji},
		{"unknown message", "PUT", "/api/v10/channels/" + string(w.text) + "/messages/1/reactions/%F0%9F%8E%89/@me", bot, 404, world.CodeUnknownMessage},
		{"alice may not remove the bot's", "DELETE", path("🎉", "/"+string(w.sim.BotID())), alice, 403, world.CodeMissingPerms},
		{"the bot may remove alice's", "DELETE", path("🎉", "/"+string(w.alice)), bot, 204, 0},
		{"alice may not clear", "DELETE", "/api/v10/channels/" + string(w.text) + "/messages/" + string(m.ID) + "/reactions", alice, 403, world.CodeMissingPerms},
		{"the bot clears", "DELETE", "/api/v10/channels/" + string(w.text) + "/messages/" + string(m.ID) + "/reactions", bot, 204, 0},
	}
	for _, tt := range tests {
		var e wireError
		resp := rest(t, w.sim, tt.method, tt.path, tt.token, nil, &e)
		if resp.StatusCode != tt.status || e.Code != tt.code {
			t.Errorf("%s: %d code %d, want %d code %d", tt.name, resp.StatusCode, e.Code, tt.status, tt.code)
		}
	}
	if got, _ := w.sim.Message(m.ID); len(got.Reactions) != 0 {
		t.Errorf("reactions after the clear: %+v", got.Reactions)
	}
}

// TestReactionEventsNeedTheIntent: reaction dispatches go only to sessions
// with GUILD_MESSAGE_REACTIONS; the clear is MESSAGE_REACTION_REMOVE_ALL.
func TestReactionEventsNeedTheIntent(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	with, _ := identify(t, w.sim, w.sim.Token(), allIntents|IntentGuildMessageReactions)
	with.until("GUILD_CREATE")
	without, _ := identify(t, w.sim, w.sim.UserToken(w.alice), allIntents)
	without.until("GUILD_CREATE")
	m, err := w.sim.Post(ctx, w.alice, w.text, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.sim.React(ctx, w.alice, m.ID, "🔥"); err != nil {
		t.Fatal(err)
	}
	f := with.until("MESSAGE_REACTION_ADD")
	var ev struct {
		UserID          string `json:"user_id"`
		MessageAuthorID string `json:"message_author_id"`
		Emoji           struct {
			ID   *string `json:"id"`
			Name string  `json:"name"`
		} `json:"emoji"`
	}
	if err := json.Unmarshal(f.D, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.UserID != string(w.alice) || ev.MessageAuthorID != string(w.alice) || ev.Emoji.ID != nil || ev.Emoji.Name != "🔥" {
		t.Errorf("MESSAGE_REACTION_ADD %s", f.D)
	}
	if resp := rest(t, w.sim, "DELETE", "/api/v10/channels/"+string(w.text)+"/messages/"+string(m.ID)+"/reactions", "Bot "+w.sim.Token(), nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("clear: %d", resp.StatusCode)
	}
	with.until("MESSAGE_REACTION_REMOVE_ALL")
	// The session without the intent got the message but none of the
	// reaction events: its next dispatch is the next message.
	if _, err := w.sim.Post(ctx, w.alice, w.text, "after"); err != nil {
		t.Fatal(err)
	}
	for {
		f := without.read()
		if f.typ() == "MESSAGE_REACTION_ADD" || f.typ() == "MESSAGE_REACTION_REMOVE_ALL" {
			t.Fatalf("%s without GUILD_MESSAGE_REACTIONS", f.typ())
		}
		if f.typ() == "MESSAGE_CREATE" && string(f.D) != "" && json.Valid(f.D) {
			var mc struct{ Content string }
			_ = json.Unmarshal(f.D, &mc)
			if mc.Content == "after" {
				break
			}
		}
	}
}
