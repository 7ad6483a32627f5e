package discordsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/banterbot/banter/sim/discord/world"
)

// TestMemberRolesREST: giving and taking members' roles through REST (PUT and DELETE
// /guilds/{g}/members/{u}/roles/{r}, PATCH /guilds/{g}/members/{u} "roles") is checked as
// Discord checks it: a managed role (the bot's) can be neither given nor taken, 403
// {"message":"Missing Permissions","code":50013}, whatever the caller's rank; the caller needs
// Manage Roles and a highest role above the role (the owner needs neither); unknown roles and
// members are 404 10011 and 10007. A refused change changes nothing. The world's own scripting
// (GiveRole, TakeRole) refuses a managed role too.
func TestMemberRolesREST(t *testing.T) {
	w := newWorld(t) // the bot owns the guild
	bob := w.sim.CreateUser("bob")
	must(t, w.sim.AddMember(w.guild, bob))
	own, err := w.sim.CreateBotRole(w.guild)
	must(t, err)
	mods, err := w.sim.CreateRole(w.guild, "mods")
	must(t, err)
	// helper has Manage Roles; made after mods, at the same position, it ranks below mods.
	helper, err := w.sim.CreateRoleWithPermissions(w.guild, "helper", "268435456")
	must(t, err)
	junior, err := w.sim.CreateRole(w.guild, "junior")
	must(t, err)
	base := "/api/v10/guilds/" + string(w.guild) + "/members/"
	bot, alice := "Bot "+w.sim.Token(), w.sim.UserToken(w.alice)
	rolesOf := func(u UserID) []RoleID {
		var m world.Member
		w.sim.Read(func(v *world.View) { m, _ = v.Member(w.guild, u) })
		return slices.Sorted(slices.Values(m.Roles))
	}
	sorted := func(rs ...RoleID) []RoleID { return slices.Sorted(slices.Values(rs)) }
	type errBody struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	for _, tc := range []struct {
		name         string
		auth, method string
		path         string
		body         any
		status, code int
		user         UserID
		roles        []RoleID // the user's roles afterwards
	}{
		{"give mods", bot, "PUT", string(w.alice) + "/roles/" + string(mods), nil, 204, 0, w.alice, []RoleID{mods}},
		{"give the bot's managed role", bot, "PUT", string(w.alice) + "/roles/" + string(own), nil, 403, 50013, w.alice, []RoleID{mods}},
		{"take the bot's managed role", bot, "DELETE", string(w.sim.BotID()) + "/roles/" + string(own), nil, 403, 50013, w.sim.BotID(), []RoleID{own}},
		{"PATCH adding the managed role", bot, "PATCH", string(w.alice), map[string]any{"roles": []RoleID{mods, own}}, 403, 50013, w.alice, []RoleID{mods}},
		{"PATCH dropping the managed role", bot, "PATCH", string(w.sim.BotID()), map[string]any{"roles": []RoleID{}}, 403, 50013, w.sim.BotID(), []RoleID{own}},
		{"PATCH keeping the managed role", bot, "PATCH", string(w.sim.BotID()), map[string]any{"roles": []RoleID{own, mods}}, 200, 0, w.sim.BotID(), sorted(own, mods)},
		{"PATCH another field", bot, "PATCH", string(w.alice), map[string]any{"communication_disabled_until": nil}, 400, 50035, w.alice, []RoleID{mods}},
		{"unknown role", bot, "PUT", string(w.alice) + "/roles/1", nil, 404, 10011, w.alice, []RoleID{mods}},
		{"unknown member", bot, "PUT", "1/roles/" + string(mods), nil, 404, 10007, w.alice, []RoleID{mods}},
		{"without Manage Roles", alice, "PUT", string(bob) + "/roles/" + string(junior), nil, 403, 50013, bob, nil},
		{"the caller gets Manage Roles", bot, "PUT", string(w.alice) + "/roles/" + string(helper), nil, 204, 0, w.alice, sorted(mods, helper)},
		{"a role above the caller's highest", alice, "PUT", string(bob) + "/roles/" + string(mods), nil, 403, 50013, bob, nil},
		{"a role below it", alice, "PUT", string(bob) + "/roles/" + string(junior), nil, 204, 0, bob, []RoleID{junior}},
		{"a managed role, even by a manager", alice, "PUT", string(bob) + "/roles/" + string(own), nil, 403, 50013, bob, []RoleID{junior}},
		{"take junior", alice, "DELETE", string(bob) + "/roles/" + string(junior), nil, 204, 0, bob, nil},
	} {
		var e errBody
		var out any = &e
		if tc.status < 300 {
			out = nil
		}
		resp := rest(t, w.sim, tc.method, base+tc.path, tc.auth, tc.body, out)
		if resp.StatusCode != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %+v, want %d code %d", tc.name, resp.StatusCode, e, tc.status, tc.code)
		}
		if tc.code == 50013 && e.Message != "Missing Permissions" {
			t.Errorf("%s: message %q, want Missing Permissions", tc.name, e.Message)
		}
		if got := rolesOf(tc.user); !slices.Equal(got, sorted(tc.roles...)) && len(got)+len(tc.roles) != 0 {
			t.Errorf("%s: %s holds %v, want %v", tc.name, tc.user, got, tc.roles)
		}
	}

	if err := w.sim.GiveRole(w.guild, bob, own); !errors.Is(err, world.ErrManagedRole) {
		t.Errorf("GiveRole of the managed role: %v, want ErrManagedRole", err)
	}
	if err := w.sim.TakeRole(w.guild, w.sim.BotID(), own); !errors.Is(err, world.ErrManagedRole) {
		t.Errorf("TakeRole of the managed role: %v, want ErrManagedRole", err)
	}
	var we *world.Error
	if err := w.sim.GiveRole(w.guild, bob, own); !errors.As(err, &we) || we.Status != http.StatusForbidden || we.Code != world.CodeMissingPerms {
		t.Errorf("GiveRole of the managed role: %v, want a 403 50013 world.Error", err)
	}
	if !slices.Contains(rolesOf(w.sim.BotID()), own) || slices.Contains(rolesOf(bob), own) {
		t.Errorf("after refused scripting: bot %v, bob %v", rolesOf(w.sim.BotID()), rolesOf(bob))
	}
}

