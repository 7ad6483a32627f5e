package discordsim

import "time"

// worldState is the simulated world: users, guilds, channels, messages,
// commands and interactions, with their ids and clock, and no I/O. It is the first layer split out
// of Server (docs/simulator.md, "Layers"): REST handlers, the gateway and
// the scripting API read and change it, and every dispatch a change causes
// is sent by them, never by worldState.
//
// Lock discipline: Server.mu guards all of it; methods and fields are used
// only with Server.mu held (the *Locked helpers).
type worldState struct {
	now func() time.Time // message and member timestamps
	ids snowflakes

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

// newWorldState builds an empty world; idNow is the snowflakes' clock.
func newWorldState(now, idNow func() time.Time) worldState {
	return worldState{
		now:          now,
		ids:          snowflakes{now: idNow},
		users:        map[UserID]*user{},
		tokens:       map[string]UserID{},
		guilds:       map[GuildID]*guild{},
		channels:     map[ChannelID]*channel{},
		messages:     map[MessageID]*message{},
		commands:     map[CommandID]*command{},
		interactions: map[InteractionID]*interaction{},
	}
}

// cmpClock returns c, or def when c is nil.
func cmpClock(c, def func() time.Time) func() time.Time {
	if c != nil {
		return c
	}
	return def
}

func (s *worldState) addMemberLocked(g *guild, u UserID, at time.Time) {
	g.members[u] = &member{user: u, joinedAt: at}
	g.memberOrder = append(g.memberOrder, u)
}

func (s *worldState) isMemberLocked(g GuildID, u UserID) bool {
	gd := s.guilds[g]
	return gd != nil && gd.members[u] != nil
}

// createChannelLocked adds a channel (or thread, with parent) to g; the
// caller dispatches and notifies.
func (s *worldState) createChannelLocked(g *guild, t ChannelType, name string, parent ChannelID) *channel {
	c := &channel{
		id: ChannelID(s.ids.nextString()), guild: g.id, typ: t, name: name,
		parent: parent, createdAt: s.now(),
	}
	if !t.isThread() {
		for _, id := range g.channels {
			if !s.channels[id].typ.isThread() {
				c.position++
			}
		}
	}
	s.channels[c.id] = c
	g.channels = append(g.channels, c.id)
	return c
}
