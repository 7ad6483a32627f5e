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
