package discordsim

import (
	"fmt"
)

// VoiceBackend is the voice server the main gateway hands clients to
// (sim/discord/voicesim in practice). The simulator calls it with s.mu
// held, so implementations must not call back into the Server.
type VoiceBackend interface {
	// Endpoint is VOICE_SERVER_UPDATE's endpoint, "host:port" with no
	// scheme (clients dial wss://endpoint?v=8).
	Endpoint() string
	// Authorize admits one join: the voice server must accept an Identify
	// with exactly these ids and token. A newer grant for the same user
	// and guild replaces older ones.
	Authorize(g VoiceGrant) error
	// Revoke ends the user's voice session in the guild.
	Revoke(guildID GuildID, userID UserID)
}

// VoiceGrant is what a voice join hands out: VOICE_STATE_UPDATE's
// session_id and VOICE_SERVER_UPDATE's token.
type VoiceGrant struct {
	GuildID   GuildID
	ChannelID ChannelID
	UserID    UserID
	SessionID string
	Token     string
	SelfDeaf  bool
	SelfMute  bool
}

// noVoiceEndpoint is sent when no VoiceBackend is configured.
const noVoiceEndpoint = "localhost:0"

// voiceStateUpdateLocked handles Op 4 from a session: VOICE_STATE_UPDATE
// to the joining session and every member session with
// GUILD_VOICE_STATES, then VOICE_SERVER_UPDATE with a fresh token to the
// joining session only (§4 G; @discordjs/voice needs this order). A null
// channel leaves. Every join or move gets a new token.
// https://discord.com/developers/docs/topics/voice-connections#retrieving-voice-server-information
func (s *Server) voiceStateUpdateLocked(ss *session, cmd *voiceStateCommand) {
	g := s.guilds[cmd.GuildID]
	if g == nil || g.members[ss.user] == nil {
		return // Discord ignores updates for guilds the user is not in
	}
	if cmd.ChannelID == nil || *cmd.ChannelID == "" {
		s.leaveVoiceLocked(g, ss.user)
		return
	}
	c := s.channels[*cmd.ChannelID]
	if c == nil || c.guild != g.id || c.typ != ChannelVoice {
		return
	}
	vs := &voiceState{channel: c.id, sessionID: ss.id, selfMute: cmd.SelfMute, selfDeaf: cmd.SelfDeaf}
	g.voice[ss.user] = vs
	token := "vtok-" + randomHex(12)
	endpoint := noVoiceEndpoint
	if s.voice != nil {
		endpoint = s.voice.Endpoint()
		err := s.voice.Authorize(VoiceGrant{
			GuildID: g.id, ChannelID: c.id, UserID: ss.user, SessionID: ss.id, Token: token,
			SelfDeaf: cmd.SelfDeaf, SelfMute: cmd.SelfMute,
		})
		if err != nil {
			s.log.Error("discordsim: voice authorize", "err", err)
		}
	}
	s.broadcastVoiceStateLocked(g, ss.user, vs, ss)
	ev := struct {
		Token    string  `json:"token"`
		GuildID  GuildID `json:"guild_id"`
		Endpoint string  `json:"endpoint"`
	}{token, g.id, endpoint}
	s.dispatchToLocked(ss, "VOICE_SERVER_UPDATE", ev, 0)
	s.notifyLocked()
}

func (s *Server) leaveVoiceLocked(g *guild, u UserID) {
	if g.voice[u] == nil {
		return
	}
	delete(g.voice, u)
	if s.voice != nil {
		s.voice.Revoke(g.id, u)
	}
	s.broadcastVoiceStateLocked(g, u, nil, nil)
	s.notifyLocked()
}

// broadcastVoiceStateLocked sends VOICE_STATE_UPDATE to the guild's member
// sessions with GUILD_VOICE_STATES, and to self regardless of intents.
func (s *Server) broadcastVoiceStateLocked(g *guild, u UserID, vs *voiceState, self *session) {
	w := s.wireVoiceStateLocked(g, u, vs, true)
	if self != nil {
		s.dispatchToLocked(self, "VOICE_STATE_UPDATE", w, 0)
	}
	for _, ss := range s.sessions {
		if ss != self && g.members[ss.user] != nil && ss.ownsGuild(g.id) {
			s.dispatchToLocked(ss, "VOICE_STATE_UPDATE", w, IntentGuildVoiceStates)
		}
	}
}

// VoiceState is a user's voice state for tests.
type VoiceState struct {
	Channel   ChannelID
	SessionID string
	SelfMute  bool
	SelfDeaf  bool
}

