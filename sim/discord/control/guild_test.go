package control_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/banterbot/banter/sim/discord/control"
)

// dispatchesUntilMarker posts a marker message as alice and returns the types of the
// dispatches the bot's client got before it: what one step sent it.
func dispatchesUntilMarker(t *testing.T, ctl string, g *wsClient, step int) []string {
	t.Helper()
	content := fmt.Sprintf("marker %d", step)
	if st := call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": content}, nil); st != 201 {
		t.Fatalf("marker post: %d", st)
	}
	got := []string{}
	for {
		f := g.until("a dispatch", op(0))
		if f.T == "MESSAGE_CREATE" && strings.Contains(string(f.D), `"content":"`+content+`"`) {
			return got
		}
		got = append(got, f.T)
	}
}

type roleAnswer struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Permissions string `json:"permissions"`
	Managed     bool   `json:"managed"`
	BotID       string `json:"bot_id"`
	Error       string `json:"error"`
}

type memberAnswer struct {
	ID      string   `json:"id"`
	Nick    string   `json:"nick"`
	Roles   []string `json:"roles"`
	InGuild bool     `json:"in_guild"`
	Error   string   `json:"error"`
}

// TestControlGuildAdmin drives every guild route over HTTP (roles, the bot's role, members'
// roles and nicknames, removal and return, channel overwrites, an outage) and checks each
// answer and what the bot's raw gateway client (GUILDS without GUILD_MEMBERS, as banter) is
// sent for it.
func TestControlGuildAdmin(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	g := botGateway(t, f)
	g.until("GUILD_CREATE", dispatch("GUILD_CREATE"))
	step := 0
	expect := func(what string, want ...string) {
		t.Helper()
		step++
		if got := dispatchesUntilMarker(t, ctl, g, step); !slices.Equal(got, want) {
			t.Errorf("%s: the bot was sent %v, want %v", what, got, want)
		}
	}

	var mods roleAnswer
	if st := call(t, "POST", ctl+"/roles", map[string]any{"name": "mods", "permissions": "8"}, &mods); st != 201 || mods.Name != "mods" || mods.Permissions != "8" || mods.Managed {
		t.Fatalf("POST /roles: %d %+v", st, mods)
	}
	expect("create a role", "GUILD_ROLE_CREATE")
	var own roleAnswer
	if st := call(t, "POST", ctl+"/roles/bot", nil, &own); st != 201 || !own.Managed || own.BotID != f["bot user id"] {
		t.Fatalf("POST /roles/bot: %d %+v", st, own)
	}
	expect("the bot's role", "GUILD_ROLE_CREATE", "GUILD_MEMBER_UPDATE")
	if st := call(t, "POST", ctl+"/roles/bot", nil, &own); st != 409 || own.Error == "" {
		t.Errorf("a second bot role: %d %+v, want 409", st, own)
	}
	var roles []struct {
		Name     string `json:"name"`
		Position int    `json:"position"`
	}
	call(t, "GET", ctl+"/roles", nil, &roles)
	for _, r := range roles {
		want := 1
		if r.Name == "@everyone" {
			want = 0
		}
		if r.Position != want {
			t.Errorf("role %s at position %d: new roles go to 1, @everyone stays at 0", r.Name, r.Position)
		}
	}
	var refused memberAnswer
	if st := call(t, "PUT", ctl+"/members/alice/roles/"+own.ID, nil, &refused); st != 403 || !strings.Contains(refused.Error, "managed") {
		t.Errorf("give alice the bot's managed role: %d %+v, want 403 (managed)", st, refused)
	}
	if st := call(t, "DELETE", ctl+"/members/bot/roles/"+own.ID, nil, &refused); st != 403 || !strings.Contains(refused.Error, "managed") {
		t.Errorf("take the bot's managed role: %d %+v, want 403 (managed)", st, refused)
	}
	expect("managed role given and taken by hand: refused")

	var m memberAnswer
	if st := call(t, "PUT", ctl+"/members/alice/roles/mods", nil, &m); st != 200 || !slices.Equal(m.Roles, []string{mods.ID}) {
		t.Errorf("give mods: %d %+v", st, m)
	}
	if st := call(t, "PATCH", ctl+"/members/alice", map[string]any{"nick": "ali"}, &m); st != 200 || m.Nick != "ali" {
		t.Errorf("nick: %d %+v", st, m)
	}
	expect("alice's role and nick (no GUILD_MEMBERS)")
	var edited roleAnswer
	if st := call(t, "PATCH", ctl+"/roles/mods", map[string]any{"name": "moderators"}, &edited); st != 200 || edited.Name != "moderators" || edited.Permissions != "8" {
		t.Errorf("rename: %d %+v", st, edited)
	}
	expect("rename", "GUILD_ROLE_UPDATE")
	var ow struct {
		Overwrites []struct{ ID, Type, Allow, Deny string }
	}
	if st := call(t, "PUT", ctl+"/channels/general/permissions/moderators", map[string]any{"type": "role", "allow": "1024"}, &ow); st != 200 ||
		len(ow.Overwrites) != 1 || ow.Overwrites[0].ID != mods.ID || ow.Overwrites[0].Allow != "1024" || ow.Overwrites[0].Deny != "0" {
		t.Errorf("overwrite: %d %+v", st, ow)
	}
	expect("overwrite", "CHANNEL_UPDATE")
	if st := call(t, "DELETE", ctl+"/members/alice/roles/moderators", nil, &m); st != 200 || len(m.Roles) != 0 {
		t.Errorf("take moderators: %d %+v", st, m)
	}
	if st := call(t, "DELETE", ctl+"/roles/"+own.ID, nil, &edited); st != 400 || !strings.Contains(edited.Error, "managed") {
		t.Errorf("delete the bot's role: %d %+v, want 400 (managed)", st, edited)
	}
	var left []roleAnswer
	if st := call(t, "DELETE", ctl+"/roles/moderators", nil, &left); st != 200 || len(left) != 2 {
		t.Errorf("delete moderators: %d %+v, want @everyone and the bot's role left", st, left)
	}
	expect("delete", "GUILD_ROLE_DELETE")

	if st := call(t, "DELETE", ctl+"/members/alice", nil, &m); st != 200 || m.InGuild {
		t.Errorf("remove alice: %d %+v", st, m)
	}
	if st := call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": "still here?"}, nil); st < 400 {
		t.Errorf("a removed member posted: %d", st)
	}
	var back memberAnswer
	if st := call(t, "PUT", ctl+"/members/alice", nil, &back); st != 200 || !back.InGuild || back.Nick != "" || len(back.Roles) != 0 {
		t.Errorf("alice back: %d %+v, want a member again without her old nick", st, back)
	}
	expect("alice removed and back (no GUILD_MEMBERS)")

	var av struct{ Available bool }
	if st := call(t, "POST", ctl+"/guild/availability", map[string]any{"available": false}, &av); st != 200 || av.Available {
		t.Errorf("outage: %d %+v", st, av)
	}
	if d := g.until("GUILD_DELETE", op(0)); d.T != "GUILD_DELETE" || !strings.Contains(string(d.D), `"unavailable":true`) {
		t.Errorf("outage: the bot got %s %s, want GUILD_DELETE unavailable", d.T, d.D)
	}
	call(t, "POST", ctl+"/guild/availability", map[string]any{"available": true}, &av)
	if d := g.until("GUILD_CREATE", op(0)); d.T != "GUILD_CREATE" {
		t.Errorf("outage over: the bot got %s, want GUILD_CREATE", d.T)
	}
}

