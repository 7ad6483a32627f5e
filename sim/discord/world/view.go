package world

import (
	"cmp"
	"slices"
)

// View reads the world while it is locked: inside Read or an Observer. It
// must not be kept or used after that call returns. Everything it returns
// is a copy.
type View struct{ st *state }

// Bot returns the application's bot user (also the application id).
func (v *View) Bot() UserID { return v.st.bot }

// User returns a user.
func (v *View) User(id UserID) (User, bool) {
	u := v.st.users[id]
	if u == nil {
		return User{}, false
	}
	return User{ID: u.id, Name: u.name, GlobalName: u.globalName, Bot: u.bot}, true
}

// UserByToken resolves a token (without "Bot ") to its user.
func (v *View) UserByToken(tok string) (UserID, bool) {
	u, ok := v.st.tokens[tok]
	return u, ok
}

// Token returns a user's token, or "".
func (v *View) Token(id UserID) string {
	if u := v.st.users[id]; u != nil {
		return u.token
	}
	return ""
}

// Guilds returns every guild id, in creation order.
func (v *View) Guilds() []GuildID { return slices.Clone(v.st.guildOrder) }

// Guild returns a guild.
func (v *View) Guild(id GuildID) (Guild, bool) {
	g := v.st.guilds[id]
	if g == nil {
		return Guild{}, false
	}
	return Guild{ID: g.id, Name: g.name, Owner: g.owner, CreatedAt: g.createdAt,
		AFKChannel: g.afkChannel, AFKTimeout: cmp.Or(g.afkTimeout, DefaultAFKTimeout),
		Channels: slices.Clone(g.channels), Members: slices.Clone(g.memberOrder), Roles: slices.Clone(g.roles)}, true
}

// IsMember reports whether u is a member of g.
func (v *View) IsMember(g GuildID, u UserID) bool {
	gd := v.st.guilds[g]
	return gd != nil && gd.members[u] != nil
}

// GuildAvailable reports whether g exists and is not in an outage (SetGuildAvailable).
func (v *View) GuildAvailable(g GuildID) bool {
	gd := v.st.guilds[g]
	return gd != nil && !gd.unavailable
}

// Member returns u's membership of g.
func (v *View) Member(g GuildID, u UserID) (Member, bool) {
	gd := v.st.guilds[g]
	if gd == nil || gd.members[u] == nil {
		return Member{}, false
	}
	m := *gd.members[u]
	m.Roles = slices.Clone(m.Roles)
	return m, true
}

// GuildFor resolves a guild for caller, who must be a member ("" is no
// caller: no check).
func (v *View) GuildFor(id GuildID, caller UserID) (Guild, error) {
	g, ok := v.Guild(id)
	if !ok {
		return Guild{}, ErrUnknownGuild
	}
	if caller != "" && !v.IsMember(id, caller) {
		return Guild{}, ErrMissingAccess
	}
	return g, nil
}

// Channel returns a channel.
func (v *View) Channel(id ChannelID) (Channel, bool) {
	c := v.st.channels[id]
	if c == nil {
		return Channel{}, false
	}
	return v.channel(c), true
}

// ChannelFor resolves a channel for caller, who must be a member of its
// guild ("" is no caller: no check).
func (v *View) ChannelFor(id ChannelID, caller UserID) (Channel, error) {
	c, ok := v.Channel(id)
	if !ok {
		return Channel{}, ErrUnknownChannel
	}
	if caller != "" && !v.IsMember(c.Guild, caller) {
		return Channel{}, ErrMissingAccess
	}
	return c, nil
}

func (v *View) channel(c *channel) Channel {
	out := Channel{ID: c.id, Guild: c.guild, Type: c.typ, Name: c.name, Position: c.position,
		Parent: c.parent, Owner: c.owner, CreatedAt: c.createdAt, Overwrites: slices.Clone(c.overwrites)}
	for _, m := range c.msgs {
		if !m.Deleted {
			out.LastMessage = m.ID
			out.MessageCount++
		}
	}
	return out
}

// Channels returns a guild's channels, threads included, in creation order.
func (v *View) Channels(g GuildID) []Channel {
	gd := v.st.guilds[g]
	if gd == nil {
		return nil
	}
	out := make([]Channel, 0, len(gd.channels))
	for _, id := range gd.channels {
		out = append(out, v.channel(v.st.channels[id]))
	}
	return out
}

// Message returns a live message.
func (v *View) Message(id MessageID) (Message, bool) {
	m := v.st.messages[id]
	if m == nil || m.Deleted {
		return Message{}, false
	}
	return m.clone(), true
}

// ListMessages is a channel's history query, newest first (see
// MessageQuery).
func (v *View) ListMessages(ch ChannelID, q MessageQuery) []Message {
	c := v.st.channels[ch]
	if c == nil {
		return nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	live := make([]*Message, 0, len(c.msgs))
	for _, m := range c.msgs {
		if !m.Deleted {
			live = append(live, m)
		}
	}
	var sel []*Message
	switch {
	case q.Around != "":
		// limit/2 older, the message itself (if present) and the rest newer.
		i, _ := slices.BinarySearchFunc(live, q.Around, func(m *Message, id MessageID) int {
			return cmpSnowflake(string(m.ID), string(id))
		})
		lo := max(i-limit/2, 0)
		hi := min(lo+limit, len(live))
		lo = max(hi-limit, 0)
		sel = live[lo:hi]
	case q.Before != "":
		i := 0
		for i < len(live) && SnowflakeLess(string(live[i].ID), string(q.Before)) {
			i++
		}
		sel = live[max(i-limit, 0):i]
	case q.After != "":
		i := 0
		for i < len(live) && !SnowflakeLess(string(q.After), string(live[i].ID)) {
			i++
		}
		sel = live[i:min(i+limit, len(live))]
	default:
		sel = live[max(len(live)-limit, 0):]
	}
	out := make([]Message, 0, len(sel))
	for i := len(sel) - 1; i >= 0; i-- {
		out = append(out, sel[i].clone())
	}
	return out
}

// VoiceState returns u's voice state in g.
func (v *View) VoiceState(g GuildID, u UserID) (VoiceState, bool) {
	gd := v.st.guilds[g]
	if gd == nil || gd.voice[u] == nil {
		return VoiceState{}, false
	}
	return *gd.voice[u], true
}

// VoiceStates returns everyone in voice in g, by user id.
func (v *View) VoiceStates(g GuildID) []VoiceState {
	gd := v.st.guilds[g]
	if gd == nil {
		return nil
	}
	out := make([]VoiceState, 0, len(gd.voice))
	for _, vs := range gd.voice {
		out = append(out, *vs)
	}
	slices.SortFunc(out, func(a, b VoiceState) int { return cmpSnowflake(string(a.User), string(b.User)) })
	return out
}

// Interaction returns an interaction with its response so far.
func (v *View) Interaction(id InteractionID) (Interaction, bool) {
	it := v.st.interactions[id]
	if it == nil {
		return Interaction{}, false
	}
	return it.snapshot(), true
}
