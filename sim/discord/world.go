package discordsim

import (
	"fmt"
	"slices"
	"time"
)

// ChannelType is a channel's type on the wire.
// https://discord.com/developers/docs/resources/channel#channel-object-channel-types
type ChannelType int

// Channel types the simulator knows.
const (
	ChannelText          ChannelType = 0
	ChannelDM            ChannelType = 1
	ChannelVoice         ChannelType = 2
	ChannelCategory      ChannelType = 4
	ChannelPublicThread  ChannelType = 11
	ChannelPrivateThread ChannelType = 12
)

// String names the channel type.
func (t ChannelType) String() string {
	switch t {
	case ChannelText:
		return "GUILD_TEXT"
	case ChannelDM:
		return "DM"
	case ChannelVoice:
		return "GUILD_VOICE"
	case ChannelCategory:
		return "GUILD_CATEGORY"
	case ChannelPublicThread:
		return "PUBLIC_THREAD"
	case ChannelPrivateThread:
		return "PRIVATE_THREAD"
	}
	return fmt.Sprintf("ChannelType(%d)", int(t))
}

func (t ChannelType) isThread() bool { return t == ChannelPublicThread || t == ChannelPrivateThread }

type user struct {
	id         UserID
	name       string
	globalName string
	bot        bool
	token      string
}

type member struct {
	user     UserID
	nick     string
	roles    []RoleID
	joinedAt time.Time
}

type role struct {
	id          RoleID
	name        string
	permissions string
	position    int
}

type voiceState struct {
	channel   ChannelID
	sessionID string
	selfMute  bool
	selfDeaf  bool
}

type guild struct {
	id          GuildID
	name        string
	owner       UserID
	createdAt   time.Time
	channels    []ChannelID // in creation order, threads included
	members     map[UserID]*member
	memberOrder []UserID
	roles       []*role
	voice       map[UserID]*voiceState
}

type channel struct {
	id        ChannelID
	guild     GuildID
	typ       ChannelType
	name      string
	position  int
	parent    ChannelID
	owner     UserID // threads
	createdAt time.Time
	msgs      []*message // in id order, deleted ones included
}

