package discordsim

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// TestModifyGuildAFK: PATCH /guilds/{g} sets the guild's AFK channel and timeout as Discord
// does: Manage Guild is needed (403 50013 without it, nothing changed), the AFK channel must
// be a voice channel of the guild and afk_timeout one of Discord's values (400 50035 naming
// the field), other fields are refused as not simulated; a change answers the guild and
// reaches the members' sessions as GUILD_UPDATE (no channels, members or voice states in it),
// and null clears the channel. GET /guilds/{g} shows what was set.
func TestModifyGuildAFK(t *testing.T) {
	w := newWorld(t)
	admin := w.sim.CreateUser("admin")
	must(t, w.sim.AddMember(w.guild, admin))
	role, err := w.sim.CreateRoleWithPermissions(w.guild, "admins", strconv.FormatUint(world.PermManageGuild, 10))
	must(t, err)
	must(t, w.sim.GiveRole(w.guild, admin, role))
	afk := w.sim.CreateVoiceChannel(w.guild, "AFK")
	other := w.sim.CreateVoiceChannel(w.sim.CreateGuild("Other"), "elsewhere")
	gw, _ := identify(t, w.sim, w.sim.Token(), IntentGuilds)
	gw.until("GUILD_CREATE")

	path := "/api/v10/guilds/" + string(w.guild)
	type errBody struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	for _, tc := range []struct {
		name         string
		as           UserID
		body         map[string]any
		status, code int
	}{
		{"without Manage Guild", w.alice, map[string]any{"afk_channel_id": afk}, 403, 50013},
		{"a text channel", admin, map[string]any{"afk_channel_id": w.text}, 400, 50035},
		{"another guild's channel", admin, map[string]any{"afk_channel_id": other}, 400, 50035},
		{"not a snowflake", admin, map[string]any{"afk_channel_id": "lounge"}, 400, 50035},
		{"a timeout Discord does not offer", admin, map[string]any{"afk_timeout": 120}, 400, 50035},
		{"a field not simulated", admin, map[string]any{"name": "Renamed"}, 400, 50035},
	} {
		var e errBody
		resp := rest(t, w.sim, "PATCH", path, w.sim.UserToken(tc.as), tc.body, &e)
		if resp.StatusCode != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %+v, want %d code %d", tc.name, resp.StatusCode, e, tc.status, tc.code)
		}
	}
	var g wireGuild
	rest(t, w.sim, "GET", path, "Bot "+w.sim.Token(), nil, &g)
	if g.AFKChannelID != nil || g.AFKTimeout != world.DefaultAFKTimeout {
		t.Fatalf("after refused edits: afk_channel_id %v, afk_timeout %d; want null, %d", g.AFKChannelID, g.AFKTimeout, world.DefaultAFKTimeout)
	}

	resp := rest(t, w.sim, "PATCH", path, w.sim.UserToken(admin), map[string]any{"afk_channel_id": afk, "afk_timeout": 60}, &g)
	if resp.StatusCode != 200 || g.AFKChannelID == nil || *g.AFKChannelID != afk || g.AFKTimeout != 60 {
		t.Fatalf("PATCH: %d, afk_channel_id %v, afk_timeout %d", resp.StatusCode, g.AFKChannelID, g.AFKTimeout)
	}
	var upd map[string]json.RawMessage
	if err := json.Unmarshal(gw.until("GUILD_UPDATE").D, &upd); err != nil {
		t.Fatal(err)
	}
	if string(upd["afk_channel_id"]) != `"`+string(afk)+`"` || string(upd["afk_timeout"]) != "60" || string(upd["id"]) != `"`+string(w.guild)+`"` {
		t.Errorf("GUILD_UPDATE id %s afk_channel_id %s afk_timeout %s", upd["id"], upd["afk_channel_id"], upd["afk_timeout"])
	}
	for _, k := range []string{"channels", "members", "voice_states"} {
		if _, ok := upd[k]; ok {
			t.Errorf("GUILD_UPDATE carries %s (a GUILD_CREATE field)", k)
		}
	}

	rest(t, w.sim, "PATCH", path, w.sim.UserToken(admin), map[string]any{"afk_channel_id": nil}, &g)
	if g.AFKChannelID != nil || g.AFKTimeout != 60 {
		t.Errorf("after clearing: afk_channel_id %v, afk_timeout %d; want null, 60", g.AFKChannelID, g.AFKTimeout)
	}
	if err := json.Unmarshal(gw.until("GUILD_UPDATE").D, &upd); err != nil {
		t.Fatal(err)
	}
	if string(upd["afk_channel_id"]) != "null" {
		t.Errorf("GUILD_UPDATE after clearing: afk_channel_id %s, want null", upd["afk_channel_id"])
	}
}

// FuzzModifyGuild feeds untrusted PATCH /guilds/{g} bodies through decoding and the edit: no
// panics, every refusal a 4xx world.Error, and whatever is accepted leaves the guild with no
// AFK channel or a voice channel of its own, and a timeout Discord offers.
func FuzzModifyGuild(f *testing.F) {
	s := New()
	g := s.CreateGuild("g")
	vc, tc := s.CreateVoiceChannel(g, "v"), s.CreateTextChannel(g, "t")
	for _, seed := range []string{
		`{"afk_channel_id":"` + string(vc) + `"}`, `{"afk_channel_id":"` + string(tc) + `"}`, `{"afk_channel_id":null}`,
		`{"afk_channel_id":"abc"}`, `{"afk_channel_id":7}`, `{"afk_channel_id":"1"}`, `{"afk_timeout":60}`,
		`{"afk_timeout":61}`, `{"afk_timeout":null}`, `{"afk_timeout":"300"}`, `{"afk_timeout":3600.5}`,
		`{"afk_channel_id":"` + string(vc) + `","afk_timeout":900}`, `{"name":"x"}`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			return
		}
		e, err := parseModifyGuild(m)
		if err == nil {
			_, err = s.EditGuild(s.BotID(), g, e)
		}
		var we *world.Error
		if err != nil && (!errors.As(err, &we) || we.Status < 400 || we.Status > 499) {
			t.Fatalf("error without a 4xx: %v", err)
		}
		s.Read(func(v *world.View) {
			gd, _ := v.Guild(g)
			if gd.AFKChannel != "" && gd.AFKChannel != vc {
				t.Fatalf("AFK channel %s, want none or %s (the guild's only voice channel)", gd.AFKChannel, vc)
			}
			switch gd.AFKTimeout {
			case 60, 300, 900, 1800, 3600:
			default:
				t.Fatalf("afk_timeout %d", gd.AFKTimeout)
			}
		})
	})
}
