package text

import (
	"context"

	"github.com/banterbot/banter/store"
)

// Quieter says whether a guild has reached its daily spending cap (package budget's Guard).
type Quieter interface {
	// Quiet reports whether guild is at a cap; notice is the cap notice to say, the first
	// time a day it is asked with wantNotice for the guild.
	Quiet(ctx context.Context, guild string, wantNotice bool) (quiet bool, notice string)
	// NoticeNotSent gives back the cap notice Quiet returned when it could not be sent, so a
	// later direct address of the day says it.
	NoticeNotSent(ctx context.Context, guild string)
	// AllowsAtCap reports whether slot is still called at a cap.
	AllowsAtCap(slot string) bool
}

// withinBudget lets an attempt on through a guild at its spending cap only when it answers a
// direct address and the reply slot is allowed at the cap. The first direct address of the
// day after the cap gets the cap notice; a turn that is not answered is logged reply_skipped
// with reason budget_cap. It reports whether the attempt goes on.
func (s *Service) withinBudget(ctx context.Context, a *attempt) bool {
	if s.opts.Budget == nil {
		return true
	}
	p := a.primary
	quiet, notice := s.opts.Budget.Quiet(ctx, p.msg.GuildID, p.addressed())
	if !quiet {
		return true
	}
	if notice != "" {
		if err := s.sendNotice(ctx, p, notice); err != nil {
			a.outcome = outcomeOf(err)
			s.opts.Budget.NoticeNotSent(ctx, p.msg.GuildID)
			s.logger.Info("budget_notice_released", a.attrs...) // the send's failure is logged by sendNotice
		} else {
			a.outcome = outcomeOf(nil)
			s.logger.Info("budget_notice_sent", a.attrs...)
		}
	}
	if p.addressed() && s.opts.Budget.AllowsAtCap(SlotReply) {
		return true
	}
	s.opts.Metrics.reply("budget_cap")
	if a.outcome == "" {
		a.outcome = store.TurnSkipped
	}
	s.logger.Info("reply_skipped", append(a.attrs, "reason", "budget_cap", "notice", notice != "")...)
	return false
}