func (s *Server) createUser(name string, bot, isSelf bool) UserID {
	id := UserID(s.ids.nextString())
	u := &user{id: id, name: name, bot: bot, token: makeToken(id)}
	if !isSelf {
		u.globalName = name
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = u
	s.tokens[u.token] = id
	return id
}

// CreateUser creates a human user. Its token (UserToken) lets a second
// client, such as a discord.js process, log in as this user.
func (s *Server) CreateUser(name string) UserID { return s.createUser(name, false, false) }

// CreateBotUser creates another bot user (not the application's bot).
func (s *Server) CreateBotUser(name string) UserID { return s.createUser(name, true, false) }

// UserToken returns a user's token, or "" for an unknown user.
func (s *Server) UserToken(id UserID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.users[id]; u != nil {
		return u.token
	}
	return ""
}

// CreateGuild creates a guild with its @everyone role and the bot as a
// member. Sessions of the bot already connected get GUILD_CREATE.
func (s *Server) CreateGuild(name string) GuildID {
	id := GuildID(s.ids.nextNewMillisecond())
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	g := &guild{
		id: id, name: name, owner: s.bot, createdAt: now,
		members: map[UserID]*member{},
		roles:   []*role{{id: RoleID(id), name: "@everyone", permissions: everyonePermissions}},
		voice:   map[UserID]*voiceState{},
	}
	s.guilds[id] = g
	s.guildOrder = append(s.guildOrder, id)
	s.addMemberLocked(g, s.bot, now)
	for _, ss := range s.sessions {
		if ss.user == s.bot && ss.ownsGuild(id) {
			s.dispatchToLocked(ss, "GUILD_CREATE", s.wireGuildCreateLocked(g), IntentGuilds)
		}
	}
	s.notifyLocked()
	return id
}

// AddMember makes a user a member of a guild (dispatching
// GUILD_MEMBER_ADD to sessions with GUILD_MEMBERS) and, for a user with
// sessions, GUILD_CREATE to them.
func (s *Server) AddMember(g GuildID, u UserID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	gd, ok := s.guilds[g]
	if !ok {
		return fmt.Errorf("discordsim: add member: unknown guild %s", g)
	}
	if _, ok := s.users[u]; !ok {
		return fmt.Errorf("discordsim: add member: unknown user %s", u)
	}
	if _, ok := gd.members[u]; ok {
		return nil
	}
	s.addMemberLocked(gd, u, s.now())
	wm := s.wireMemberLocked(gd, u, true)
	ev := struct {
		wireMember
		GuildID GuildID `json:"guild_id"`
	}{wm, g}
	for _, ss := range s.sessions {
		if !ss.ownsGuild(g) {
			continue
		}
		if ss.user == u {
			s.dispatchToLocked(ss, "GUILD_CREATE", s.wireGuildCreateLocked(gd), IntentGuilds)
		} else if s.isMemberLocked(g, ss.user) {
			s.dispatchToLocked(ss, "GUILD_MEMBER_ADD", ev, IntentGuildMembers)
		}
	}
	s.notifyLocked()
	return nil
}

// CreateRole creates a mentionable role in a guild.
func (s *Server) CreateRole(g GuildID, name string) (RoleID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gd, ok := s.guilds[g]
	if !ok {
		return "", fmt.Errorf("discordsim: create role: unknown guild %s", g)
	}
	r := &role{id: RoleID(s.ids.nextString()), name: name, permissions: "0", position: len(gd.roles)}
	gd.roles = append(gd.roles, r)
	return r.id, nil
}

// GiveRole adds a role to a member.
func (s *Server) GiveRole(g GuildID, u UserID, r RoleID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	gd := s.guilds[g]
	if gd == nil || gd.members[u] == nil {
		return fmt.Errorf("discordsim: give role: %s is not a member of %s", u, g)
	}
	if !slices.ContainsFunc(gd.roles, func(x *role) bool { return x.id == r }) {
		return fmt.Errorf("discordsim: give role: unknown role %s", r)
	}
	gd.members[u].roles = append(gd.members[u].roles, r)
	return nil
}

// CreateTextChannel creates a text channel (type 0) in a guild.
func (s *Server) CreateTextChannel(g GuildID, name string) ChannelID {
	return s.mustCreateChannel(g, ChannelText, name, "")
}

// CreateVoiceChannel creates a voice channel (type 2) in a guild.
func (s *Server) CreateVoiceChannel(g GuildID, name string) ChannelID {
	return s.mustCreateChannel(g, ChannelVoice, name, "")
}

// CreateThread creates a public thread (type 11) under a text channel,
// owned by the given user, and dispatches THREAD_CREATE.
func (s *Server) CreateThread(parent ChannelID, owner UserID, name string) (ChannelID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.channels[parent]
	if p == nil || p.typ != ChannelText {
		return "", fmt.Errorf("discordsim: create thread: %s is not a text channel", parent)
	}
	c := s.createChannelLocked(s.guilds[p.guild], ChannelPublicThread, name, parent)
	c.owner = owner
	s.dispatchThreadCreateLocked(c)
	return c.id, nil
}

func (s *Server) mustCreateChannel(g GuildID, t ChannelType, name string, parent ChannelID) ChannelID {
	s.mu.Lock()
	defer s.mu.Unlock()
	gd := s.guilds[g]
	if gd == nil {
		panic(fmt.Sprintf("discordsim: create channel: unknown guild %s", g))
	}
	c := s.createChannelLocked(gd, t, name, parent)
	s.notifyLocked()
	for _, ss := range s.sessions {
		if s.seesGuildLocked(ss, g) {
			wc := s.wireChannelLocked(c)
			s.dispatchToLocked(ss, "CHANNEL_CREATE", wc, IntentGuilds)
		}
	}
	return c.id
}

func (s *Server) dispatchThreadCreateLocked(c *channel) {
	wc := s.wireChannelLocked(c)
	ev := struct {
		wireChannel
		NewlyCreated bool `json:"newly_created"`
	}{wc, true}
	for _, ss := range s.sessions {
		if s.seesGuildLocked(ss, c.guild) {
			s.dispatchToLocked(ss, "THREAD_CREATE", ev, IntentGuilds)
		}
	}
	s.notifyLocked()
}

// Channel describes a channel for tests.
type Channel struct {
	ID     ChannelID
	Guild  GuildID
	Type   ChannelType
	Name   string
	Parent ChannelID // for threads: the parent channel
	Owner  UserID    // for threads: who started it
}

// Channels returns a guild's channels, threads included, in creation order.
func (s *Server) Channels(g GuildID) []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	gd := s.guilds[g]
	if gd == nil {
		return nil
	}
	out := make([]Channel, 0, len(gd.channels))
	for _, id := range gd.channels {
		c := s.channels[id]
		out = append(out, Channel{ID: c.id, Guild: c.guild, Type: c.typ, Name: c.name, Parent: c.parent, Owner: c.owner})
	}
	return out
}
