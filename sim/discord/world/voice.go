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
	// Mute and Deaf are the server mute and deafen a moderator set (ModerateVoice); they stay
	// with the member across moves, as on Discord.
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
	if old := g.voice[s.User]; old != nil { // a server mute or deafen stays with the member
		st.Mute, st.Deaf = old.Mute, old.Deaf
	}
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

// ModerateVoice applies e to u's voice state in g as by (a moderator; "" for the simulator
// itself, which needs no permission), checked as Discord checks it:
//   - u must be in a voice channel of g: else 400 40032 "Target user is not connected to voice";
//   - mute needs Mute Members and deaf Deafen Members in u's channel, a move or disconnect
//     Move Members there; a move also needs Move Members and Connect in the target: else 403
//     50013;
//   - the target must be a voice channel of g: 404 10003 for an unknown channel or one of
//     another guild, 400 50024 for a channel of another type.
//
// A change emits one VoiceStateChanged (VOICE_STATE_UPDATE; State nil for a disconnect),
// announced to the gateway session announce whatever its intents (the member's own session,
// so that a bot hears of its move); no change emits nothing. It returns the state after the
// edit (nil when disconnected) and whether u changed channel: the caller hands out a voice
// token for a move and revokes the voice session for a disconnect.
// https://discord.com/developers/docs/resources/guild#modify-guild-member
func (w *World) ModerateVoice(by UserID, g GuildID, u UserID, e VoiceEdit, announce string) (*VoiceState, bool, error) {
	v := w.lock()
	defer w.mu.Unlock()
	gd, _, err := w.memberLocked("moderate voice", g, u)
	if err != nil {
		if by != "" {
			return nil, false, ErrUnknownMember
		}
		return nil, false, err
	}
	cur := gd.voice[u]
	if cur == nil {
		return nil, false, &Error{Status: 400, Code: CodeNotInVoice, Message: "Target user is not connected to voice."}
	}
	need := func(ch ChannelID, perms uint64, what string) error {
		if by == "" || v.ChannelPermissions(ch, by)&perms == perms {
			return nil
		}
		return fmt.Errorf("moderate voice: %s lacks %s in %s: %w", by, what, ch, ErrMissingPermissions)
	}
	next := *cur
	if e.Mute != nil {
		if err := need(cur.Channel, PermMuteMembers, "Mute Members"); err != nil {
			return nil, false, err
		}
		next.Mute = *e.Mute
	}
	if e.Deaf != nil {
		if err := need(cur.Channel, PermDeafenMembers, "Deafen Members"); err != nil {
			return nil, false, err
		}
		next.Deaf = *e.Deaf
	}
	if e.Channel != nil {
		if err := need(cur.Channel, PermMoveMembers, "Move Members"); err != nil {
			return nil, false, err
		}
		if *e.Channel == "" {
			delete(gd.voice, u)
			w.emitLocked(VoiceStateChanged{Guild: g, User: u, Session: announce})
			return nil, false, nil
		}
		c := w.st.channels[*e.Channel]
		switch {
		case c == nil || c.guild != g:
			return nil, false, ErrUnknownChannel
		case c.typ != ChannelVoice:
			return nil, false, &Error{Status: 400, Code: CodeChannelType, Message: "Cannot execute action on this channel type"}
		}
		if err := need(*e.Channel, PermMoveMembers|PermConnect, "Move Members and Connect"); err != nil {
			return nil, false, err
		}
		next.Channel = *e.Channel
	}
	moved := next.Channel != cur.Channel
	if next == *cur {
		return &next, false, nil
	}
	gd.voice[u] = &next
	snap := next
	w.emitLocked(VoiceStateChanged{Guild: g, User: u, State: &snap, Session: announce})
	return &next, moved, nil
}