// VoiceStateOf returns u's voice state in guild g; ok is false when u is
// not in a voice channel there.
func (s *Server) VoiceStateOf(g GuildID, u UserID) (VoiceState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gd := s.guilds[g]
	if gd == nil || gd.voice[u] == nil {
		return VoiceState{}, false
	}
	vs := gd.voice[u]
	return VoiceState{Channel: vs.channel, SessionID: vs.sessionID, SelfMute: vs.selfMute, SelfDeaf: vs.selfDeaf}, true
}

// JoinVoice puts a simulated member into a voice channel and dispatches
// their VOICE_STATE_UPDATE to the bot and every other member session. It
// returns the grant (session id and voice token) so a simulated voice
// client can connect to the voice server with it; the grant is registered
// with the VoiceBackend.
func (s *Server) JoinVoice(u UserID, ch ChannelID) (VoiceGrant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[ch]
	if c == nil || c.typ != ChannelVoice {
		return VoiceGrant{}, fmt.Errorf("discordsim: join voice: %s is not a voice channel", ch)
	}
	g := s.guilds[c.guild]
	if g.members[u] == nil {
		return VoiceGrant{}, fmt.Errorf("discordsim: join voice: %s is not a member of %s", u, g.id)
	}
	vs := &voiceState{channel: ch, sessionID: randomHex(16)}
	g.voice[u] = vs
	grant := VoiceGrant{GuildID: g.id, ChannelID: ch, UserID: u, SessionID: vs.sessionID, Token: "vtok-" + randomHex(12)}
	if s.voice != nil {
		if err := s.voice.Authorize(grant); err != nil {
			return VoiceGrant{}, fmt.Errorf("discordsim: join voice: %w", err)
		}
	}
	s.broadcastVoiceStateLocked(g, u, vs, nil)
	s.notifyLocked()
	return grant, nil
}

// LeaveVoice takes a simulated member out of voice in the channel's guild.
func (s *Server) LeaveVoice(u UserID, ch ChannelID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[ch]
	if c == nil {
		return fmt.Errorf("discordsim: leave voice: unknown channel %s", ch)
	}
	g := s.guilds[c.guild]
	if vs := g.voice[u]; vs == nil || vs.channel != ch {
		return fmt.Errorf("discordsim: leave voice: %s is not in %s", u, ch)
	}
	s.leaveVoiceLocked(g, u)
	return nil
}

// MoveVoice does what a moderator does to user u in guild g: moves them to
// voice channel ch, or disconnects them from voice when ch is "". Everyone
// with GUILD_VOICE_STATES gets the VOICE_STATE_UPDATE; if u's voice state
// belongs to one of u's gateway sessions (the bot), that session also gets
// a VOICE_SERVER_UPDATE with a fresh token after a move, as on a join.
func (s *Server) MoveVoice(g GuildID, u UserID, ch ChannelID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	gd := s.guilds[g]
	if gd == nil || gd.voice[u] == nil {
		return fmt.Errorf("discordsim: move voice: %s is not in voice in %s", u, g)
	}
	if ch == "" {
		s.leaveVoiceLocked(gd, u)
		return nil
	}
	c := s.channels[ch]
	if c == nil || c.guild != g || c.typ != ChannelVoice {
		return fmt.Errorf("discordsim: move voice: %s is not a voice channel of %s", ch, g)
	}
	vs := gd.voice[u]
	vs.channel = ch
	owner := s.sessions[vs.sessionID]
	if owner != nil && owner.user != u {
		owner = nil
	}
	grant := VoiceGrant{GuildID: g, ChannelID: ch, UserID: u, SessionID: vs.sessionID,
		Token: "vtok-" + randomHex(12), SelfDeaf: vs.selfDeaf, SelfMute: vs.selfMute}
	if s.voice != nil {
		if err := s.voice.Authorize(grant); err != nil {
			return fmt.Errorf("discordsim: move voice: %w", err)
		}
	}
	s.broadcastVoiceStateLocked(gd, u, vs, owner)
	if owner != nil {
		endpoint := noVoiceEndpoint
		if s.voice != nil {
			endpoint = s.voice.Endpoint()
		}
		ev := struct {
			Token    string  `json:"token"`
			GuildID  GuildID `json:"guild_id"`
			Endpoint string  `json:"endpoint"`
		}{grant.Token, g, endpoint}
		s.dispatchToLocked(owner, "VOICE_SERVER_UPDATE", ev, 0)
	}
	s.notifyLocked()
	return nil
}
