package bots

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bwmarrin/discordgo"
)

const (
	guild  = "100000000000000001"
	alice  = "100000000000000010" // a person, a member in the state
	dj     = "100000000000000011" // a bot, a member in the state
	tts    = "100000000000000012" // a bot known by its voice state only
	carol  = "100000000000000013" // a person known by her voice state only
	newbot = "100000000000000014" // a bot the state does not know
)

// testState is a gateway state as GUILD_CREATE and VOICE_STATE_UPDATEs leave it.
func testState(t *testing.T) *discordgo.State {
	t.Helper()
	st := discordgo.NewState()
	user := func(id string, bot bool) *discordgo.User { return &discordgo.User{ID: id, Username: id, Bot: bot} }
	g := &discordgo.Guild{ID: guild,
		Members: []*discordgo.Member{
			{GuildID: guild, User: user(alice, false)},
			{GuildID: guild, User: user(dj, true)},
		},
		VoiceStates: []*discordgo.VoiceState{
			{UserID: alice, ChannelID: "7"},
			{UserID: tts, ChannelID: "7", Member: &discordgo.Member{User: user(tts, true)}},
			{UserID: carol, ChannelID: "7", Member: &discordgo.Member{User: user(carol, false)}},
			{UserID: newbot, ChannelID: "7"}, // a partial voice state, without its member
		},
	}
	if err := st.GuildAdd(g); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestInState: the state's members, then the members on voice states.
func TestInState(t *testing.T) {
	st := testState(t)
	for _, tt := range []struct {
		name, guild, user string
		want              Kind
	}{
		{"member person", guild, alice, Person},
		{"member bot", guild, dj, Bot},
		{"voice state bot", guild, tts, Bot},
		{"voice state person", guild, carol, Person},
		{"partial voice state", guild, newbot, Unknown},
		{"stranger", guild, "100000000000000099", Unknown},
		{"other guild", "100000000000000002", dj, Unknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := InState(st, tt.guild, tt.user); got != tt.want {
				t.Errorf("InState(%s) = %v, want %v", tt.user, got, tt.want)
			}
		})
	}
	if got := InState(nil, guild, dj); got != Unknown {
		t.Errorf("nil state: %v", got)
	}
}

// fakeFetch answers from members, counting requests; block, when set, holds every request
// until it is closed.
type fakeFetch struct {
	members map[string]*discordgo.Member
	err     error
	block   chan struct{}
	started chan struct{}
	n       atomic.Int32
}

func (f *fakeFetch) fetch(ctx context.Context, _, userID string) (*discordgo.Member, error) {
	f.n.Add(1)
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	m, ok := f.members[userID]
	if !ok {
		return nil, errors.New("HTTP 404 Not Found, {\"message\": \"Unknown Member\", \"code\": 10007}")
	}
	c := *m
	return &c, nil
}

// TestResolve: the state answers without a request; a user it does not know is fetched once
// and kept in the state; a failed fetch is not remembered.
func TestResolve(t *testing.T) {
	newbotMember := &discordgo.Member{User: &discordgo.User{ID: newbot, Bot: true}}
	for _, tt := range []struct {
		name     string
		user     string
		fetchErr error
		want     Kind
		requests int32
		wantErr  bool
	}{
		{"known member", dj, nil, Bot, 0, false},
		{"known voice state", tts, nil, Bot, 0, false},
		{"fetched", newbot, nil, Bot, 1, false},
		{"not a member", "100000000000000099", nil, Unknown, 1, true},
		{"fetch fails", newbot, errors.New("HTTP 502"), Unknown, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := testState(t)
			f := &fakeFetch{members: map[string]*discordgo.Member{newbot: newbotMember}, err: tt.fetchErr}
			d := New(func(string) *discordgo.State { return st }, f.fetch)
			got, err := d.Resolve(t.Context(), guild, tt.user)
			if got != tt.want || (err != nil) != tt.wantErr || f.n.Load() != tt.requests {
				t.Fatalf("Resolve = %v, %v after %d requests; want %v (error %v) after %d", got, err, f.n.Load(), tt.want, tt.wantErr, tt.requests)
			}
			// Asked again: what was fetched is in the state; a failure is asked again.
			again, _ := d.Resolve(t.Context(), guild, tt.user)
			if want := tt.requests * 2; tt.wantErr && f.n.Load() != want {
				t.Errorf("after a failure, the next Resolve made %d requests in all, want %d", f.n.Load(), want)
			}
			if !tt.wantErr && (again != tt.want || f.n.Load() != tt.requests || d.Kind(guild, tt.user) != tt.want) {
				t.Errorf("again: %v after %d requests, state says %v", again, f.n.Load(), d.Kind(guild, tt.user))
			}
		})
	}
}

// TestResolveShared: concurrent lookups of one member make one request; a caller whose
// context ends stops waiting without ending the others'.
func TestResolveShared(t *testing.T) {
	st := testState(t)
	f := &fakeFetch{members: map[string]*discordgo.Member{newbot: {User: &discordgo.User{ID: newbot, Bot: true}}},
		block: make(chan struct{}), started: make(chan struct{}, 8)}
	d := New(func(string) *discordgo.State { return st }, f.fetch)
	var wg sync.WaitGroup
	kinds := make([]Kind, 4)
	wg.Go(func() { kinds[0], _ = d.Resolve(t.Context(), guild, newbot) })
	<-f.started // the first caller's request is in flight
	for i := 1; i < len(kinds); i++ {
		wg.Go(func() { kinds[i], _ = d.Resolve(t.Context(), guild, newbot) })
	}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if k, err := d.Resolve(gone, guild, newbot); k != Unknown || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled caller: %v, %v", k, err)
	}
	close(f.block)
	wg.Wait()
	for i, k := range kinds {
		if k != Bot {
			t.Errorf("caller %d: %v", i, k)
		}
	}
	if n := f.n.Load(); n != 1 {
		t.Errorf("%d requests for one member, want 1", n)
	}
}
