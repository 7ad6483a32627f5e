package discordsim

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// roleEventsWorld is a guild owned by alice with three connected sessions: the bot's without GUILD_MEMBERS
// (as banter identifies), alice's with it, bob's with neither GUILDS nor GUILD_MEMBERS.
type roleEventsWorld struct {
	*simWorld
	other        ChannelID
	bobID        UserID
	gw           map[string]*rawGW
	step         int
	mods, botOwn RoleID
}

// marker ends a step: alice posts a message every session sees, and each session's
// dispatches up to it are the step's.
func (w *roleEventsWorld) marker(t *testing.T) map[string][]gwFrame {
	t.Helper()
	w.step++
	content := fmt.Sprintf("step %d", w.step)
	if _, err := w.sim.Post(testCtx(t), w.alice, w.text, content); err != nil {
		t.Fatal(err)
	}
	got := map[string][]gwFrame{}
	for name, g := range w.gw {
		got[name] = []gwFrame{}
		for {
			f := g.read()
			if f.typ() == "MESSAGE_CREATE" {
				var m struct{ Content string }
				_ = json.Unmarshal(f.D, &m)
				if m.Content == content {
					break
				}
			}
			got[name] = append(got[name], f)
		}
	}
	return got
}

func types(fs []gwFrame) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.typ())
	}
	return out
}

func newRoleEventsWorld(t *testing.T) *roleEventsWorld {
	s := serve(t)
	alice := s.CreateUser("alice")
	g := s.CreateGuildOwnedBy("Sim Guild", alice) // not the bot's, so that it can be removed
	sw := &simWorld{sim: s, guild: g, alice: alice, text: s.CreateTextChannel(g, "general")}
	w := &roleEventsWorld{simWorld: sw, gw: map[string]*rawGW{}}
	w.other = w.sim.CreateTextChannel(w.guild, "other")
	w.bobID = w.sim.CreateUser("bob")
	must(t, w.sim.AddMember(w.guild, w.bobID))
	for name, id := range map[string]struct {
		token   string
		intents Intents
	}{
		"bot":   {w.sim.Token(), IntentGuilds | IntentGuildMessages | IntentMessageContent},
		"alice": {w.sim.UserToken(w.alice), IntentGuilds | IntentGuildMembers | IntentGuildMessages | IntentMessageContent},
		"bob":   {w.sim.UserToken(w.bobID), IntentGuildMessages | IntentMessageContent},
	} {
		g, _ := identify(t, w.sim, id.token, id.intents)
		if id.intents&IntentGuilds != 0 {
			g.until("GUILD_CREATE")
		}
		w.gw[name] = g
	}
	return w
}

