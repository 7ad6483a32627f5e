package discordsim

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// TestMemberVoiceREST: PATCH /guilds/{g}/members/{u} with channel_id, mute and deaf does what
// a moderator's client does, checked as Discord checks it: the member must be in voice (400
// 40032), the caller needs Move Members (and Connect to the target), Mute Members, Deafen
// Members (403 50013), the target must be a voice channel of the guild (404 10003, 400
// 50024), a bad value is 400 50035; nothing changes on a refusal. Each change reaches the
// other members' sessions as a VOICE_STATE_UPDATE with the new channel, mute and deaf;
// channel_id null disconnects (channel_id null, the voice session revoked; the event keeps the
// member's server mute and deafen, which stay with the member).
func TestMemberVoiceREST(t *testing.T) {
	backend := &fakeVoice{endpoint: "localhost:8443"}
	w := newWorld(t, WithVoiceBackend(backend)) // the bot owns the guild
	bob, mod := w.sim.CreateUser("bob"), w.sim.CreateUser("mod")
	must(t, w.sim.AddMember(w.guild, bob))
	must(t, w.sim.AddMember(w.guild, mod))
	movers, err := w.sim.CreateRoleWithPermissions(w.guild, "movers",
		strconv.FormatUint(world.PermMoveMembers|world.PermMuteMembers|world.PermDeafenMembers|world.PermConnect|world.PermViewChannel, 10))
	must(t, err)
	must(t, w.sim.GiveRole(w.guild, mod, movers))
	other := w.sim.CreateVoiceChannel(w.guild, "Other")
	watcher, _ := identify(t, w.sim, w.sim.UserToken(bob), allIntents)
	watcher.until("GUILD_CREATE")

	base := "/api/v10/guilds/" + string(w.guild) + "/members/" + string(w.alice)
	modTok, bobTok := w.sim.UserToken(mod), w.sim.UserToken(bob)
	type state struct {
		in         bool
		channel    ChannelID
		mute, deaf bool
	}
	stateOf := func() state {
		vs, ok := w.sim.VoiceStateOf(w.guild, w.alice)
		return state{ok, vs.Channel, vs.Mute, vs.Deaf}
	}
	for _, tc := range []struct {
		name         string
		auth         string
		body         any
		status, code int
		want         state
		event        bool // a VOICE_STATE_UPDATE for alice follows
	}{
		{"not in voice", modTok, map[string]any{"channel_id": string(other)}, 400, 40032, state{}, false},
		{"join", "", nil, 0, 0, state{true, w.voice, false, false}, true},
		{"move without Move Members", bobTok, map[string]any{"channel_id": string(other)}, 403, 50013, state{true, w.voice, false, false}, false},
		{"move to a text channel", modTok, map[string]any{"channel_id": string(w.text)}, 400, 50024, state{true, w.voice, false, false}, false},
		{"move to an unknown channel", modTok, map[string]any{"channel_id": "123"}, 404, 10003, state{true, w.voice, false, false}, false},
		{"channel_id not a snowflake", modTok, map[string]any{"channel_id": "abc"}, 400, 50035, state{true, w.voice, false, false}, false},
		{"mute not a boolean", modTok, map[string]any{"mute": "yes"}, 400, 50035, state{true, w.voice, false, false}, false},
		{"move", modTok, map[string]any{"channel_id": string(other)}, 200, 0, state{true, other, false, false}, true},
		{"mute without Mute Members", bobTok, map[string]any{"mute": true}, 403, 50013, state{true, other, false, false}, false},
		{"mute", modTok, map[string]any{"mute": true}, 200, 0, state{true, other, true, false}, true},
		{"deafen without Deafen Members", bobTok, map[string]any{"deaf": true}, 403, 50013, state{true, other, true, false}, false},
		{"deafen, mute null leaves it", modTok, map[string]any{"deaf": true, "mute": nil}, 200, 0, state{true, other, true, true}, true},
		{"a muted member moved stays muted", modTok, map[string]any{"channel_id": string(w.voice)}, 200, 0, state{true, w.voice, true, true}, true},
		{"disconnect", modTok, map[string]any{"channel_id": nil}, 200, 0, state{}, true},
	} {
		if tc.name == "join" {
			if _, err := w.sim.JoinVoice(w.alice, w.voice); err != nil {
				t.Fatal(err)
			}
		} else {
			var e struct {
				Code int `json:"code"`
			}
			var out any = &e
			if tc.status < 300 {
				out = nil
			}
			resp := rest(t, w.sim, "PATCH", base, tc.auth, tc.body, out)
			if resp.StatusCode != tc.status || e.Code != tc.code {
				t.Errorf("%s: %d code %d, want %d code %d", tc.name, resp.StatusCode, e.Code, tc.status, tc.code)
			}
		}
		if got := stateOf(); got != tc.want {
			t.Errorf("%s: alice's voice state %+v, want %+v", tc.name, got, tc.want)
		}
		if !tc.event {
			continue
		}
		f := watcher.until("VOICE_STATE_UPDATE")
		var st wireVoiceState
		if err := json.Unmarshal(f.D, &st); err != nil {
			t.Fatal(err)
		}
		got := state{st.ChannelID != nil, "", st.Mute, st.Deaf}
		if st.ChannelID != nil {
			got.channel = *st.ChannelID
		}
		want := tc.want
		if !want.in { // a leave carries the member's server mute and deafen, which stay
			want.mute, want.deaf = true, true
		}
		if st.UserID != w.alice || got != want {
			t.Errorf("%s: VOICE_STATE_UPDATE %s, want alice's %+v", tc.name, f.D, tc.want)
		}
	}
	if got := backend.awaitRevoked(t, 1); len(got) != 1 || got[0] != w.alice {
		t.Errorf("voice sessions revoked: %v, want alice's", got)
	}
}

