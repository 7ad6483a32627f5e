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