// TestRoleAndMemberEvents: every change of roles, members' roles and nicknames and channel
// overwrites reaches connected sessions as Discord sends it: GUILD_ROLE_* with GUILDS,
// GUILD_MEMBER_UPDATE with GUILD_MEMBERS or to the member itself whatever its intents,
// CHANNEL_UPDATE with GUILDS, GUILD_MEMBER_REMOVE with GUILD_MEMBERS; the bot's managed role
// goes when the bot is removed.
func TestRoleAndMemberEvents(t *testing.T) {
	w := newRoleEventsWorld(t)
	type want map[string][]string
	roleCreate, roleUpdate, roleDelete := []string{"GUILD_ROLE_CREATE"}, []string{"GUILD_ROLE_UPDATE"}, []string{"GUILD_ROLE_DELETE"}
	memberUpdate, none := []string{"GUILD_MEMBER_UPDATE"}, []string{}
	steps := []struct {
		name  string
		do    func() error
		want  want
		check func(t *testing.T, got map[string][]gwFrame)
	}{
		{"create role", func() (err error) { w.mods, err = w.sim.CreateRole(w.guild, "mods"); return err },
			want{"bot": roleCreate, "alice": roleCreate, "bob": none},
			func(t *testing.T, got map[string][]gwFrame) {
				r := decodeRoleEvent(t, got["bot"][0], w.guild)
				if r.ID != w.mods || r.Name != "mods" || r.Permissions != "0" || r.Managed || !r.Mentionable || r.Tags != nil {
					t.Errorf("GUILD_ROLE_CREATE role %+v", r)
				}
			}},
		{"set permissions", func() error { return w.sim.SetRolePermissions(w.guild, w.mods, "8") },
			want{"bot": roleUpdate, "alice": roleUpdate, "bob": none},
			func(t *testing.T, got map[string][]gwFrame) {
				if r := decodeRoleEvent(t, got["alice"][0], w.guild); r.ID != w.mods || r.Permissions != "8" {
					t.Errorf("GUILD_ROLE_UPDATE role %+v, want permissions 8", r)
				}
			}},
		{"rename", func() error { return w.sim.RenameRole(w.guild, w.mods, "moderators") },
			want{"bot": roleUpdate, "alice": roleUpdate, "bob": none},
			func(t *testing.T, got map[string][]gwFrame) {
				if r := decodeRoleEvent(t, got["bot"][0], w.guild); r.Name != "moderators" || r.Permissions != "8" {
					t.Errorf("GUILD_ROLE_UPDATE role %+v, want moderators with permissions 8", r)
				}
			}},
		{"give role", func() error { return w.sim.GiveRole(w.guild, w.bobID, w.mods) },
			want{"bot": none, "alice": memberUpdate, "bob": memberUpdate},
			func(t *testing.T, got map[string][]gwFrame) {
				checkMemberUpdate(t, got["alice"][0], w.guild, w.bobID, []RoleID{w.mods}, "")
				checkMemberUpdate(t, got["bob"][0], w.guild, w.bobID, []RoleID{w.mods}, "")
			}},
		{"give it again", func() error { return w.sim.GiveRole(w.guild, w.bobID, w.mods) },
			want{"bot": none, "alice": none, "bob": none}, nil},
		{"nick", func() error { return w.sim.SetNick(w.guild, w.bobID, "bobby") },
			want{"bot": none, "alice": memberUpdate, "bob": memberUpdate},
			func(t *testing.T, got map[string][]gwFrame) {
				checkMemberUpdate(t, got["alice"][0], w.guild, w.bobID, []RoleID{w.mods}, "bobby")
			}},
		{"take role", func() error { return w.sim.TakeRole(w.guild, w.bobID, w.mods) },
			want{"bot": none, "alice": memberUpdate, "bob": memberUpdate},
			func(t *testing.T, got map[string][]gwFrame) {
				checkMemberUpdate(t, got["alice"][0], w.guild, w.bobID, []RoleID{}, "bobby")
			}},
		{"bot role", func() (err error) { w.botOwn, err = w.sim.CreateBotRole(w.guild); return err },
			want{"bot": {"GUILD_ROLE_CREATE", "GUILD_MEMBER_UPDATE"}, "alice": {"GUILD_ROLE_CREATE", "GUILD_MEMBER_UPDATE"}, "bob": none},
			func(t *testing.T, got map[string][]gwFrame) {
				r := decodeRoleEvent(t, got["bot"][0], w.guild)
				if r.ID != w.botOwn || !r.Managed || !r.Mentionable || r.Tags == nil || r.Tags.BotID != w.sim.BotID() || r.Name != "simbot" {
					t.Errorf("the bot's role %+v (tags %+v)", r, r.Tags)
				}
				checkMemberUpdate(t, got["bot"][1], w.guild, w.sim.BotID(), []RoleID{w.botOwn}, "")
			}},
		{"delete role", func() error { return w.sim.DeleteRole(w.guild, w.mods) },
			want{"bot": roleDelete, "alice": roleDelete, "bob": none},
			func(t *testing.T, got map[string][]gwFrame) {
				var d struct {
					GuildID GuildID `json:"guild_id"`
					RoleID  RoleID  `json:"role_id"`
				}
				if err := json.Unmarshal(got["alice"][0].D, &d); err != nil || d.GuildID != w.guild || d.RoleID != w.mods {
					t.Errorf("GUILD_ROLE_DELETE %s (%v)", got["alice"][0].D, err)
				}
			}},
		{"overwrite", func() error {
			return w.sim.SetChannelOverwrite(w.other, world.Overwrite{ID: string(w.bobID), Type: world.OverwriteMember, Deny: "2048", Allow: "0"})
		}, want{"bot": {"CHANNEL_UPDATE"}, "alice": {"CHANNEL_UPDATE"}, "bob": none}, nil},
	}
	for _, st := range steps {
		must(t, st.do())
		got := w.marker(t)
		for name, wt := range st.want {
			if g := types(got[name]); !slices.Equal(g, wt) {
				t.Fatalf("%s: %s's session got %v, want %v", st.name, name, g, wt)
			}
		}
		if st.check != nil {
			st.check(t, got)
		}
	}
	must(t, w.sim.RemoveMember(w.guild, w.sim.BotID()))
	if f := w.gw["bot"].read(); f.typ() != "GUILD_DELETE" {
		t.Errorf("the bot's session got %s on its removal, want GUILD_DELETE", f.typ())
	}
	delete(w.gw, "bot")
	got := w.marker(t)
	if g := types(got["alice"]); !slices.Equal(g, []string{"GUILD_MEMBER_REMOVE", "GUILD_ROLE_DELETE"}) {
		t.Errorf("alice's session got %v on the bot's removal, want its GUILD_MEMBER_REMOVE and its role's GUILD_ROLE_DELETE", g)
	}
}

