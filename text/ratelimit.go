package text

import (
	"context"
	"math"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/store"
)

// budget is what the prompt ledger allows one turn.
type budget struct {
	ok bool
	// reason names the limit that refused the turn: channel_cap (maxPromptsPerHour),
	// explicit_reserve (the part kept for addressed turns) or user_share (perUserPromptShare).
	reason    string
	used      int // the channel's reply attempts in the last hour
	userUsed  int // the user's reply attempts in the channel in the last hour
	userLimit int
}

func (b budget) logAttrs(cfg *config.Config) []any {
	return []any{"limit", b.reason, "prompts_last_hour", b.used, "max_prompts_per_hour", cfg.Activity.MaxPromptsPerHour,
		"explicit_reserve", cfg.Activity.ExplicitReservePromptsPerHour, "user_prompts_last_hour", b.userUsed,
		"user_limit", b.userLimit}
}

// userPromptLimit is one user's share of a channel's maxPromptsPerHour, rounded up.
func userPromptLimit(cfg *config.Config) int {
	a := cfg.Activity
	return max(1, int(math.Ceil(a.PerUserPromptShare*float64(a.MaxPromptsPerHour)-1e-9)))
}

// promptAllowed applies activity.maxPromptsPerHour per channel over a sliding hour, keeping
// activity.explicitReservePromptsPerHour of it for turns that address the bot (an initiative
// turn may use only the unreserved part, an addressed turn all of it), and
// activity.perUserPromptShare of it per user (the author of the message answered). It counts
// reply attempts: calls to the reply model (the follow-up review of a draft belongs to its
// attempt; the direct-address classifier is not counted).
func (s *Service) promptAllowed(ctx context.Context, cfg *config.Config, channelID, userID string, explicit bool, now time.Time) budget {
	since := now.Add(-time.Hour)
	counts, err := s.opts.Store.CountPrompts(ctx, channelID, since)
	if err != nil {
		s.logger.Warn("store_failed", "op", "count_prompts", "channel_id", channelID, "error", err.Error())
		return budget{ok: explicit, reason: "ledger_unavailable"} // without the ledger, still answer people who asked
	}
	b := budget{used: counts[store.PromptExplicit] + counts[store.PromptInitiative], userLimit: userPromptLimit(cfg)}
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
		n, err := s.opts.Store.CountUserPrompts(ctx, channelID, userID, since)
		if err != nil {
			s.logger.Warn("store_failed", "op", "count_user_prompts", "channel_id", channelID, "error", err.Error())
		}
		b.userUsed = n
		if n >= b.userLimit {
			b.reason = "user_share"
			return b
		}
	}
	b.ok = true
	return b
}

// recordPrompt notes a reply attempt for the turn's channel and user.
func (s *Service) recordPrompt(ctx context.Context, channelID, userID string, explicit bool, now time.Time) {
	kind := store.PromptInitiative
	if explicit {
		kind = store.PromptExplicit
	}
	if err := s.opts.Store.RecordPrompt(ctx, channelID, userID, kind, now); err != nil {
		s.logger.Warn("store_failed", "op", "record_prompt", "channel_id", channelID, "error", err.Error())
	}
}
