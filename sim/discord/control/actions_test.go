package control_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/banterbot/banter/sim/discord/control"
)

// TestControlActions drives the rest of what people do in Discord's client over HTTP, against
// the bot's raw gateway client: a slash command run by a member (INTERACTION_CREATE; the bot
// answers on the callback route; GET /interactions/{id}?wait=1 reads the answer), the
// guild's per-command overrides (a member denied is not offered it: 403), typing, and a
// moderator moving the bot to another voice channel and out of voice.
func TestControlActions(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	g := botGateway(t, f)
	g.until("GUILD_CREATE", dispatch("GUILD_CREATE"))
	if st, _ := restCall(t, f, "PUT", "/applications/"+f["bot user id"]+"/guilds/"+f["guild"]+"/commands",
		`[{"name":"ping","description":"Ping!","options":[{"type":3,"name":"what","description":"what"}]}]`); st != 200 {
		t.Fatalf("register /ping: %d", st)
	}
	type interaction struct {
		ID, Command string
		User        string `json:"user_id"`
		Responded   bool
		Type        int `json:"response_type"`
		Message     *struct{ Content string }
		Error       string
	}
	var it interaction
	if st := call(t, "POST", ctl+"/commands/ping", map[string]any{"as": "alice", "channel": "general",
		"options": []map[string]any{{"name": "what", "type": 3, "value": "pong"}}}, &it); st != 201 || it.ID == "" || it.Responded {
		t.Fatalf("POST /commands/ping: %d %+v", st, it)
	}
	var ic struct {
		ID, Token string
		Data      struct {
			Name    string
			Options []struct{ Name, Value string }
		}
	}
	if err := json.Unmarshal(g.until("INTERACTION_CREATE", dispatch("INTERACTION_CREATE")).D, &ic); err != nil ||
		ic.ID != it.ID || ic.Data.Name != "ping" || len(ic.Data.Options) != 1 || ic.Data.Options[0].Value != "pong" {
		t.Fatalf("INTERACTION_CREATE %+v (%v), want /ping %s with what=pong", ic, err, it.ID)
	}
	if st, _ := restCall(t, f, "POST", "/interactions/"+ic.ID+"/"+ic.Token+"/callback", `{"type":4,"data":{"content":"pong!"}}`); st != 204 {
		t.Fatalf("callback: %d", st)
	}
	var got interaction
	if st := call(t, "GET", ctl+"/interactions/"+it.ID+"?wait=1", nil, &got); st != 200 || !got.Responded || got.Type != 4 ||
		got.Message == nil || got.Message.Content != "pong!" || got.User == "" {
		t.Errorf("GET /interactions/{id}?wait=1: %d %+v", st, got)
	}

	var set struct {
		Permissions []struct{ ID, Type string }
	}
	if st := call(t, "PUT", ctl+"/commands/ping/permissions", map[string]any{"permissions": []map[string]any{
		{"type": "member", "target": "alice", "permission": false}}}, &set); st != 200 || len(set.Permissions) != 1 || set.Permissions[0].Type != "member" {
		t.Errorf("overrides: %d %+v", st, set)
	}
	var refused interaction
	if st := call(t, "POST", ctl+"/commands/ping", map[string]any{"as": "alice", "channel": "general"}, &refused); st != 403 || !strings.Contains(refused.Error, "not shown") {
		t.Errorf("/ping by alice denied: %d %+v, want 403", st, refused)
	}
	// In an outage of the guild, no command can be run there: 409, before any other check.
	call(t, "POST", ctl+"/guild/availability", map[string]any{"available": false}, nil)
	if st := call(t, "POST", ctl+"/commands/ping", map[string]any{"as": "alice", "channel": "general"}, &refused); st != 409 || !strings.Contains(refused.Error, "outage") {
		t.Errorf("/ping during an outage: %d %+v, want 409", st, refused)
	}
	call(t, "POST", ctl+"/guild/availability", map[string]any{"available": true}, nil)
	g.until("GUILD_CREATE after the outage", dispatch("GUILD_CREATE"))

	next := eventStream(t, ctl)
	if st := call(t, "POST", ctl+"/typing", map[string]any{"as": "alice", "channel": "general"}, nil); st != 200 {
		t.Errorf("typing: %d", st)
	}
	next("alice typing", func(e liveEvent) bool { return e.Type == "typing" && e.Where == f["text channel"] })

	g.send(map[string]any{"op": 4, "d": map[string]any{"guild_id": f["guild"], "channel_id": f["voice channel"], "self_mute": false, "self_deaf": false}})
	g.until("the bot's VOICE_SERVER_UPDATE", dispatch("VOICE_SERVER_UPDATE"))
	var stage struct{ ID string }
	call(t, "POST", ctl+"/channels", map[string]any{"name": "Stage", "type": "voice"}, &stage)
	if st := call(t, "POST", ctl+"/voice/move", map[string]any{"as": "bot", "channel": "Stage"}, nil); st != 200 {
		t.Fatalf("move the bot: %d", st)
	}
	moved := g.until("VOICE_STATE_UPDATE", dispatch("VOICE_STATE_UPDATE"))
	if !strings.Contains(string(moved.D), `"channel_id":"`+stage.ID+`"`) {
		t.Errorf("after the move the bot got %s, want channel %s", moved.D, stage.ID)
	}
	g.until("the bot's VOICE_SERVER_UPDATE after the move", dispatch("VOICE_SERVER_UPDATE"))
	call(t, "POST", ctl+"/voice/move", map[string]any{"as": "bot", "channel": ""}, nil)
	if out := g.until("VOICE_STATE_UPDATE", dispatch("VOICE_STATE_UPDATE")); !strings.Contains(string(out.D), `"channel_id":null`) {
		t.Errorf("disconnected, the bot got %s, want channel_id null", out.D)
	}
	var e struct{ Error string }
	if st := call(t, "POST", ctl+"/voice/move", map[string]any{"as": "bot", "channel": ""}, &e); st != 409 || !strings.Contains(e.Error, "not in voice") {
		t.Errorf("moving the bot out of voice again: %d %q, want 409", st, e.Error)
	}
}
