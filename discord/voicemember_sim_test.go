package discord_test

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

// TestStateLearnsVoiceMembers: GUILD_CREATE lists only the bot and the members already in voice
// (no presences intent), so a member who joins voice later is known to the session's state only
// from their VOICE_STATE_UPDATE's member, which discordgo records without its member: the
// session keeps it (nickname and bot flag), as the voice pipeline names speakers from the state.
func TestStateLearnsVoiceMembers(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // a failure guard
	defer cancel()
	sim := simtest.Serve(t)
	g := sim.CreateGuild("g")
	vc := sim.CreateVoiceChannel(g, "Voice")
	alice := sim.CreateUser("alice")
	if err := sim.AddMember(g, alice); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetNick(g, alice, "Ali"); err != nil {
		t.Fatal(err)
	}
	s, err := discord.NewSession(discord.SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	s.LogLevel = -1
	created, voiced := make(chan struct{}, 1), make(chan string, 8)
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.GuildCreate) { created <- struct{}{} })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.VoiceStateUpdate) { voiced <- e.UserID })
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	select {
	case <-created:
	case <-ctx.Done():
		t.Fatal("no GUILD_CREATE")
	}
	if _, err := s.State.Member(string(g), string(alice)); err == nil {
		t.Fatal("alice is in the state before joining voice: GUILD_CREATE should not list her")
	}
	if _, err := sim.JoinVoice(alice, vc); err != nil {
		t.Fatal(err)
	}
	for u := ""; u != string(alice); {
		select {
		case u = <-voiced:
		case <-ctx.Done():
			t.Fatal("no VOICE_STATE_UPDATE for alice")
		}
	}
	m, err := s.State.Member(string(g), string(alice))
	if err != nil {
		t.Fatalf("alice is not in the state after her VOICE_STATE_UPDATE: %v", err)
	}
	s.State.RLock()
	nick, bot := m.Nick, m.User != nil && m.User.Bot
	s.State.RUnlock()
	if nick != "Ali" || bot {
		t.Errorf("alice in the state: nick %q bot %v, want Ali, a person", nick, bot)
	}
}
