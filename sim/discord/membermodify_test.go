package discordsim

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// Modify Guild Member as a whole: server mute and deafen are the member's, a request applies
// entirely or not at all, and nicknames follow the permission hierarchy.

// apiError is Discord's JSON error body.
type apiError struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
}

// patchMember sends PATCH /api/v10/guilds/{g}/members/{who} as token and returns the status
// and the error code (0 on success).
func patchMember(t *testing.T, s *Server, g GuildID, who, token string, body any) (int, int) {
	t.Helper()
	var e apiError
	resp := rest(t, s, "PATCH", "/api/v10/guilds/"+string(g)+"/members/"+who, token, body, &e)
	if resp.StatusCode < 300 {
		return resp.StatusCode, 0
	}
	return resp.StatusCode, e.Code
}

func decodeVoiceState(t *testing.T, f gwFrame) wireVoiceState {
	t.Helper()
	var st wireVoiceState
	if f.typ() != "VOICE_STATE_UPDATE" {
		t.Fatalf("got %s %s, want VOICE_STATE_UPDATE", f.typ(), f.D)
	}
	must(t, json.Unmarshal(f.D, &st))
	return st
}

// TestServerMuteStaysWithMember: a server mute and deafen set while the member is in voice
// are the member's (the guild member object's mute and deaf): they stay when the member leaves
// voice (GET member shows them), cannot be changed while it is out of voice (400 40032), and a
// rejoin's VOICE_STATE_UPDATE carries them again, as on Discord.
func TestServerMuteStaysWithMember(t *testing.T) {
	w := newWorld(t, WithVoiceBackend(&fakeVoice{endpoint: "localhost:8443"})) // the bot owns the guild
	bob := w.sim.CreateUser("bob")
	must(t, w.sim.AddMember(w.guild, bob))
	watcher, _ := identify(t, w.sim, w.sim.UserToken(bob), allIntents)
	watcher.until("GUILD_CREATE")
	bot, alice := "Bot "+w.sim.Token(), string(w.alice)
	member := func() wireMember {
		t.Helper()
		var m wireMember
		rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild)+"/members/"+alice, bot, nil, &m)
		return m
	}
	voiceEvent := func(wantIn, mute, deaf bool) {
		t.Helper()
		st := decodeVoiceState(t, watcher.until("VOICE_STATE_UPDATE"))
		if st.UserID != w.alice || (st.ChannelID != nil) != wantIn || st.Mute != mute || st.Deaf != deaf {
			t.Errorf("VOICE_STATE_UPDATE %+v, want alice in voice %v, mute %v, deaf %v", st, wantIn, mute, deaf)
		}
	}

	_, err := w.sim.JoinVoice(w.alice, w.voice)
	must(t, err)
	voiceEvent(true, false, false)
	if st, code := patchMember(t, w.sim, w.guild, alice, bot, map[string]any{"mute": true, "deaf": true}); st != 200 {
		t.Fatalf("server mute and deafen: %d code %d", st, code)
	}
	voiceEvent(true, true, true)
	must(t, w.sim.LeaveVoice(w.alice, w.voice))
	voiceEvent(false, true, true)
	if m := member(); !m.Mute || !m.Deaf {
		t.Errorf("GET member out of voice: mute %v deaf %v, want both true", m.Mute, m.Deaf)
	}
	if st, code := patchMember(t, w.sim, w.guild, alice, bot, map[string]any{"mute": false}); st != 400 || code != world.CodeNotInVoice {
		t.Errorf("unmute out of voice: %d code %d, want 400 %d", st, code, world.CodeNotInVoice)
	}
	if m := member(); !m.Mute {
		t.Error("a refused unmute unmuted")
	}

	_, err = w.sim.JoinVoice(w.alice, w.voice)
	must(t, err)
	voiceEvent(true, true, true)
	if vs, _ := w.sim.VoiceStateOf(w.guild, w.alice); !vs.Mute || !vs.Deaf {
		t.Errorf("voice state after the rejoin %+v, want server mute and deafen", vs)
	}
	if st, code := patchMember(t, w.sim, w.guild, alice, bot, map[string]any{"mute": false}); st != 200 {
		t.Fatalf("unmute: %d code %d", st, code)
	}
	voiceEvent(true, false, true)
	if m := member(); m.Mute || !m.Deaf {
		t.Errorf("GET member after the unmute: mute %v deaf %v, want false, true", m.Mute, m.Deaf)
	}
}