// TestNewRolePosition: a new role is made at position 1, just above @everyone, and no other
// role moves (roles of equal position rank by id, the older higher), as on Discord; the REST
// roles, GUILD_ROLE_CREATE and GUILD_CREATE agree.
func TestNewRolePosition(t *testing.T) {
	w := newWorld(t)
	g, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	g.until("GUILD_CREATE")
	own, err := w.sim.CreateBotRole(w.guild)
	must(t, err)
	if r := decodeRoleEvent(t, g.until("GUILD_ROLE_CREATE"), w.guild); r.ID != own || r.Position != 1 {
		t.Errorf("the bot's role: GUILD_ROLE_CREATE %+v, want position 1", r)
	}
	for _, name := range []string{"mods", "vip"} {
		id, err := w.sim.CreateRole(w.guild, name)
		must(t, err)
		if r := decodeRoleEvent(t, g.until("GUILD_ROLE_CREATE"), w.guild); r.ID != id || r.Position != 1 {
			t.Errorf("%s: GUILD_ROLE_CREATE %+v, want position 1", name, r)
		}
	}
	var roles []wireRole
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild)+"/roles", "Bot "+w.sim.Token(), nil, &roles)
	got := map[string]int{}
	for _, r := range roles {
		got[r.Name] = r.Position
	}
	if want := map[string]int{"@everyone": 0, "simbot": 1, "mods": 1, "vip": 1}; !mapsEqual(got, want) {
		t.Errorf("role positions %v, want %v (nothing moved)", got, want)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// FuzzModifyMember feeds untrusted PATCH /guilds/{g}/members/{u} bodies (and, with current,
// /members/@me ones) through decoding and Server.modifyMember, as the owner, a moderator above
// alice, a peer with Manage Nicknames but no higher role, or alice herself: no panics, every
// refusal a 4xx world.Error that changed nothing (the request is all or nothing), and whatever
// is accepted applied its nick and leaves the member with unique, existing roles, never the
// managed one nor @everyone, and in voice only in a voice channel of the guild.
func FuzzModifyMember(f *testing.F) {
	s := New()
	g := s.CreateGuild("g")
	alice, mod, peer := s.CreateUser("alice"), s.CreateUser("mod"), s.CreateUser("peer")
	own, _ := s.CreateBotRole(g)
	mods, _ := s.CreateRoleWithPermissions(g, "mods", strconv.FormatUint(world.PermManageNicknames|world.PermManageRoles|
		world.PermMuteMembers|world.PermDeafenMembers|world.PermMoveMembers|world.PermConnect|world.PermViewChannel, 10))
	junior, _ := s.CreateRoleWithPermissions(g, "junior", strconv.FormatUint(world.PermManageNicknames, 10)) // below mods
	for u, r := range map[UserID]RoleID{alice: junior, mod: mods, peer: junior} {
		_ = s.AddMember(g, u)
		_ = s.GiveRole(g, u, r)
	}
	actors := []UserID{s.BotID(), mod, peer, alice}
	vc, tc := s.CreateVoiceChannel(g, "v"), s.CreateTextChannel(g, "t")
	_, _ = s.JoinVoice(alice, vc)
	for _, seed := range []struct {
		body    string
		actor   uint8
		current bool
	}{
		{`{"roles":["` + string(mods) + `"]}`, 0, false},
		{`{"roles":["` + string(mods) + `","` + string(own) + `"]}`, 0, false},
		{`{"roles":["` + string(g) + `","` + string(mods) + `","` + string(mods) + `"]}`, 0, false},
		{`{"roles":[]}`, 0, false}, {`{"roles":null}`, 0, false}, {`{"roles":[1,2]}`, 0, false}, {`{"nick":"x"}`, 0, false},
		{`{"nick":null}`, 0, false}, {`{"nick":3}`, 0, false}, {`{"nick":"123456789012345678901234567890123"}`, 0, false},
		{`{"deaf":true}`, 0, false}, {`{"flags":0}`, 0, false}, {`{}`, 0, false}, {`{"roles":["1"]}`, 0, false},
		{`{"channel_id":"` + string(vc) + `"}`, 0, false}, {`{"channel_id":null}`, 0, false}, {`{"channel_id":"abc"}`, 0, false},
		{`{"channel_id":7}`, 0, false}, {`{"channel_id":"` + string(tc) + `"}`, 0, false}, {`{"mute":true,"deaf":false}`, 0, false},
		{`{"mute":null}`, 0, false}, {`{"deaf":"yes"}`, 0, false},
		// Several fields, one refused: nothing applies.
		{`{"nick":"half","roles":["` + string(own) + `"]}`, 0, false},
		{`{"nick":"half","roles":["` + string(mods) + `"]}`, 1, false},
		{`{"nick":"half","mute":true}`, 2, false},
		{`{"nick":"half","channel_id":"` + string(tc) + `"}`, 1, false},
		{`{"roles":["` + string(junior) + `"],"channel_id":null}`, 1, false},
		// Another's nick: Manage Nicknames and a higher role; one's own: Change Nickname.
		{`{"nick":"by mod"}`, 1, false}, {`{"nick":"by peer"}`, 2, false}, {`{"nick":"mine"}`, 3, false},
		{`{"nick":"mine"}`, 3, true}, {`{"nick":null}`, 2, true}, {`{"roles":[]}`, 3, true}, {`{"avatar":null}`, 1, true},
	} {
		f.Add([]byte(seed.body), seed.actor, seed.current)
	}
	type snapshot struct {
		member world.Member
		voice  world.VoiceState
		in     bool
	}
	snap := func(u UserID) snapshot {
		var sn snapshot
		s.Read(func(v *world.View) {
			sn.member, _ = v.Member(g, u)
			sn.voice, sn.in = v.VoiceState(g, u)
		})
		return sn
	}
	f.Fuzz(func(t *testing.T, body []byte, actor uint8, current bool) {
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			return
		}
		by := actors[int(actor)%len(actors)]
		target := alice
		if current {
			target = by
		}
		before := snap(target)
		e, err := parseModifyMember(m, current)
		if err == nil {
			err = s.modifyMember(by, g, target, e)
		}
		after := snap(target)
		var we *world.Error
		switch {
		case err != nil && (!errors.As(err, &we) || we.Status < 400 || we.Status > 499):
			t.Fatalf("error without a 4xx: %v", err)
		case err != nil && !reflect.DeepEqual(before, after):
			t.Fatalf("refused (%v), yet %s went from %+v to %+v", err, target, before, after)
		case err == nil && e.Nick != nil && after.member.Nick != *e.Nick:
			t.Fatalf("accepted, yet %s's nick is %q, want %q", target, after.member.Nick, *e.Nick)
		}
		if _, in := s.VoiceStateOf(g, alice); !in { // disconnected: back in for the next input
			_, _ = s.JoinVoice(alice, vc)
		}
		s.Read(func(v *world.View) {
			mem, _ := v.Member(g, alice)
			gd, _ := v.Guild(g)
			if vs, ok := v.VoiceState(g, alice); ok && vs.Channel != vc {
				t.Fatalf("alice in voice channel %s, want %s (the guild's only one)", vs.Channel, vc)
			}
			if utf8.RuneCountInString(mem.Nick) > 32 {
				t.Fatalf("alice's nick %q is over 32 characters", mem.Nick)
			}
			seen := map[RoleID]bool{}
			for _, r := range mem.Roles {
				if seen[r] || r == own || r == RoleID(g) || !slices.ContainsFunc(gd.Roles, func(x world.Role) bool { return x.ID == r }) {
					t.Fatalf("alice holds %v", mem.Roles)
				}
				seen[r] = true
			}
		})
	})
}

