package world

import (
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// EveryonePermissions is the @everyone permission set of a new guild.
const EveryonePermissions = "2248473465835073"

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

// IsThread reports whether the type is a thread.
func (t ChannelType) IsThread() bool { return t == ChannelPublicThread || t == ChannelPrivateThread }

// User is a user as others see it.
type User struct {
	ID         UserID
	Name       string
	GlobalName string // "" for the application's bot
	Bot        bool
}

// Guild is a guild's snapshot.
type Guild struct {
	ID        GuildID
	Name      string
	Owner     UserID
	CreatedAt time.Time
	Channels  []ChannelID // in creation order, threads included
	Members   []UserID    // in join order
	Roles     []Role      // @everyone (id = guild id) first

	// AFKChannel is the guild's AFK voice channel ("" none); AFKTimeout how many seconds a
	// member idle in voice waits before Discord moves them there (EditGuild).
	AFKChannel ChannelID
	AFKTimeout int
}

// Member is a user's membership of a guild.
type Member struct {
	User     UserID
	Nick     string
	Roles    []RoleID
	JoinedAt time.Time
	// Mute and Deaf are the server mute and deafen (the guild member object's mute and deaf):
	// a moderator sets them while the member is in voice (ModifyMember), and they stay with the
	// member when it leaves voice, applying again when it rejoins.
	Mute, Deaf bool
}

// Role is a guild role.
type Role struct {
	ID          RoleID
	Name        string
	Permissions string
	Position    int
	// Managed: the role belongs to an integration and cannot be given by hand; BotID is the bot
	// it was made for (the role object's tags.bot_id), as Discord makes one for a bot invited
	// with permissions.
	Managed bool
	BotID   UserID
}

// Channel describes a channel or thread.
type Channel struct {
	ID        ChannelID
	Guild     GuildID
	Type      ChannelType
	Name      string
	Position  int
	Parent    ChannelID // for threads: the parent channel
	Owner     UserID    // for threads: who started it
	CreatedAt time.Time
	// LastMessage is the newest live message ("" if none); MessageCount
	// counts the live messages.
	LastMessage  MessageID
	MessageCount int
	// Overwrites are the channel's permission overwrites.
	Overwrites []Overwrite
}

type user struct {
	id         UserID
	name       string
	globalName string
	bot        bool
	token      string
}

type guild struct {
	id          GuildID
	name        string
	owner       UserID
	createdAt   time.Time
	afkChannel  ChannelID // "" none (EditGuild)
	afkTimeout  int       // seconds; 0 is Discord's default, 300
	channels    []ChannelID
	members     map[UserID]*Member
	memberOrder []UserID
	roles       []Role
	voice       map[UserID]*VoiceState
	// commandPerms are the guild's overrides of who may use a command (SetCommandPermissions).
	commandPerms map[CommandID][]CommandPermission
	// unavailable: in an outage (SetGuildAvailable): READY lists it, no GUILD_CREATE follows.
	unavailable bool
}

type channel struct {
	id         ChannelID
	guild      GuildID
	typ        ChannelType
	name       string
	position   int
	parent     ChannelID
	owner      UserID
	createdAt  time.Time
	msgs       []*Message  // in id order, deleted ones included
	overwrites []Overwrite // permission overwrites (not on threads: they take their parent's)
}

func (w *World) createUserLocked(name string, bot, isSelf bool) UserID {
	id := UserID(w.ids.nextString())
	u := &user{id: id, name: name, bot: bot, token: makeToken(id)}
	if !isSelf {
		u.globalName = name
	}
	w.st.users[id] = u
	w.st.tokens[u.token] = id
	return id
}

// CreateUser creates a human user. Its token (UserToken) lets a second
// client log in as this user.
func (w *World) CreateUser(name string) UserID {
	w.lock()
	defer w.mu.Unlock()
	return w.createUserLocked(name, false, false)
}

// CreateBotUser creates another bot user (not the application's bot).
func (w *World) CreateBotUser(name string) UserID {
	w.lock()
	defer w.mu.Unlock()
	return w.createUserLocked(name, true, false)
}

// BotID returns the application's bot user, which is also the application.
func (w *World) BotID() UserID { return w.st.bot } // set once by New

// UserToken returns a user's token, or "" for an unknown user.
func (w *World) UserToken(id UserID) string {
	v := w.lock()
	defer w.mu.Unlock()
	return v.Token(id)
}

// CreateGuild creates a guild with its @everyone role and the bot as a
// member, owned by the bot.
func (w *World) CreateGuild(name string) GuildID {
	return w.CreateGuildOwnedBy(name, "")
}

// CreateGuildOwnedBy creates a guild owned by a user (a member with every permission, whom
// no channel overwrite restricts), with its @everyone role and the bot as a member; an empty
// or unknown owner is the bot.
func (w *World) CreateGuildOwnedBy(name string, owner UserID) GuildID {
	id := GuildID(w.ids.nextNewMillisecond())
	w.lock()
	defer w.mu.Unlock()
	now := w.now()
	if owner == "" || w.st.users[owner] == nil {
		owner = w.st.bot
	}
	g := &guild{
		id: id, name: name, owner: owner, createdAt: now,
		members: map[UserID]*Member{},
		roles:   []Role{{ID: RoleID(id), Name: "@everyone", Permissions: EveryonePermissions}},
		voice:   map[UserID]*VoiceState{},
	}
	w.st.guilds[id] = g
	w.st.guildOrder = append(w.st.guildOrder, id)
	addMember(g, w.st.bot, now)
	if owner != w.st.bot {
		addMember(g, owner, now)
	}
	w.emitLocked(GuildCreated{Guild: id})
	return id
}

func addMember(g *guild, u UserID, at time.Time) {
	g.members[u] = &Member{User: u, JoinedAt: at}
	g.memberOrder = append(g.memberOrder, u)
}

// AddMember makes a user a member of a guild; a member already is one.
func (w *World) AddMember(g GuildID, u UserID) error {
	w.lock()
	defer w.mu.Unlock()
	gd, err := w.guildLocked("add member", g)
	if err != nil {
		return err
	}
	if _, ok := w.st.users[u]; !ok {
		return fmt.Errorf("add member: unknown user %s", u)
	}
	if _, ok := gd.members[u]; ok {
		return nil
	}
	addMember(gd, u, w.now())
	w.emitLocked(MemberAdded{Guild: g, User: u})
	return nil
}

// guildLocked returns guild g, or an error naming op when there is none. w.mu must be held.
func (w *World) guildLocked(op string, g GuildID) (*guild, error) {
	gd, ok := w.st.guilds[g]
	if !ok {
		return nil, fmt.Errorf("%s: unknown guild %s", op, g)
	}
	return gd, nil
}

// RemoveMember removes u from guild g (a kick, or the bot removed from a server): u's sessions
// get GUILD_DELETE without unavailable, the other members' GUILD_MEMBER_REMOVE. A member in
// voice is disconnected, then: VOICE_STATE_UPDATE with channel_id null follows (after
// GUILD_MEMBER_REMOVE, in the order Discord sends them: discord/discord-api-docs#1319,
// discordjs/discord.js#3289). A bot's managed role goes with it
// (GUILD_ROLE_DELETE), as on Discord. The owner cannot be removed.
func (w *World) RemoveMember(g GuildID, u UserID) error {
	_, err := w.RemoveMemberFromVoice(g, u)
	return err
}

// RemoveMemberFromVoice is RemoveMember that also reports whether u was in a voice channel of
// g, so that the transport can end u's voice connection.
func (w *World) RemoveMemberFromVoice(g GuildID, u UserID) (leftVoice bool, err error) {
	w.lock()
	defer w.mu.Unlock()
	gd, err := w.guildLocked("remove member", g)
	if err != nil {
		return false, err
	}
	if gd.owner == u {
		return false, fmt.Errorf("remove member: %s owns guild %s", u, g)
	}
	if _, ok := gd.members[u]; !ok {
		return false, nil
	}
	delete(gd.members, u)
	gd.memberOrder = slices.DeleteFunc(gd.memberOrder, func(m UserID) bool { return m == u })
	w.emitLocked(MemberRemoved{Guild: g, User: u})
	if gd.voice[u] != nil {
		delete(gd.voice, u)
		leftVoice = true
		w.emitLocked(VoiceStateChanged{Guild: g, User: u})
	}
	w.deleteBotRolesLocked(gd, u)
	return leftVoice, nil
}

// ErrGuildUnavailable is the refusal of what a member cannot do in a guild in an outage
// (SetGuildAvailable false): InvokeCommand.
var ErrGuildUnavailable = errors.New("the guild is unavailable (an outage)")

// SetGuildAvailable starts (false) or ends (true) an outage of guild g, as Discord's: while it
// lasts the members' sessions got GUILD_DELETE with unavailable true, and a new session's READY
// lists the guild as an unavailable stub with no GUILD_CREATE after it; at its end they get
// GUILD_CREATE. The gateway sends nothing else of the guild meanwhile (docs/simulator.md,
// "Guild outages", says what an outage covers).
func (w *World) SetGuildAvailable(g GuildID, available bool) error {
	w.lock()
	defer w.mu.Unlock()
	gd, err := w.guildLocked("set guild available", g)
	if err != nil {
		return err
	}
	if gd.unavailable == !available {
		return nil
	}
	gd.unavailable = !available
	w.emitLocked(GuildAvailability{Guild: g, Available: available})
	return nil
}

// createChannelLocked adds a channel (or thread, with parent) to g.
func (w *World) createChannelLocked(g *guild, t ChannelType, name string, parent ChannelID) *channel {
	c := &channel{
		id: ChannelID(w.ids.nextString()), guild: g.id, typ: t, name: name,
		parent: parent, createdAt: w.now(),
	}
	if !t.IsThread() {
		for _, id := range g.channels {
			if !w.st.channels[id].typ.IsThread() {
				c.position++
			}
		}
	}
	w.st.channels[c.id] = c
	g.channels = append(g.channels, c.id)
	return c
}

// CreateChannel creates a text, voice or category channel in a guild.
func (w *World) CreateChannel(g GuildID, t ChannelType, name string) (ChannelID, error) {
	v := w.lock()
	defer w.mu.Unlock()
	gd := w.st.guilds[g]
	if gd == nil {
		return "", fmt.Errorf("create channel: unknown guild %s", g)
	}
	if t.IsThread() || t == ChannelDM {
		return "", fmt.Errorf("create channel: %v is not a guild channel type (CreateThread makes threads)", t)
	}
	c := w.createChannelLocked(gd, t, name, "")
	w.emitLocked(ChannelCreated{Channel: v.channel(c)})
	return c.id, nil
}

// NewThread is a thread to start: under Parent, by Owner, from a message
// of the parent (From) or on its own (public, or private with Private).
type NewThread struct {
	Parent  ChannelID
	Owner   UserID
	Name    string
	From    MessageID
	Private bool
}

// StartThread starts a thread (a channel of type 11, or 12 when private)
// under a text channel.
// https://discord.com/developers/docs/resources/channel#start-thread-from-message
func (w *World) StartThread(n NewThread) (Channel, error) {
	v := w.lock()
	defer w.mu.Unlock()
	p := w.st.channels[n.Parent]
	if p == nil {
		return Channel{}, ErrUnknownChannel
	}
	if n.Owner != "" && !v.IsMember(p.guild, n.Owner) {
		return Channel{}, ErrMissingAccess
	}
	if p.typ != ChannelText {
		return Channel{}, &Error{400, CodeChannelType, "Cannot execute action on this channel type"}
	}
	if n.Name == "" || utf8.RuneCountInString(n.Name) > 100 {
		return Channel{}, invalidBody("name", "Must be between 1 and 100 in length.")
	}
	typ := ChannelPublicThread
	if n.From != "" {
		if m := w.st.messages[n.From]; m == nil || m.Deleted || m.ChannelID != p.id {
			return Channel{}, ErrUnknownMessage
		}
	} else if n.Private {
		typ = ChannelPrivateThread
	}
	c := w.createChannelLocked(w.st.guilds[p.guild], typ, n.Name, p.id)
	c.owner = n.Owner
	snap := v.channel(c)
	w.emitLocked(ChannelCreated{Channel: snap})
	return snap, nil
}

// Channels returns a guild's channels, threads included, in creation order.
func (w *World) Channels(g GuildID) []Channel {
	v := w.lock()
	defer w.mu.Unlock()
	return v.Channels(g)
}
