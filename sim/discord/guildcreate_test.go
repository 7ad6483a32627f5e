package discordsim

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestGuildCreateMembersByIntent: as on Discord, GUILD_CREATE lists every member only to a
// session with the presences intent; without it, the session's own user and the members in voice
// channels (the members intent alone does not change it).
func TestGuildCreateMembersByIntent(t *testing.T) {
	w := newWorld(t, WithPrivilegedIntents(IntentGuildPresences|IntentGuildMembers|IntentMessageContent))
	bob := w.sim.CreateUser("bob")
	if err := w.sim.AddMember(w.guild, bob); err != nil {
		t.Fatal(err)
	}
	if _, err := w.sim.JoinVoice(bob, w.voice); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		intents Intents
		want    []UserID
	}{
		{"without presences", allIntents, []UserID{w.sim.BotID(), bob}},
		{"with presences", allIntents | IntentGuildPresences, []UserID{w.sim.BotID(), w.alice, bob}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := identify(t, w.sim, w.sim.Token(), tc.intents)
			f := g.read()
			var gc wireGuildCreate
			if err := json.Unmarshal(f.D, &gc); err != nil || f.typ() != "GUILD_CREATE" {
				t.Fatalf("got %s: %v", f.typ(), err)
			}
			var got []UserID
			for _, m := range gc.Members {
				got = append(got, m.User.ID)
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("members %v, want %v", got, want)
			}
			if len(gc.VoiceStates) != 1 || gc.VoiceStates[0].UserID != bob {
				t.Errorf("voice states %+v, want bob's", gc.VoiceStates)
			}
		})
	}
}
