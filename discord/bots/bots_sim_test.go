package bots_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/bots"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

// TestBotsThroughTheGateway: banter's discordgo session (banter's intents: no GUILD_MEMBERS)
// against the Discord simulator. A bot that was a member before the session started is known
// from GUILD_CREATE; one that joined the guild afterwards (no GUILD_MEMBER_ADD without the
// intent) is known once its VOICE_STATE_UPDATE, whose member carries user.bot, has arrived;
// one the gateway never mentioned is fetched over REST once.
func TestBotsThroughTheGateway(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // a failure guard
	defer cancel()
	sim := simtest.Serve(t)
	g := sim.CreateGuild("g")
	vc := sim.CreateVoiceChannel(g, "Voice")
	alice, dj := sim.CreateUser("alice"), sim.CreateBotUser("dj")
	for _, u := range []discordsim.UserID{alice, dj} {
		if err := sim.AddMember(g, u); err != nil {
			t.Fatal(err)
		}
		// In voice before the session starts: GUILD_CREATE lists them (without the presences
		// intent it lists only the bot and the members in voice, as Discord does).
		if _, err := sim.JoinVoice(u, vc); err != nil {
			t.Fatal(err)
		}
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
	d := bots.New(func(string) *discordgo.State { return s.State }, bots.SessionFetch(s))
	gid := string(g)
	if k := d.Kind(gid, string(dj)); k != bots.Bot {
		t.Errorf("a bot member from GUILD_CREATE: %v", k)
	}
	if k := d.Kind(gid, string(alice)); k != bots.Person {
		t.Errorf("a person from GUILD_CREATE: %v", k)
	}

	// Joined the guild after the session started: unknown until its voice state arrives.
	music := sim.CreateBotUser("music")
	if err := sim.AddMember(g, music); err != nil {
		t.Fatal(err)
	}
	if k := d.Kind(gid, string(music)); k != bots.Unknown {
		t.Errorf("a bot that joined after GUILD_CREATE, before its voice state: %v (GUILD_MEMBER_ADD needs GUILD_MEMBERS)", k)
	}
	if _, err := sim.JoinVoice(music, vc); err != nil {
		t.Fatal(err)
	}
	for u := ""; u != string(music); {
		select {
		case u = <-voiced:
		case <-ctx.Done():
			t.Fatal("no VOICE_STATE_UPDATE for the music bot")
		}
	}
	if k := d.Kind(gid, string(music)); k != bots.Bot {
		t.Errorf("a bot from its VOICE_STATE_UPDATE's member: %v", k)
	}

	// Never mentioned by the gateway: one REST lookup, then the state knows.
	tts, bob := sim.CreateBotUser("tts"), sim.CreateUser("bob")
	for _, u := range []discordsim.UserID{tts, bob} {
		if err := sim.AddMember(g, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		u    discordsim.UserID
		want bots.Kind
	}{{tts, bots.Bot}, {bob, bots.Person}, {tts, bots.Bot}} {
		if k, err := d.Resolve(ctx, gid, string(c.u)); k != c.want || err != nil {
			t.Errorf("Resolve(%s) = %v, %v; want %v", c.u, k, err, c.want)
		}
	}
	gets := 0
	for _, r := range sim.RESTLog() {
		if r.Method == "GET" && strings.Contains(r.Path, "/members/") {
			gets++
		}
	}
	if gets != 2 {
		t.Errorf("%d member lookups over REST, want 2 (tts once, bob once)", gets)
	}
	if _, err := d.Resolve(ctx, gid, "100000000000000099"); err == nil {
		t.Error("Resolve of a user who is no member: no error")
	}
}
