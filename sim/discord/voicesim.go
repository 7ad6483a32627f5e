package discordsim

import (
	"context"
	"fmt"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// voiceSim adapts the voice server in sim/discord/voicesim to VoiceBackend.
type voiceSim struct{ v *voicesim.Server }

var _ VoiceBackend = voiceSim{}

func (b voiceSim) Endpoint() string { return b.v.Endpoint() }

func (b voiceSim) Authorize(g VoiceGrant) error {
	err := b.v.Authorize(voicesim.Session{
		GuildID: string(g.GuildID), ChannelID: string(g.ChannelID), UserID: string(g.UserID),
		SessionID: g.SessionID, Token: g.Token, SelfDeaf: g.SelfDeaf,
	})
	if err != nil {
		return fmt.Errorf("discordsim: voice authorize: %w", err)
	}
	return nil
}

func (b voiceSim) Revoke(g GuildID, u UserID) { b.v.Revoke(string(g), string(u)) }

// WithVoiceSim connects the main gateway to a voicesim server: op 4 joins
// are authorized there and VOICE_SERVER_UPDATE points at it. The caller
// owns v and closes it.
func WithVoiceSim(v *voicesim.Server) Option {
	return func(c *config) {
		c.voice = voiceSim{v}
		c.voiceSim = v
	}
}

// VoiceSim returns the voicesim server set with WithVoiceSim, or nil.
func (s *Server) VoiceSim() *voicesim.Server { return s.cfg.voiceSim }

// JoinVoiceMember puts a simulated member u into voice channel ch: the
// main gateway dispatches their VOICE_STATE_UPDATE (JoinVoice), then the
// member joins the voicesim server as an in-process client that can play
// Opus or PCM and records what it hears. It needs WithVoiceSim. opts may
// set Mode, Deaf and FrameInterval; its ids are filled in.
func (s *Server) JoinVoiceMember(ctx context.Context, u UserID, ch ChannelID, opts voicesim.MemberOptions) (*voicesim.Member, error) {
	v := s.cfg.voiceSim
	if v == nil {
		return nil, fmt.Errorf("discordsim: join voice member: no voicesim configured (WithVoiceSim)")
	}
	grant, err := s.JoinVoice(u, ch)
	if err != nil {
		return nil, err
	}
	opts.GuildID, opts.ChannelID, opts.UserID = string(grant.GuildID), string(grant.ChannelID), string(grant.UserID)
	m, err := v.JoinMember(ctx, opts)
	if err != nil {
		_ = s.LeaveVoice(u, ch)
		return nil, fmt.Errorf("discordsim: join voice member: %w", err)
	}
	return m, nil
}
