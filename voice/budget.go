package voice

import (
	"context"

	"github.com/banterbot/banter/decision"
)

// Quieter says whether a guild has reached its daily spending cap (package budget's Guard):
// voice then stops speaking and only hears commands.
type Quieter interface {
	// Quiet reports whether guild is at a cap (the notice is for text; voice passes false).
	Quiet(ctx context.Context, guild string, wantNotice bool) (quiet bool, notice string)
}

// budgetCapped is the Stage A decision of a turn in a guild at its spending cap: denied
// (budget_cap), no model asked.
func (s *session) budgetCapped() (decision.Decision, bool) {
	b := s.svc.opts.Budget
	if b == nil {
		return decision.Decision{}, false
	}
	if quiet, _ := b.Quiet(s.ctx, s.guildID, false); !quiet {
		return decision.Decision{}, false
	}
	return decision.Decision{Pipeline: decision.PipelineVoice, Stage: decision.StageA,
		Outcome: decision.OutcomeDeny, Reason: decision.ReasonBudgetCap}, true
}

// serverMuted is the Stage A decision of a turn while a moderator has server-muted the bot
// (its voice state's mute, from the gateway state): denied (server_muted), no model asked,
// since nobody would hear the reply. Commands are still heard.
func (s *session) serverMuted() (decision.Decision, bool) {
	st := s.svc.state(s.guildID)
	g, err := st.Guild(s.guildID)
	if err != nil || g == nil {
		return decision.Decision{}, false
	}
	st.RLock()
	defer st.RUnlock()
	for _, vs := range g.VoiceStates {
		if vs != nil && vs.UserID == s.svc.userID() && vs.Mute {
			return decision.Decision{Pipeline: decision.PipelineVoice, Stage: decision.StageA,
				Outcome: decision.OutcomeDeny, Reason: decision.ReasonServerMuted}, true
		}
	}
	return decision.Decision{}, false
}
