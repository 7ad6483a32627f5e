package discordsim

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// TestChannelOverwritesGateReads: in a guild the bot does not own, a channel overwrite
// denying the bot View Channel makes its message reads answer 403 with Discord's Missing
// Access body (50001); one denying Read Message History makes the list empty and a single
// message 403; the guild's owner reads whatever its overwrites say. The overwrite is sent
// as CHANNEL_UPDATE, and a hidden channel's messages no longer reach the bot's gateway.
func TestChannelOverwritesGateReads(t *testing.T) {
	s := serve(t)
	alice := s.CreateUser("alice")
	g := s.CreateGuildOwnedBy("Alice's", alice)
	ch := s.CreateTextChannel(g, "secret")
	m, err := s.Post(testCtx(t), alice, ch, "before the overwrite")
	if err != nil {
		t.Fatal(err)
	}
	bot, owner := "Bot "+s.Token(), "Bot "+s.UserToken(alice)
	list := "/api/v10/channels/" + string(ch) + "/messages"
	one := list + "/" + string(m.ID)
	deny := func(who UserID, perms uint64) {
		t.Helper()
		o := world.Overwrite{ID: string(who), Type: world.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(perms, 10)}
		if err := s.SetChannelOverwrite(ch, o); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name              string
		denyBot           uint64
		token             string
		wantList, wantOne int
		wantListed        int
	}{
		{name: "no overwrite", token: bot, wantList: 200, wantOne: 200, wantListed: 1},
		{name: "read history denied", denyBot: world.PermReadMessageHistory, token: bot, wantList: 200, wantOne: 403},
		{name: "view denied", denyBot: world.PermViewChannel, token: bot, wantList: 403, wantOne: 403},
		{name: "the owner, its own overwrite denying view", denyBot: world.PermViewChannel, token: owner, wantList: 200, wantOne: 200, wantListed: 1},
	}
	for _, tt := range tests {
		deny(s.BotID(), tt.denyBot)
		if tt.token == owner {
			deny(alice, world.PermViewChannel)
		}
		var listed []wireMessage
		var e wireError
		resp := rest(t, s, "GET", list, tt.token, nil, nil)
		if resp.StatusCode == 200 {
			rest(t, s, "GET", list, tt.token, nil, &listed)
		} else {
			rest(t, s, "GET", list, tt.token, nil, &e)
		}
		if resp.StatusCode != tt.wantList || len(listed) != tt.wantListed {
			t.Errorf("%s: list %d with %d messages, want %d with %d", tt.name, resp.StatusCode, len(listed), tt.wantList, tt.wantListed)
		}
		if resp.StatusCode == 403 && (e.Code != world.CodeMissingAccess || e.Message != "Missing Access") {
			t.Errorf("%s: list error body %+v, want 50001 Missing Access", tt.name, e)
		}
		e = wireError{}
		if resp := rest(t, s, "GET", one, tt.token, nil, &e); resp.StatusCode != tt.wantOne || (tt.wantOne == 403 && e.Code != world.CodeMissingAccess) {
			t.Errorf("%s: get message %d %+v, want %d", tt.name, resp.StatusCode, e, tt.wantOne)
		}
	}
}

// TestHiddenChannelDispatches: the bot's session gets CHANNEL_UPDATE with the overwrite, and
// no MESSAGE_CREATE from a channel it may not view.
func TestHiddenChannelDispatches(t *testing.T) {
	s := serve(t)
	alice := s.CreateUser("alice")
	g := s.CreateGuildOwnedBy("Alice's", alice)
	hidden := s.CreateTextChannel(g, "secret")
	open := s.CreateTextChannel(g, "open")
	gw, _ := identify(t, s, s.Token(), IntentGuilds|IntentGuildMessages)
	o := world.Overwrite{ID: string(s.BotID()), Type: world.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(world.PermViewChannel, 10)}
	if err := s.SetChannelOverwrite(hidden, o); err != nil {
		t.Fatal(err)
	}
	upd := gw.until("CHANNEL_UPDATE")
	var c wireChannel
	if err := json.Unmarshal(upd.D, &c); err != nil || c.ID != hidden || len(c.PermissionOverwrites) != 1 || c.PermissionOverwrites[0].Deny != o.Deny {
		t.Fatalf("CHANNEL_UPDATE %+v (%v), want the overwrite of %s", c, err, hidden)
	}
	if _, err := s.Post(testCtx(t), alice, hidden, "not for the bot"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(testCtx(t), alice, open, "for everyone"); err != nil {
		t.Fatal(err)
	}
	var got wireMessage
	if err := json.Unmarshal(gw.until("MESSAGE_CREATE").D, &got); err != nil || got.ChannelID != open {
		t.Errorf("first MESSAGE_CREATE %+v (%v), want the one in %s", got, err, open)
	}
}
