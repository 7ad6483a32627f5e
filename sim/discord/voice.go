package discordsim

import (
	"fmt"

	"github.com/banterbot/banter/sim/discord/world"
)

// VoiceBackend is the voice server the main gateway hands clients to
// (sim/discord/voicesim in practice). The simulator calls it with no lock
// held.
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

// Voice signalling on the main gateway: op 4 from a session, and simulated
// members joining, leaving or being moved. The voice state lives in the
// world (its VoiceStateChanged becomes VOICE_STATE_UPDATE); this layer
// hands out voice tokens, registers them with the VoiceBackend and sends
// VOICE_SERVER_UPDATE.

// voiceStateFromGateway handles Op 4 from a session: VOICE_STATE_UPDATE to
// the joining session and every member session with GUILD_VOICE_STATES,
// then VOICE_SERVER_UPDATE with a fresh token to the joining session only
// (§4 G; @discordjs/voice needs this order). A null channel leaves. Every
// join or move gets a new token. Updates for guilds the user is not in, or
// for channels that are not voice channels of the guild, are ignored, as
// Discord does; so are those for a guild in an outage (SetGuildAvailable
// false), join and leave alike: the guild is unavailable to the session.
// https://discord.com/developers/docs/topics/voice-connections#retrieving-voice-server-information
func (s *Server) voiceStateFromGateway(ss sessionRef, cmd *voiceStateCommand) {
	var available bool
	s.Read(func(v *world.View) { available = v.GuildAvailable(cmd.GuildID) })
	if !available {
		return
	}
	if cmd.ChannelID == nil || *cmd.ChannelID == "" {
		s.leaveVoice(cmd.GuildID, ss.user)
		return
	}
	vs := world.VoiceState{Guild: cmd.GuildID, User: ss.user, Channel: *cmd.ChannelID, SessionID: ss.id,
		SelfMute: cmd.SelfMute, SelfDeaf: cmd.SelfDeaf}
	if err := s.SetVoiceState(vs, ss.id); err != nil {
		return
	}
	s.grantVoice(vs, ss.id)
}

// grantVoice hands out a fresh voice token for vs: registered with the
// VoiceBackend, then sent in VOICE_SERVER_UPDATE to the gateway session
// toSession ("" for a simulated member without one). It returns the grant.
func (s *Server) grantVoice(vs world.VoiceState, toSession string) (VoiceGrant, error) {
	grant := VoiceGrant{GuildID: vs.Guild, ChannelID: vs.Channel, UserID: vs.User, SessionID: vs.SessionID,
		Token: "vtok-" + world.RandomHex(12), SelfDeaf: vs.SelfDeaf, SelfMute: vs.SelfMute}
	endpoint := noVoiceEndpoint
	if s.voice != nil {
		endpoint = s.voice.Endpoint()
		if err := s.voice.Authorize(grant); err != nil {
			s.log.Error("discordsim: voice authorize", "err", err)
			return VoiceGrant{}, err
		}
	}
	if toSession != "" {
		ev := struct {
			Token    string  `json:"token"`
			GuildID  GuildID `json:"guild_id"`
			Endpoint string  `json:"endpoint"`
		}{grant.Token, vs.Guild, endpoint}
		s.gw.sendGuildEventTo(toSession, vs.Guild, "VOICE_SERVER_UPDATE", ev)
	}
	return grant, nil
}

// leaveVoice takes u out of voice in g and revokes its voice session.
func (s *Server) leaveVoice(g GuildID, u UserID) bool {
	if !s.World.LeaveVoice(g, u) {
		return false
	}
	if s.voice != nil {
		s.voice.Revoke(g, u)
	}
	return true
}

// RemoveMember removes u from guild g (world.RemoveMember: GUILD_MEMBER_REMOVE, then
// VOICE_STATE_UPDATE with channel_id null if u was in voice) and, as Discord disconnects a
// removed member from voice, ends u's voice connection there: the VoiceBackend revokes it
// (voicesim closes a client's voice WebSocket with 4014 and takes a simulated member out of
// the channel).
func (s *Server) RemoveMember(g GuildID, u UserID) error {
	left, err := s.RemoveMemberFromVoice(g, u)
	if left && s.voice != nil {
		s.voice.Revoke(g, u)
	}
	return err
}

