package text

import (
	"context"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/store"
)

// promptAllowed applies activity.maxPromptsPerHour per channel over a sliding hour, keeping
// activity.explicitReservePromptsPerHour of it for turns that address the bot: an initiative
// turn may use only the unreserved part, an addressed turn all of it.
func (s *Service) promptAllowed(ctx context.Context, cfg *config.Config, channelID string, explicit bool, now time.Time) (bool, int) {
	counts, err := s.opts.Store.CountPrompts(ctx, channelID, now.Add(-time.Hour))
	if err != nil {
		s.logger.Warn("store_failed", "op", "count_prompts", "channel_id", channelID, "error", err.Error())
		return explicit, 0 // without the ledger, still answer people who asked
	}
	used := counts[store.PromptExplicit] + counts[store.PromptInitiative]
	limit := cfg.Activity.MaxPromptsPerHour
	if !explicit {
		limit -= cfg.Activity.ExplicitReservePromptsPerHour
	}
	return used < limit, used
}

func (s *Service) recordPrompt(ctx context.Context, channelID string, explicit bool, now time.Time) {
	kind := store.PromptInitiative
	if explicit {
		kind = store.PromptExplicit
	}
	if err := s.opts.Store.RecordPrompt(ctx, channelID, kind, now); err != nil {
		s.logger.Warn("store_failed", "op", "record_prompt", "channel_id", channelID, "error", err.Error())
	}
}