// TestBotMovedByREST: a moderator's PATCH channel_id moves the bot as Discord does: the
// bot's own gateway session gets its VOICE_STATE_UPDATE in the new channel, then a
// VOICE_SERVER_UPDATE with a fresh token, granted for the new channel.
func TestBotMovedByREST(t *testing.T) {
	backend := &fakeVoice{endpoint: "localhost:8443"}
	w := newWorld(t, WithVoiceBackend(backend))
	other := w.sim.CreateVoiceChannel(w.guild, "Other")
	bot, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	bot.until("GUILD_CREATE")
	bot.send(map[string]any{"op": 4, "d": map[string]any{"guild_id": w.guild, "channel_id": w.voice, "self_mute": false, "self_deaf": false}})
	bot.until("VOICE_STATE_UPDATE")
	first := bot.until("VOICE_SERVER_UPDATE")

	// The bot owns the guild; alice, the moderator, needs Move Members.
	movers, err := w.sim.CreateRoleWithPermissions(w.guild, "movers", strconv.FormatUint(world.PermMoveMembers|world.PermConnect|world.PermViewChannel, 10))
	must(t, err)
	must(t, w.sim.GiveRole(w.guild, w.alice, movers))
	resp := rest(t, w.sim, "PATCH", "/api/v10/guilds/"+string(w.guild)+"/members/"+string(w.sim.BotID()),
		w.sim.UserToken(w.alice), map[string]any{"channel_id": string(other)}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("move: %d", resp.StatusCode)
	}
	var st wireVoiceState
	if err := json.Unmarshal(bot.until("VOICE_STATE_UPDATE").D, &st); err != nil {
		t.Fatal(err)
	}
	if st.UserID != w.sim.BotID() || st.ChannelID == nil || *st.ChannelID != other {
		t.Fatalf("bot's VOICE_STATE_UPDATE after the move: %+v, want it in %s", st, other)
	}
	next := bot.until("VOICE_SERVER_UPDATE")
	var a, b struct{ Token string }
	must(t, json.Unmarshal(first.D, &a))
	must(t, json.Unmarshal(next.D, &b))
	if a.Token == b.Token {
		t.Errorf("the move's VOICE_SERVER_UPDATE reuses token %s", a.Token)
	}
	grants := backend.grants()
	if last := grants[len(grants)-1]; last.ChannelID != other || last.Token != b.Token {
		t.Errorf("last voice grant %+v, want %s's for %s", last, b.Token, other)
	}
}
