package world

// Event is one committed change, as observers see it. Each carries what a
// transport needs to render it; anything else it reads through the View it
// is handed with the event.
type Event interface{ event() }

// GuildCreated: a guild exists (GUILD_CREATE to the bot).
type GuildCreated struct{ Guild GuildID }

// MemberAdded: a user joined a guild (GUILD_CREATE to the user's sessions,
// GUILD_MEMBER_ADD to the other members').
type MemberAdded struct {
	Guild GuildID
	User  UserID
}

// MemberRemoved: a user left or was removed from a guild (GUILD_DELETE without unavailable
// to the user's sessions, GUILD_MEMBER_REMOVE to the other members').
type MemberRemoved struct {
	Guild GuildID
	User  UserID
}

// GuildAvailability: a guild went unavailable (an outage: GUILD_DELETE with unavailable true)
// or came back (GUILD_CREATE), to its members' sessions.
type GuildAvailability struct {
	Guild     GuildID
	Available bool
}

// GuildUpdated: a guild's settings changed, its AFK channel or timeout (GUILD_UPDATE to the
// members' sessions).
type GuildUpdated struct{ Guild GuildID }

// ChannelCreated: a channel or thread exists (CHANNEL_CREATE or
// THREAD_CREATE).
type ChannelCreated struct{ Channel Channel }

// ChannelUpdated: a channel's settings changed, its permission overwrites (CHANNEL_UPDATE).
type ChannelUpdated struct{ Channel Channel }

// RoleCreated: a role was made in a guild (GUILD_ROLE_CREATE to the members' sessions).
type RoleCreated struct {
	Guild GuildID
	Role  Role
}

// RoleUpdated: a role's name or permissions changed (GUILD_ROLE_UPDATE).
type RoleUpdated struct {
	Guild GuildID
	Role  Role
}

// RoleDeleted: a role was deleted; its holders lost it (GUILD_ROLE_DELETE).
type RoleDeleted struct {
	Guild GuildID
	Role  RoleID
}

// MemberUpdated: a member's roles or nickname changed (GUILD_MEMBER_UPDATE to the sessions
// with GUILD_MEMBERS, and to the member's own whatever their intents).
type MemberUpdated struct {
	Guild GuildID
	User  UserID
}

// MessageCreated: a message was posted. Ephemeral interaction responses
// are reported too; only their invoker sees them (no dispatch).
type MessageCreated struct{ Message Message }

// MessageUpdated: a message was edited.
type MessageUpdated struct{ Message Message }

// MessageDeleted: a message was deleted (the snapshot is as it was).
type MessageDeleted struct{ Message Message }

// TypingStarted: a user started typing.
type TypingStarted struct {
	Typing TypingEvent
	Guild  GuildID
}

// ReactionAdded: a user reacted to a message (MESSAGE_REACTION_ADD).
type ReactionAdded struct {
	Message Message // after the change
	User    UserID
	Emoji   Emoji
}

// ReactionRemoved: a user's reaction was taken back or removed
// (MESSAGE_REACTION_REMOVE).
type ReactionRemoved struct {
	Message Message // after the change
	User    UserID
	Emoji   Emoji
}

// ReactionsCleared: every reaction of a message (Emoji nil:
// MESSAGE_REACTION_REMOVE_ALL) or every reaction with one emoji
// (MESSAGE_REACTION_REMOVE_EMOJI) was removed.
type ReactionsCleared struct {
	Message Message
	Emoji   *Emoji
}

// VoiceStateChanged: a user joined, moved in or left voice (State nil).
// Session, when set, is the gateway session the state belongs to: it is
// told whatever its intents (VOICE_STATE_UPDATE needs GUILD_VOICE_STATES
// for everyone else).
type VoiceStateChanged struct {
	Guild   GuildID
	User    UserID
	State   *VoiceState
	Session string
}

// InteractionCreated: a user invoked a command (INTERACTION_CREATE to the
// bot).
type InteractionCreated struct{ Interaction Interaction }

// Changed: something changed that no gateway event reports (a command, an
// interaction response); it wakes whoever waits on the world.
type Changed struct{ What string }

func (GuildCreated) event()       {}
func (MemberAdded) event()        {}
func (MemberRemoved) event()      {}
func (GuildAvailability) event()  {}
func (GuildUpdated) event()       {}
func (ChannelCreated) event()     {}
func (ChannelUpdated) event()     {}
func (RoleCreated) event()        {}
func (RoleUpdated) event()        {}
func (RoleDeleted) event()        {}
func (MemberUpdated) event()      {}
func (MessageCreated) event()     {}
func (MessageUpdated) event()     {}
func (MessageDeleted) event()     {}
func (TypingStarted) event()      {}
func (ReactionAdded) event()      {}
func (ReactionRemoved) event()    {}
func (ReactionsCleared) event()   {}
func (VoiceStateChanged) event()  {}
func (InteractionCreated) event() {}
func (Changed) event()            {}
