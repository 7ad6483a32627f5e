package world

import "fmt"

// VoiceState is a user's presence in a guild's voice channel.
type VoiceState struct {
	Guild     GuildID
	User      UserID
	Channel   ChannelID
	SessionID string // the gateway session (or simulated client) that joined
	SelfMute  bool
	SelfDeaf  bool
	// Mute and Deaf are the server mute and deafen a moderator set (ModifyMember). They are
	// the member's (Member.Mute, Member.Deaf): they stay across moves and when the member
	// leaves voice, and a join carries them again, as on Discord.
	Mute, Deaf bool
}

// SetVoiceState puts s.User into voice channel s.Channel of s.Guild (a
// join, a move, or a mute/deafen change). announce is the gateway session
// that must hear of it whatever its intents (the one that asked), or "".
func (w *World) SetVoiceState(s VoiceState, announce string) error {
	w.lock()
	defer w.mu.Unlock()
	g := w.st.guilds[s.Guild]
	if g == nil || g.members[s.User] == nil {
		return fmt.Errorf("voice: %s is not a member of %s", s.User, s.Guild)
	}
	c := w.st.channels[s.Channel]
	if c == nil || c.guild != g.id || c.typ != ChannelVoice {
		return fmt.Errorf("voice: %s is not a voice channel of %s", s.Channel, s.Guild)
	}
	st := s
	m := g.members[s.User] // a server mute or deafen is the member's: a join carries it
	st.Mute, st.Deaf = m.Mute, m.Deaf
	g.voice[s.User] = &st
	snap := st
	w.emitLocked(VoiceStateChanged{Guild: g.id, User: s.User, State: &snap, Session: announce})
	return nil
}

// LeaveVoice takes u out of voice in g; it reports whether u was in voice.
func (w *World) LeaveVoice(g GuildID, u UserID) bool {
	w.lock()
	defer w.mu.Unlock()
	gd := w.st.guilds[g]
	if gd == nil || gd.voice[u] == nil {
		return false
	}
	delete(gd.voice, u)
	w.emitLocked(VoiceStateChanged{Guild: g, User: u})
	return true
}

// VoiceStateOf returns u's voice state in guild g; ok is false when u is
// not in a voice channel there.
func (w *World) VoiceStateOf(g GuildID, u UserID) (VoiceState, bool) {
	v := w.lock()
	defer w.mu.Unlock()
	return v.VoiceState(g, u)
}

// VoiceEdit is a moderator's change to a member's voice state (PATCH
// /guilds/{g}/members/{u} with channel_id, mute, deaf): nil fields are left as they are.
type VoiceEdit struct {
	// Channel moves the member to this voice channel of the guild; "" disconnects them.
	Channel *ChannelID
	// Mute and Deaf set the server mute and deafen.
	Mute, Deaf *bool
}

// planVoiceLocked works out u's voice state in gd after e, as by (a moderator; "" for the
// simulator itself, which needs no permission) asks, checked as Discord checks it, and changes
// nothing:
//   - u must be in a voice channel of gd: else 400 40032 "Target user is not connected to
//     voice." (the docs: mute and deaf "will throw a 400 error if the user is not in a voice
//     channel"; restcord/restcord#170 shows the body);
//   - mute needs Mute Members and deaf Deafen Members in u's channel, a move or disconnect
//     Move Members there; a move also needs Move Members and Connect in the target: else 403
//     50013;
//   - the target must be a voice channel of gd: 404 10003 for an unknown channel or one of
//     another guild, 400 50024 for a channel of another type.
//
// It returns the state after the edit; leave is true for a disconnect (next then holds the
// member's mute and deaf). w.mu must be held.
// https://discord.com/developers/docs/resources/guild#modify-guild-member
func (w *World) planVoiceLocked(by UserID, gd *guild, u UserID, e VoiceEdit) (next VoiceState, leave bool, err error) {
	cur := gd.voice[u]
	if cur == nil {
		return VoiceState{}, false, &Error{Status: 400, Code: CodeNotInVoice, Message: "Target user is not connected to voice."}
	}
	v := &View{st: &w.st}
	need := func(ch ChannelID, perms uint64, what string) error {
		if by == "" || v.ChannelPermissions(ch, by)&perms == perms {
			return nil
		}
		return fmt.Errorf("moderate voice: %s lacks %s in %s: %w", by, what, ch, ErrMissingPermissions)
	}
	next = *cur
	if e.Mute != nil {
		if err := need(cur.Channel, PermMuteMembers, "Mute Members"); err != nil {
			return VoiceState{}, false, err
		}
		next.Mute = *e.Mute
	}
	if e.Deaf != nil {
		if err := need(cur.Channel, PermDeafenMembers, "Deafen Members"); err != nil {
			return VoiceState{}, false, err
		}
		next.Deaf = *e.Deaf
	}
	if e.Channel == nil {
		return next, false, nil
	}
	if err := need(cur.Channel, PermMoveMembers, "Move Members"); err != nil {
		return VoiceState{}, false, err
	}
	if *e.Channel == "" {
		return next, true, nil
	}
	c := w.st.channels[*e.Channel]
	switch {
	case c == nil || c.guild != gd.id:
		return VoiceState{}, false, ErrUnknownChannel
	case c.typ != ChannelVoice:
		return VoiceState{}, false, &Error{Status: 400, Code: CodeChannelType, Message: "Cannot execute action on this channel type"}
	}
	if err := need(*e.Channel, PermMoveMembers|PermConnect, "Move Members and Connect"); err != nil {
		return VoiceState{}, false, err
	}
	next.Channel = *e.Channel
	return next, false, nil
}
