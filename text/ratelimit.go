package text

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/store"
)

// budget is what the prompt ledger allows one turn. It is read from the ledger once, when the
// turn is admitted, together with the channel's tally of the prompts this process recorded
// then; when the turn is answered, the prompts recorded since are added from the tally, so the
// ledger is not read again. Prompts that left the sliding hour meanwhile still count, which
// only errs on the side of the cap.
type budget struct {
	checked bool
	ok      bool
	// reason names the limit that refused the turn: channel_cap (maxPromptsPerHour),
	// explicit_reserve (the part kept for addressed turns), user_share (perUserPromptShare),
	// or ledger_unavailable (the store failed: only addressed turns are answered).
	reason    string
	used      int // the channel's reply attempts in the last hour
	userUsed  int // the user's reply attempts in the channel in the last hour
	userRead  bool
	userLimit int
	mark      tallyMark // the channel's tally when the ledger was read
}

func (b budget) logAttrs(cfg *config.Config) []any {
	return []any{"limit", b.reason, "prompts_last_hour", b.used, "max_prompts_per_hour", cfg.Activity.MaxPromptsPerHour,
		"explicit_reserve", cfg.Activity.ExplicitReservePromptsPerHour, "user_prompts_last_hour", b.userUsed,
		"user_limit", b.userLimit}
}

// promptTally counts the reply attempts this process recorded in a channel (guarded by the
// channel's mutex).
type promptTally struct {
	total  uint64
	byUser map[string]uint64
}

// tallyMark is a reading of a channel's tally, for one user.
type tallyMark struct{ total, user uint64 }

func (c *channelState) tallyMark(userID string) tallyMark {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tallyMark{total: c.tally.total, user: c.tally.byUser[userID]}
}

func (c *channelState) countPrompt(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tally.total++
	if c.tally.byUser == nil {
		c.tally.byUser = map[string]uint64{}
	}
	c.tally.byUser[userID]++
}

// userPromptLimit is one user's share of a channel's maxPromptsPerHour, rounded up.
func userPromptLimit(cfg *config.Config) int {
	a := cfg.Activity
	return max(1, int(math.Ceil(a.PerUserPromptShare*float64(a.MaxPromptsPerHour)-1e-9)))
}

// readBudget reads the prompt ledger for a turn of userID in cs: the channel's reply attempts
// in the last hour and, when activity.perUserPromptShare limits them, the user's. The tally
// is read first, so that a prompt recorded during the read is counted twice at worst, never
// missed.
func (s *Service) readBudget(ctx context.Context, cfg *config.Config, cs *channelState, userID string, now time.Time) budget {
	b := budget{checked: true, mark: cs.tallyMark(userID)}
	since := now.Add(-time.Hour)
	counts, err := s.opts.Store.CountPrompts(ctx, cs.id, since)
	if err != nil {
		s.logger.Warn("store_failed", "op", "count_prompts", "channel_id", cs.id, "error", err.Error())
		b.reason = "ledger_unavailable"
		return b
	}
	b.used = counts[store.PromptExplicit] + counts[store.PromptInitiative]
	if userPromptLimit(cfg) < cfg.Activity.MaxPromptsPerHour {
		n, err := s.opts.Store.CountUserPrompts(ctx, cs.id, userID, since)
		if err != nil {
			s.logger.Warn("store_failed", "op", "count_user_prompts", "channel_id", cs.id, "error", err.Error())
		}
		b.userUsed, b.userRead = n, true
	}
	return b
}

// promptAllowed applies activity.maxPromptsPerHour per channel over a sliding hour, keeping
// activity.explicitReservePromptsPerHour of it for turns that address the bot (an initiative
// turn may use only the unreserved part, an addressed turn all of it), and
// activity.perUserPromptShare of it per user (the author of the message answered). It counts
// reply attempts: each turn that reaches the reply model once (its lookups and follow-up pass
// belong to it; the direct-address classifier is not counted). t.budget is read from the
// ledger when t has none yet, and brought up to date from the channel's tally otherwise.
func (s *Service) promptAllowed(ctx context.Context, cfg *config.Config, cs *channelState, t *turn, explicit bool, now time.Time) budget {
	if !t.budget.checked || t.budget.reason == "ledger_unavailable" {
		t.budget = s.readBudget(ctx, cfg, cs, t.msg.AuthorID, now)
	}
	b := t.budget
	if b.reason == "ledger_unavailable" {
		b.ok = explicit // without the ledger, still answer people who asked
		return b
	}
	cur := cs.tallyMark(t.msg.AuthorID)
	b.used += int(cur.total - b.mark.total)
	b.userUsed += int(cur.user - b.mark.user)
	b.userLimit = userPromptLimit(cfg)
	b.reason = ""
	limit := cfg.Activity.MaxPromptsPerHour
	if !explicit {
		limit -= cfg.Activity.ExplicitReservePromptsPerHour
	}
	if b.used >= limit {
		b.reason = "channel_cap"
		if b.used < cfg.Activity.MaxPromptsPerHour {
			b.reason = "explicit_reserve"
		}
		return b
	}
	if b.userLimit < cfg.Activity.MaxPromptsPerHour {
		if !b.userRead { // the per-user share was switched on since the ledger was read
			t.budget = s.readBudget(ctx, cfg, cs, t.msg.AuthorID, now)
			return s.promptAllowed(ctx, cfg, cs, t, explicit, now)
		}
		if b.userUsed >= b.userLimit {
			b.reason = "user_share"
			return b
		}
	}
	b.ok = true
	return b
}

// recordPrompt notes a reply attempt for the turn's channel and author, in the ledger and in
// the channel's tally. The store refuses the ledger row when the author ran /memory forget-me
// after saying it (a forget-me during the reply, after the worker read the watermark): no row
// names them then, but the tally still counts the attempt.
func (s *Service) recordPrompt(ctx context.Context, cs *channelState, t *turn, now time.Time) {
	kind := store.PromptInitiative
	if t.addressed() {
		kind = store.PromptExplicit
	}
	err := s.opts.Store.RecordPrompt(ctx, store.Prompt{GuildID: t.msg.GuildID, ChannelID: cs.id, UserID: t.msg.AuthorID,
		SaidAt: t.msg.CreatedAt, Kind: kind, At: now})
	switch {
	case errors.Is(err, store.ErrForgotten):
		s.writeRefused(t, "prompt_ledger", "reply")
	case err != nil:
		s.logger.Warn("store_failed", "op", "record_prompt", "channel_id", cs.id, "error", err.Error())
	}
	cs.countPrompt(t.msg.AuthorID)
}