func decodeRoleEvent(t *testing.T, f gwFrame, g GuildID) wireRole {
	t.Helper()
	var e struct {
		GuildID GuildID  `json:"guild_id"`
		Role    wireRole `json:"role"`
	}
	if err := json.Unmarshal(f.D, &e); err != nil || e.GuildID != g {
		t.Fatalf("%s %s: guild %s, want %s (%v)", f.typ(), f.D, e.GuildID, g, err)
	}
	return e.Role
}

func checkMemberUpdate(t *testing.T, f gwFrame, g GuildID, u UserID, roles []RoleID, nick string) {
	t.Helper()
	var m struct {
		wireMember
		GuildID GuildID `json:"guild_id"`
	}
	if err := json.Unmarshal(f.D, &m); err != nil {
		t.Fatal(err)
	}
	gotNick := ""
	if m.Nick != nil {
		gotNick = *m.Nick
	}
	if m.GuildID != g || m.User == nil || m.User.ID != u || !slices.Equal(m.Roles, roles) || gotNick != nick || m.JoinedAt == "" {
		t.Errorf("GUILD_MEMBER_UPDATE %s: want guild %s, user %s, roles %v, nick %q, joined_at", f.D, g, u, roles, nick)
	}
}

// TestRoleRules: the role and member changes Discord refuses are refused with an error that
// says why, and change nothing.
func TestRoleRules(t *testing.T) {
	w := newWorld(t)
	own, err := w.sim.CreateBotRole(w.guild)
	must(t, err)
	mods, err := w.sim.CreateRole(w.guild, "mods")
	must(t, err)
	everyone := RoleID(w.guild)
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"a second bot role", func() error { _, err := w.sim.CreateBotRole(w.guild); return err }},
		{"delete @everyone", func() error { return w.sim.DeleteRole(w.guild, everyone) }},
		{"delete the bot's role", func() error { return w.sim.DeleteRole(w.guild, own) }},
		{"rename @everyone", func() error { return w.sim.RenameRole(w.guild, everyone, "all") }},
		{"empty name", func() error { return w.sim.RenameRole(w.guild, mods, "") }},
		{"permissions not a number", func() error { return w.sim.SetRolePermissions(w.guild, mods, "admin") }},
		{"unknown role", func() error { return w.sim.GiveRole(w.guild, w.alice, "1") }},
		{"not a member", func() error { return w.sim.GiveRole(w.guild, "1", mods) }},
		{"nick too long", func() error { return w.sim.SetNick(w.guild, w.alice, "abcdefghijklmnopqrstuvwxyz0123456") }},
		{"unknown guild", func() error { _, err := w.sim.CreateRole("1", "x"); return err }},
	} {
		if err := tc.do(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	var g wireGuild
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild), "Bot "+w.sim.Token(), nil, &g)
	if len(g.Roles) != 3 || g.Roles[1].Name != "simbot" || g.Roles[2].Name != "mods" || g.Roles[2].Permissions != "0" {
		t.Errorf("roles after refused changes: %+v", g.Roles)
	}
}