// TestControlAdminErrors: bad requests to the guild and action routes are refused with the status
// and an error naming what is wrong, and change nothing.
func TestControlAdminErrors(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		says         string
	}{
		{"PUT", "/members/mallory/roles/mods", nil, 404, "unknown member"},
		{"PUT", "/members/alice/roles/nope", nil, 404, "unknown role"},
		{"PATCH", "/members/alice", map[string]any{}, 400, `"nick" is required`},
		{"PATCH", "/members/alice", map[string]any{"nick": strings.Repeat("n", 33)}, 400, "at most 32"},
		{"DELETE", "/members/bot", nil, 400, "owns guild"},
		{"POST", "/roles", map[string]any{"permissions": "8"}, 400, `"name" is required`},
		{"POST", "/roles", map[string]any{"name": "x", "permissions": "admin"}, 400, "decimal bit set"},
		{"PATCH", "/roles/@everyone", map[string]any{"name": "all"}, 400, "cannot be renamed"},
		{"DELETE", "/roles/@everyone", nil, 400, "cannot be deleted"},
		{"PUT", "/channels/general/permissions/alice", map[string]any{"type": "user"}, 400, "allowed values are role, member"},
		{"PUT", "/channels/nope/permissions/alice", map[string]any{"type": "member"}, 404, "unknown channel"},
		{"PUT", "/channels/general/permissions/nobody", map[string]any{"type": "role"}, 404, "unknown role"},
		{"PUT", "/commands/nope/permissions", map[string]any{"permissions": []any{map[string]any{"type": "x"}}}, 404, "no command"},
		{"PUT", "/channels/general/permissions/alice", map[string]any{"type": "member", "deny": "x"}, 400, "permissions"},
		{"POST", "/guild/availability", map[string]any{}, 400, `"available" is required`},
		{"POST", "/guild/availability", map[string]any{"availble": true}, 400, "unknown field"},
		{"POST", "/typing", map[string]any{"as": "mallory", "channel": "general"}, 400, "unknown member"},
		{"POST", "/typing", map[string]any{"as": "alice"}, 400, `"channel" is required`},
		{"POST", "/commands/nope", map[string]any{"as": "alice", "channel": "general"}, 400, "no such command"},
		{"PUT", "/commands/nope/permissions", map[string]any{"permissions": []any{}}, 404, "no command"},
		{"GET", "/interactions/1", nil, 404, "unknown interaction"},
		{"POST", "/voice/move", map[string]any{"as": "alice", "channel": "Voice"}, 409, "not in voice"},
		{"POST", "/voice/move", map[string]any{"as": "alice", "channel": "nowhere"}, 400, "unknown channel"},
	} {
		var e struct{ Error string }
		if st := call(t, tc.method, ctl+tc.path, tc.body, &e); st != tc.status || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s %s %v: %d %q, want %d saying %q", tc.method, tc.path, tc.body, st, e.Error, tc.status, tc.says)
		}
	}
	var roles []roleAnswer
	call(t, "GET", ctl+"/roles", nil, &roles)
	if len(roles) != 1 || roles[0].Name != "@everyone" {
		t.Errorf("roles after refused requests: %+v", roles)
	}
	var raw json.RawMessage
	call(t, "GET", ctl+"/members", nil, &raw)
	if !strings.Contains(string(raw), `"alice"`) {
		t.Errorf("members after refused requests: %s", raw)
	}
}