// TestMemberNickREST: PATCH /guilds/{g}/members/{u} "nick" sets a member's nickname as
// Discord does: the caller needs Manage Nicknames (the owner needs nothing), else 403 50013
// and nothing changes; null or "" clears it; more than 32 characters is 400 50035; "@me"
// names the caller.
func TestMemberNickREST(t *testing.T) {
	w := newWorld(t) // the bot owns the guild
	bob := w.sim.CreateUser("bob")
	must(t, w.sim.AddMember(w.guild, bob))
	base := "/api/v10/guilds/" + string(w.guild) + "/members/"
	bot, alice := "Bot "+w.sim.Token(), w.sim.UserToken(w.alice)
	nickOf := func(u UserID) string {
		var m world.Member
		w.sim.Read(func(v *world.View) { m, _ = v.Member(w.guild, u) })
		return m.Nick
	}
	long := "123456789012345678901234567890123"
	for _, tc := range []struct {
		name         string
		auth, path   string
		body         any
		status, code int
		user         UserID
		nick         string // the user's nick afterwards
	}{
		{"owner names alice", bot, string(w.alice), map[string]any{"nick": "Al"}, 200, 0, w.alice, "Al"},
		{"alice without Manage Nicknames", alice, string(bob), map[string]any{"nick": "B"}, 403, 50013, bob, ""},
		{"too long", bot, string(bob), map[string]any{"nick": long}, 400, 50035, bob, ""},
		{"not a string", bot, string(bob), map[string]any{"nick": 3}, 400, 50035, bob, ""},
		{"the bot's own via @me", bot, "@me", map[string]any{"nick": "Banter"}, 200, 0, w.sim.BotID(), "Banter"},
		{"null clears", bot, string(w.alice), map[string]any{"nick": nil}, 200, 0, w.alice, ""},
	} {
		var e struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		}
		var out any = &e
		if tc.status < 300 {
			out = nil
		}
		resp := rest(t, w.sim, "PATCH", base+tc.path, tc.auth, tc.body, out)
		if resp.StatusCode != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %+v, want %d code %d", tc.name, resp.StatusCode, e, tc.status, tc.code)
		}
		if got := nickOf(tc.user); got != tc.nick {
			t.Errorf("%s: %s's nick %q, want %q", tc.name, tc.user, got, tc.nick)
		}
	}
}
