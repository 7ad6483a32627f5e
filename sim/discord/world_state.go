package discordsim

// worldState is the simulated world: users, guilds, channels, messages,
// commands and interactions, with no I/O. It is the first layer split out
// of Server (docs/simulator.md, "Layers"): REST handlers, the gateway and
// the scripting API read and change it, and every dispatch a change causes
// is sent by them, never by worldState.
//
// Lock discipline: Server.mu guards all of it; methods and fields are used
// only with Server.mu held (the *Locked helpers).
type worldState struct {
	users        map[UserID]*user
	tokens       map[string]UserID
	bot          UserID
	guilds       map[GuildID]*guild
	guildOrder   []GuildID
	channels     map[ChannelID]*channel
	messages     map[MessageID]*message
	sent         []*message // created by clients through REST, in order
	typing       []TypingEvent
	commands     map[CommandID]*command
	interactions map[InteractionID]*interaction
}

func newWorldState() worldState {
	return worldState{
		users:        map[UserID]*user{},
		tokens:       map[string]UserID{},
		guilds:       map[GuildID]*guild{},
		channels:     map[ChannelID]*channel{},
		messages:     map[MessageID]*message{},
		commands:     map[CommandID]*command{},
		interactions: map[InteractionID]*interaction{},
	}
}