// TestEventStreamGuildChanges: GET /events starts with every role and reports roles created,
// changed and deleted, and members whose roles, nickname or membership changed.
func TestEventStreamGuildChanges(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	next := eventStream(t, ctl)
	next("@everyone", func(e liveEvent) bool {
		return e.Type == "role" && e.Role.ID == f["guild"] && e.Role.Name == "@everyone"
	})
	var mods roleAnswer
	call(t, "POST", ctl+"/roles", map[string]any{"name": "mods"}, &mods)
	next("mods", func(e liveEvent) bool { return e.Type == "role" && e.Role.ID == mods.ID && e.Role.Permissions == "0" })
	call(t, "PATCH", ctl+"/roles/mods", map[string]any{"permissions": "8"}, nil)
	next("mods changed", func(e liveEvent) bool { return e.Type == "role" && e.Role.ID == mods.ID && e.Role.Permissions == "8" })
	call(t, "PUT", ctl+"/members/alice/roles/mods", nil, nil)
	next("alice's role", func(e liveEvent) bool {
		return e.Type == "member_update" && e.Member.Name == "alice" && slices.Equal(e.Member.Roles, []string{mods.ID})
	})
	call(t, "PATCH", ctl+"/members/alice", map[string]any{"nick": "ali"}, nil)
	next("alice's nick", func(e liveEvent) bool { return e.Type == "member_update" && e.Member.Nick == "ali" })
	call(t, "DELETE", ctl+"/roles/mods", nil, nil)
	next("mods deleted", func(e liveEvent) bool { return e.Type == "role_delete" && e.RoleID == mods.ID })
	next("alice without mods", func(e liveEvent) bool {
		return e.Type == "member_update" && e.Member.Name == "alice" && len(e.Member.Roles) == 0 && e.Member.InGuild
	})
	call(t, "DELETE", ctl+"/members/alice", nil, nil)
	next("alice removed", func(e liveEvent) bool {
		return e.Type == "member_update" && e.Member.Name == "alice" && !e.Member.InGuild
	})
}