// JoinVoice puts a simulated member into a voice channel and dispatches
// their VOICE_STATE_UPDATE to the bot and every other member session. It
// returns the grant (session id and voice token) so a simulated voice
// client can connect to the voice server with it; the grant is registered
// with the VoiceBackend.
func (s *Server) JoinVoice(u UserID, ch ChannelID) (VoiceGrant, error) {
	c, ok := s.channel(ch)
	if !ok || c.Type != ChannelVoice {
		return VoiceGrant{}, fmt.Errorf("discordsim: join voice: %s is not a voice channel", ch)
	}
	vs := world.VoiceState{Guild: c.Guild, User: u, Channel: ch, SessionID: world.RandomHex(16)}
	if err := s.SetVoiceState(vs, ""); err != nil {
		return VoiceGrant{}, fmt.Errorf("discordsim: join voice: %w", err)
	}
	grant, err := s.grantVoice(vs, "")
	if err != nil {
		return VoiceGrant{}, fmt.Errorf("discordsim: join voice: %w", err)
	}
	return grant, nil
}

// LeaveVoice takes a simulated member out of voice in the channel's guild.
func (s *Server) LeaveVoice(u UserID, ch ChannelID) error {
	c, ok := s.channel(ch)
	if !ok {
		return fmt.Errorf("discordsim: leave voice: unknown channel %s", ch)
	}
	if vs, ok := s.VoiceStateOf(c.Guild, u); !ok || vs.Channel != ch {
		return fmt.Errorf("discordsim: leave voice: %s is not in %s", u, ch)
	}
	s.leaveVoice(c.Guild, u)
	return nil
}

// MoveVoice does what a moderator does to user u in guild g: moves them to
// voice channel ch, or disconnects them from voice when ch is "". Everyone
// with GUILD_VOICE_STATES gets the VOICE_STATE_UPDATE; if u's voice state
// belongs to one of u's gateway sessions (the bot), that session also gets
// a VOICE_SERVER_UPDATE with a fresh token after a move, as on a join.
func (s *Server) MoveVoice(g GuildID, u UserID, ch ChannelID) error {
	vs, ok := s.VoiceStateOf(g, u)
	if !ok {
		return fmt.Errorf("discordsim: move voice: %s is not in voice in %s", u, g)
	}
	if ch == "" {
		s.leaveVoice(g, u)
		return nil
	}
	vs.Channel = ch
	owner := ""
	if ref, ok := s.gw.sessionOf(vs.SessionID, u); ok {
		owner = ref.id
	}
	if err := s.SetVoiceState(vs, owner); err != nil {
		return fmt.Errorf("discordsim: move voice: %w", err)
	}
	if _, err := s.grantVoice(vs, owner); err != nil {
		return fmt.Errorf("discordsim: move voice: %w", err)
	}
	return nil
}

// modifyMember applies a Modify Guild Member request (REST PATCH /guilds/{g}/members/{u}) by
// the caller by, all or nothing (world.ModifyMember): GUILD_MEMBER_UPDATE for a new nick or
// roles; for the voice fields everyone with GUILD_VOICE_STATES, and u's own gateway session
// (the bot's), get the VOICE_STATE_UPDATE; a move then hands out a fresh voice token as
// MoveVoice does (VOICE_SERVER_UPDATE to u's session; the VoiceBackend closes the old voice
// connection with 4014), and a disconnect (channel_id null) revokes u's voice session (4014).
func (s *Server) modifyMember(by UserID, g GuildID, u UserID, e world.MemberEdit) error {
	owner := ""
	if vs, ok := s.VoiceStateOf(g, u); ok {
		if ref, ok := s.gw.sessionOf(vs.SessionID, u); ok {
			owner = ref.id
		}
	}
	res, err := s.ModifyMember(by, g, u, e, owner)
	switch {
	case err != nil:
		return err
	case res.Disconnected:
		if s.voice != nil {
			s.voice.Revoke(g, u)
		}
	case res.Moved:
		if _, err := s.grantVoice(res.Voice, owner); err != nil {
			return fmt.Errorf("discordsim: move voice: %w", err)
		}
	}
	return nil
}

// channel looks a channel up.
func (s *Server) channel(id ChannelID) (world.Channel, bool) {
	var c world.Channel
	var ok bool
	s.Read(func(v *world.View) { c, ok = v.Channel(id) })
	return c, ok
}