// TestModifyMemberAllOrNothing: a PATCH with several fields is checked whole before anything
// changes, as Discord does: one refused field (a managed role, a role not below the caller's,
// a member not in voice, a text channel) leaves nick, roles and voice state as they were and
// sends nothing; an accepted one applies every field, with one GUILD_MEMBER_UPDATE (nick and
// roles) and then one VOICE_STATE_UPDATE.
func TestModifyMemberAllOrNothing(t *testing.T) {
	w := newWorld(t, WithVoiceBackend(&fakeVoice{endpoint: "localhost:8443"})) // the bot owns the guild
	mod, bob := w.sim.CreateUser("mod"), w.sim.CreateUser("bob")
	own, err := w.sim.CreateBotRole(w.guild)
	must(t, err)
	mods, err := w.sim.CreateRoleWithPermissions(w.guild, "mods", strconv.FormatUint(world.PermManageNicknames|world.PermManageRoles|
		world.PermMuteMembers|world.PermMoveMembers|world.PermConnect|world.PermViewChannel, 10))
	must(t, err)
	junior, err := w.sim.CreateRole(w.guild, "junior") // below mods
	must(t, err)
	for _, u := range []UserID{mod, bob} {
		must(t, w.sim.AddMember(w.guild, u))
	}
	must(t, w.sim.GiveRole(w.guild, mod, mods))
	watcher, _ := identify(t, w.sim, w.sim.UserToken(bob), allIntents)
	watcher.until("GUILD_CREATE")
	bot, modTok, alice := "Bot "+w.sim.Token(), w.sim.UserToken(mod), string(w.alice)
	unchanged := func(name string) {
		t.Helper()
		var m world.Member
		w.sim.Read(func(v *world.View) { m, _ = v.Member(w.guild, w.alice) })
		vs, _ := w.sim.VoiceStateOf(w.guild, w.alice)
		if m.Nick != "" || len(m.Roles) != 0 || vs.Mute || (vs.Channel != "" && vs.Channel != w.voice) {
			t.Errorf("%s: refused, yet alice is %+v in voice %+v", name, m, vs)
		}
	}
	refused := []struct {
		name         string
		auth         string
		body         map[string]any
		status, code int
	}{
		{"a nick and a mute, not in voice", bot, map[string]any{"nick": "Al", "mute": true}, 400, world.CodeNotInVoice},
		{"join", "", nil, 0, 0},
		{"a nick and the managed role", modTok, map[string]any{"nick": "Al", "roles": []RoleID{own}}, 403, world.CodeMissingPerms},
		{"a nick and the caller's own top role", modTok, map[string]any{"nick": "Al", "roles": []RoleID{mods}}, 403, world.CodeMissingPerms},
		{"roles and a move to a text channel", bot, map[string]any{"roles": []RoleID{junior}, "channel_id": string(w.text)}, 400, world.CodeChannelType},
		{"a nick and a deafen without Deafen Members", modTok, map[string]any{"nick": "Al", "deaf": true}, 403, world.CodeMissingPerms},
	}
	for _, tc := range refused {
		if tc.body == nil {
			_, err := w.sim.JoinVoice(w.alice, w.voice)
			must(t, err)
			decodeVoiceState(t, watcher.read())
			continue
		}
		if st, code := patchMember(t, w.sim, w.guild, alice, tc.auth, tc.body); st != tc.status || code != tc.code {
			t.Errorf("%s: %d code %d, want %d code %d", tc.name, st, code, tc.status, tc.code)
		}
		unchanged(tc.name)
	}

	if st, code := patchMember(t, w.sim, w.guild, alice, modTok, map[string]any{"nick": "Al", "roles": []RoleID{junior}, "mute": true}); st != 200 {
		t.Fatalf("nick, roles and mute: %d code %d", st, code)
	}
	// Nothing reached the watcher for the refused requests: the next dispatches are these.
	f := watcher.read()
	var m wireGuildMember
	if f.typ() != "GUILD_MEMBER_UPDATE" {
		t.Fatalf("first dispatch after the requests: %s %s, want GUILD_MEMBER_UPDATE", f.typ(), f.D)
	}
	must(t, json.Unmarshal(f.D, &m))
	if m.User.ID != w.alice || m.Nick == nil || *m.Nick != "Al" || !slices.Equal(m.Roles, []RoleID{junior}) {
		t.Errorf("GUILD_MEMBER_UPDATE %s, want alice with nick Al and roles [junior]", f.D)
	}
	if st := decodeVoiceState(t, watcher.read()); st.UserID != w.alice || !st.Mute {
		t.Errorf("VOICE_STATE_UPDATE %+v, want alice server-muted", st)
	}
}

