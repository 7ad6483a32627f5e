package discordsim

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// TestRemovedMemberLeavesVoice: removing a member who is in voice disconnects them, as
// Discord does: the other members' sessions get GUILD_MEMBER_REMOVE, then VOICE_STATE_UPDATE
// with channel_id null and no member object (the user is no member any more); the world
// holds no voice state for them and the voice backend revokes their voice session.
func TestRemovedMemberLeavesVoice(t *testing.T) {
	backend := &fakeVoice{endpoint: "localhost:8443"}
	w := newWorld(t, WithVoiceBackend(backend))
	bob := w.sim.CreateUser("bob")
	must(t, w.sim.AddMember(w.guild, bob))
	alice, _ := identify(t, w.sim, w.sim.UserToken(w.alice), allIntents)
	alice.until("GUILD_CREATE")
	if _, err := w.sim.JoinVoice(bob, w.voice); err != nil {
		t.Fatal(err)
	}
	if f := alice.read(); f.typ() != "VOICE_STATE_UPDATE" {
		t.Fatalf("bob's join: alice got %s", f.typ())
	}

	must(t, w.sim.RemoveMember(w.guild, bob))
	if f := alice.read(); f.typ() != "GUILD_MEMBER_REMOVE" {
		t.Fatalf("first after the kick: %s %s, want GUILD_MEMBER_REMOVE", f.typ(), f.D)
	}
	f := alice.read()
	var st wireVoiceState
	if err := json.Unmarshal(f.D, &st); err != nil {
		t.Fatal(err)
	}
	if f.typ() != "VOICE_STATE_UPDATE" || st.UserID != bob || st.ChannelID != nil || st.GuildID != w.guild || st.Member != nil {
		t.Fatalf("then %s %s, want bob's VOICE_STATE_UPDATE with channel_id null and no member", f.typ(), f.D)
	}
	if _, ok := w.sim.VoiceStateOf(w.guild, bob); ok {
		t.Error("bob still has a voice state after his removal")
	}
	if got := backend.awaitRevoked(t, 1); !slices.Equal(got, []UserID{bob}) {
		t.Errorf("voice sessions revoked: %v, want bob's", got)
	}

	// Removing a member who is not in voice sends no VOICE_STATE_UPDATE and revokes nothing.
	carol := w.sim.CreateUser("carol")
	must(t, w.sim.AddMember(w.guild, carol))
	alice.until("GUILD_MEMBER_ADD")
	must(t, w.sim.RemoveMember(w.guild, carol))
	alice.until("GUILD_MEMBER_REMOVE")
	if _, err := w.sim.Post(testCtx(t), w.alice, w.text, "marker"); err != nil {
		t.Fatal(err)
	}
	if f := alice.read(); f.typ() != "MESSAGE_CREATE" {
		t.Errorf("after carol's removal: %s %s, want nothing before the marker", f.typ(), f.D)
	}
	if got := backend.revoked(); len(got) != 1 {
		t.Errorf("voice sessions revoked: %v, want bob's only", got)
	}
}

// TestNoGuildEventsDuringOutage: changes made while a guild is unavailable send nothing to
// its members' sessions (Discord sends nothing for a guild in an outage); the GUILD_CREATE
// that ends the outage carries them: the new role (at position 1), members' roles and
// nicknames, a member removed gone, a member added there.
func TestNoGuildEventsDuringOutage(t *testing.T) {
	w := newWorld(t)
	bob, carol, dave := w.sim.CreateUser("bob"), w.sim.CreateUser("carol"), w.sim.CreateUser("dave")
	must(t, w.sim.AddMember(w.guild, bob))
	must(t, w.sim.AddMember(w.guild, carol))
	sessions := map[string]*rawGW{}
	for name, token := range map[string]string{"bot": w.sim.Token(), "alice": w.sim.UserToken(w.alice)} {
		// With the presences intent GUILD_CREATE lists every member, not only those in voice.
		g, _ := identify(t, w.sim, token, allIntents|IntentGuildPresences)
		g.until("GUILD_CREATE")
		sessions[name] = g
	}
	must(t, w.sim.SetGuildAvailable(w.guild, false))
	for name, g := range sessions {
		if f := g.read(); f.typ() != "GUILD_DELETE" {
			t.Fatalf("%s: outage began with %s, want GUILD_DELETE", name, f.typ())
		}
	}
	mods, err := w.sim.CreateRole(w.guild, "mods")
	must(t, err)
	must(t, w.sim.SetRolePermissions(w.guild, mods, "8"))
	must(t, w.sim.GiveRole(w.guild, bob, mods))
	must(t, w.sim.SetNick(w.guild, bob, "bobby"))
	must(t, w.sim.RemoveMember(w.guild, carol))
	must(t, w.sim.AddMember(w.guild, dave))
	must(t, w.sim.GiveRole(w.guild, w.alice, mods))
	must(t, w.sim.SetGuildAvailable(w.guild, true))
	for name, g := range sessions {
		f := g.read()
		if f.typ() != "GUILD_CREATE" {
			t.Fatalf("%s: got %s %s during the outage, want nothing before its GUILD_CREATE", name, f.typ(), f.D)
		}
		var gc struct {
			Roles   []wireRole   `json:"roles"`
			Members []wireMember `json:"members"`
		}
		if err := json.Unmarshal(f.D, &gc); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(gc.Roles, func(r wireRole) bool { return r.ID == mods })
		if i < 0 || gc.Roles[i].Permissions != "8" || gc.Roles[i].Position != 1 {
			t.Errorf("%s: GUILD_CREATE roles %+v, want mods at position 1 with permissions 8", name, gc.Roles)
		}
		members := map[UserID]wireMember{}
		for _, m := range gc.Members {
			members[m.User.ID] = m
		}
		if m, ok := members[bob]; !ok || !slices.Equal(m.Roles, []RoleID{mods}) || m.Nick == nil || *m.Nick != "bobby" {
			t.Errorf("%s: bob in GUILD_CREATE: %+v (present %v), want roles [mods], nick bobby", name, m, ok)
		}
		if _, ok := members[carol]; ok {
			t.Errorf("%s: carol, removed during the outage, is in GUILD_CREATE", name)
		}
		if _, ok := members[dave]; !ok {
			t.Errorf("%s: dave, added during the outage, is not in GUILD_CREATE", name)
		}
	}
}

// TestRemovedMemberLeavesVoiceSim: a simulated voice member (a real voicesim participant)
// removed from the guild is taken out of the voice server's channel too.
func TestRemovedMemberLeavesVoiceSim(t *testing.T) {
	vs := voicetest.Serve(t)
	w := newWorld(t, WithVoiceSim(vs))
	if _, err := w.sim.JoinVoiceMember(testCtx(t), w.alice, w.voice, voicesim.MemberOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := vs.Users(string(w.guild), string(w.voice)); !slices.Equal(got, []string{string(w.alice)}) {
		t.Fatalf("voice server's channel: %v, want alice", got)
	}
	must(t, w.sim.RemoveMember(w.guild, w.alice))
	if got := vs.Users(string(w.guild), string(w.voice)); len(got) != 0 {
		t.Errorf("voice server's channel after alice's removal: %v, want nobody", got)
	}
}
