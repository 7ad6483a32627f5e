package discordsim

import (
	"encoding/json"
	"testing"
)

// TestGuildOutageAndRemoval: a guild in an outage (SetGuildAvailable false) is a stub in READY
// with no GUILD_CREATE after it; its end sends GUILD_CREATE, a new outage GUILD_DELETE with
// unavailable true. Removing the bot from a guild (RemoveMember) sends GUILD_DELETE without
// unavailable; adding it back during an outage sends nothing until the outage ends.
func TestGuildOutageAndRemoval(t *testing.T) {
	s := serve(t)
	alice := s.CreateUser("alice")
	up := s.CreateGuild("up")
	down := s.CreateGuildOwnedBy("down", alice)
	if err := s.SetGuildAvailable(down, false); err != nil {
		t.Fatal(err)
	}
	g, ready := identify(t, s, s.Token(), allIntents)
	if len(ready.Guilds) != 2 {
		t.Fatalf("READY lists %d guilds, want both as stubs", len(ready.Guilds))
	}
	type guildEvent struct {
		ID          GuildID `json:"id"`
		Unavailable bool    `json:"unavailable"`
	}
	next := func(wantType string, wantID GuildID, wantUnavailable bool) {
		t.Helper()
		f := g.read()
		var e guildEvent
		if err := json.Unmarshal(f.D, &e); err != nil {
			t.Fatal(err)
		}
		if f.typ() != wantType || e.ID != wantID || e.Unavailable != wantUnavailable {
			t.Fatalf("got %s %s (unavailable %v), want %s %s (unavailable %v)", f.typ(), e.ID, e.Unavailable,
				wantType, wantID, wantUnavailable)
		}
	}
	next("GUILD_CREATE", up, false) // not the one in an outage
	steps := []struct {
		do      func() error
		typ     string
		unavail bool
	}{
		{func() error { return s.SetGuildAvailable(down, true) }, "GUILD_CREATE", false},
		{func() error { return s.SetGuildAvailable(down, false) }, "GUILD_DELETE", true},
		{func() error { return s.RemoveMember(down, s.BotID()) }, "GUILD_DELETE", false},
		{func() error {
			if err := s.AddMember(down, s.BotID()); err != nil { // still in the outage: nothing
				return err
			}
			return s.SetGuildAvailable(down, true)
		}, "GUILD_CREATE", false},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatal(err)
		}
		next(st.typ, down, st.unavail)
	}
	if err := s.RemoveMember(down, alice); err == nil {
		t.Error("removing the owner succeeded")
	}
}