// TestMemberNickHierarchy: changing another member's nickname needs Manage Nicknames and a
// highest role above the target's (Administrator gives the permission, not the rank), and
// the owner's is nobody else's (403 50013); the owner may change anyone's. One's own, through
// PATCH /members/@me (Modify Current Member, nick alone), needs Change Nickname, or Manage
// Nicknames; other fields there are 400 50035.
func TestMemberNickHierarchy(t *testing.T) {
	s := serve(t)
	owner, mod, admin, peer, alice, plain := s.CreateUser("owner"), s.CreateUser("mod"), s.CreateUser("admin"),
		s.CreateUser("peer"), s.CreateUser("alice"), s.CreateUser("plain")
	g := s.CreateGuildOwnedBy("g", owner)
	manage := strconv.FormatUint(world.PermManageNicknames, 10)
	// Roles of equal position rank by age: mods above admins above junior.
	mods, err := s.CreateRoleWithPermissions(g, "mods", manage)
	must(t, err)
	admins, err := s.CreateRoleWithPermissions(g, "admins", strconv.FormatUint(world.PermAdministrator, 10))
	must(t, err)
	junior, err := s.CreateRoleWithPermissions(g, "junior", manage)
	must(t, err)
	for u, r := range map[UserID]RoleID{mod: mods, admin: admins, peer: junior, alice: junior, plain: ""} {
		must(t, s.AddMember(g, u))
		if r != "" {
			must(t, s.GiveRole(g, u, r))
		}
	}
	nickOf := func(u UserID) string {
		var m world.Member
		s.Read(func(v *world.View) { m, _ = v.Member(g, u) })
		return m.Nick
	}
	for _, tc := range []struct {
		name         string
		by           UserID
		target       string // a user id, or "@me"
		body         map[string]any
		status, code int
		whose        UserID
		nick         string // whose nick afterwards
	}{
		{"a moderator above alice", mod, string(alice), map[string]any{"nick": "a1"}, 200, 0, alice, "a1"},
		{"a peer of equal rank", peer, string(alice), map[string]any{"nick": "a2"}, 403, world.CodeMissingPerms, alice, "a1"},
		{"a peer below the moderator", peer, string(mod), map[string]any{"nick": "m1"}, 403, world.CodeMissingPerms, mod, ""},
		{"an Administrator above alice", admin, string(alice), map[string]any{"nick": "a3"}, 200, 0, alice, "a3"},
		{"an Administrator below the moderator", admin, string(mod), map[string]any{"nick": "m2"}, 403, world.CodeMissingPerms, mod, ""},
		{"the owner's, by the top moderator", mod, string(owner), map[string]any{"nick": "o1"}, 403, world.CodeMissingPerms, owner, ""},
		{"the owner's, by an Administrator", admin, string(owner), map[string]any{"nick": "o2"}, 403, world.CodeMissingPerms, owner, ""},
		{"without Manage Nicknames", plain, string(alice), map[string]any{"nick": "a4"}, 403, world.CodeMissingPerms, alice, "a3"},
		{"the owner, anyone's", owner, string(mod), map[string]any{"nick": "m3"}, 200, 0, mod, "m3"},
		{"the owner's own", owner, "@me", map[string]any{"nick": "o3"}, 200, 0, owner, "o3"},
		{"one's own with Change Nickname", plain, "@me", map[string]any{"nick": "p1"}, 200, 0, plain, "p1"},
		{"roles through @me", mod, "@me", map[string]any{"roles": []RoleID{}}, 400, world.CodeInvalidBody, mod, "m3"},
		{"a nick and roles through @me", plain, "@me", map[string]any{"nick": "p2", "roles": []RoleID{}}, 400, world.CodeInvalidBody, plain, "p1"},
		{"@everyone loses Change Nickname", "", "", nil, 0, 0, "", ""},
		{"one's own without it", plain, "@me", map[string]any{"nick": "p3"}, 403, world.CodeMissingPerms, plain, "p1"},
		{"one's own with Manage Nicknames", peer, "@me", map[string]any{"nick": "q1"}, 200, 0, peer, "q1"},
	} {
		if tc.by == "" {
			n, _ := strconv.ParseUint(world.EveryonePermissions, 10, 64)
			must(t, s.SetRolePermissions(g, RoleID(g), strconv.FormatUint(n&^world.PermChangeNickname, 10)))
			continue
		}
		if st, code := patchMember(t, s, g, tc.target, s.UserToken(tc.by), tc.body); st != tc.status || code != tc.code {
			t.Errorf("%s: %d code %d, want %d code %d", tc.name, st, code, tc.status, tc.code)
		}
		if got := nickOf(tc.whose); got != tc.nick {
			t.Errorf("%s: %s's nick %q, want %q", tc.name, tc.whose, got, tc.nick)
		}
	}
}
