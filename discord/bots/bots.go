// Package bots tells other bots from people in a guild, by the bot flag of the user as Discord
// delivers it. The gateway state holds it for the members of GUILD_CREATE (without the
// GUILD_PRESENCES intent Discord sends the bot itself and the members in voice channels), of
// GUILD_MEMBER_ADD and GUILD_MEMBER_UPDATE (with the GUILD_MEMBERS intent), and for the member
// each VOICE_STATE_UPDATE carries (discordgo keeps it on the voice state, not among the guild's
// members). For a user the state does not know, Directory.Resolve fetches the member over REST
// (GET /guilds/{guild}/members/{user}) once and adds it to the state.
//
// The voice gateway's own events name users by id only (op 5 SPEAKING maps an SSRC to a user
// id, op 11 lists user ids): the flag always comes from the main gateway or REST.
package bots

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// Kind is what a user is, as far as banter knows.
type Kind uint8

const (
	// Unknown: neither the state nor a lookup has said yet.
	Unknown Kind = iota
	// Person is a user without the bot flag.
	Person
	// Bot is a user with the bot flag (a bot account, such as a music bot).
	Bot
)

// String returns "unknown", "person" or "bot".
func (k Kind) String() string {
	switch k {
	case Person:
		return "person"
	case Bot:
		return "bot"
	}
	return "unknown"
}

func kindOf(u *discordgo.User) Kind {
	switch {
	case u == nil:
		return Unknown
	case u.Bot:
		return Bot
	}
	return Person
}

// InState reports the user's kind from st alone, without I/O: the guild's member, else the
// member on the user's voice state. A nil state knows nobody.
func InState(st *discordgo.State, guildID, userID string) Kind {
	if st == nil {
		return Unknown
	}
	if m, err := st.Member(guildID, userID); err == nil && m != nil {
		st.RLock() // discordgo updates members in place under the state's lock
		k := kindOf(m.User)
		st.RUnlock()
		if k != Unknown {
			return k
		}
	}
	g, err := st.Guild(guildID)
	if err != nil || g == nil {
		return Unknown
	}
	st.RLock()
	defer st.RUnlock()
	for _, vs := range g.VoiceStates {
		if vs != nil && vs.UserID == userID && vs.Member != nil {
			return kindOf(vs.Member.User)
		}
	}
	return Unknown
}

// Fetch gets one guild member over REST.
type Fetch func(ctx context.Context, guildID, userID string) (*discordgo.Member, error)

// SessionFetch is a Fetch through a discordgo session (GET /guilds/{guild}/members/{user}).
func SessionFetch(s *discordgo.Session) Fetch {
	return func(ctx context.Context, guildID, userID string) (*discordgo.Member, error) {
		return s.GuildMember(guildID, userID, discordgo.WithContext(ctx))
	}
}

// Directory answers "is this user a bot?" for the guilds of a gateway state, asking REST for
// users the state does not know. It is safe for concurrent use.
type Directory struct {
	state func(guildID string) *discordgo.State
	fetch Fetch

	mu    sync.Mutex // guards calls
	calls map[member]*call
}

type member struct{ guild, user string }

// call is one REST lookup in flight, shared by every Resolve of the same member.
type call struct {
	done chan struct{} // closed when kind and err are set
	kind Kind
	err  error
}

// New returns a Directory over the gateway state that holds each guild (a shard's) and fetch.
func New(state func(guildID string) *discordgo.State, fetch Fetch) *Directory {
	return &Directory{state: state, fetch: fetch, calls: map[member]*call{}}
}

// Kind reports the user's kind from the gateway state alone (no I/O). A nil Directory knows
// nobody.
func (d *Directory) Kind(guildID, userID string) Kind {
	if d == nil || d.state == nil {
		return Unknown
	}
	return InState(d.state(guildID), guildID, userID)
}

// Resolve reports the user's kind: from the gateway state, else from the member fetched over
// REST, which the state then keeps, so that the next lookup needs no request. Concurrent
// Resolves of one member share one request; a failed one is not remembered (the next Resolve
// asks again). It returns Unknown and the error when the fetch fails or ctx ends first.
func (d *Directory) Resolve(ctx context.Context, guildID, userID string) (Kind, error) {
	if k := d.Kind(guildID, userID); k != Unknown {
		return k, nil
	}
	if d == nil {
		return Unknown, fmt.Errorf("bots: resolve user %s of guild %s: no directory", userID, guildID)
	}
	key := member{guildID, userID}
	d.mu.Lock()
	c, waiting := d.calls[key]
	if !waiting {
		// A call that ended since the check above added the member to the state before it
		// left calls (under mu): look again rather than ask Discord a second time.
		if k := d.Kind(guildID, userID); k != Unknown {
			d.mu.Unlock()
			return k, nil
		}
		c = &call{done: make(chan struct{})}
		d.calls[key] = c
	}
	d.mu.Unlock()
	if !waiting {
		c.kind, c.err = d.lookup(ctx, guildID, userID)
		d.mu.Lock()
		delete(d.calls, key)
		d.mu.Unlock()
		close(c.done)
	}
	select {
	case <-c.done:
		return c.kind, c.err
	case <-ctx.Done():
		return Unknown, fmt.Errorf("bots: resolve user %s of guild %s: %w", userID, guildID, ctx.Err())
	}
}

// lookup fetches the member and adds it to the guild's state.
func (d *Directory) lookup(ctx context.Context, guildID, userID string) (Kind, error) {
	if d.fetch == nil {
		return Unknown, fmt.Errorf("bots: resolve user %s of guild %s: no REST fetch", userID, guildID)
	}
	m, err := d.fetch(ctx, guildID, userID)
	if err == nil && (m == nil || m.User == nil || m.User.ID != userID) {
		err = errors.New("the answer carries no such user")
	}
	if err != nil {
		return Unknown, fmt.Errorf("bots: get member %s of guild %s: %w", userID, guildID, err)
	}
	if d.state != nil {
		if st := d.state(guildID); st != nil {
			m.GuildID = guildID
			_ = st.MemberAdd(m) // a guild the state lacks keeps nobody: the next lookup asks again
		}
	}
	return kindOf(m.User), nil
}
