package text

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// backfillOnce runs when a channel's worker starts for the first time in this process, before
// it answers anything there: when the store holds fewer than context.clusterLookback messages
// before the oldest queued turn (a freshly started bot, a channel it never read), the channel's
// recent history is fetched from REST and stored, so the conversation the bot joins is known.
// Turns whose history was read before are then read again (a new history epoch). It never runs
// inside a turn's context building.
func (s *Service) backfillOnce(cs *channelState) {
	cs.mu.Lock()
	var oldest *turn
	if !cs.backfilled && len(cs.pending) > 0 {
		cs.backfilled = true
		oldest = cs.pending[0]
	}
	cs.mu.Unlock()
	if oldest == nil {
		return
	}
	cfg := s.cfg()
	if len(s.historyOf(s.ctx, cfg, cs, oldest)) >= cfg.Context.ClusterLookback {
		return
	}
	if s.backfill(s.ctx, cfg, oldest.msg) > 0 {
		cs.newHistoryEpoch()
	}
}

// backfill stores the channel's recent history (the context.historyLimit messages before m)
// from REST, and reports how many it stored. It stores what ingest would have: not other
// bots' messages, nor those of blocked users or with ban words.
func (s *Service) backfill(ctx context.Context, cfg *config.Config, m store.Message) (stored int) {
	msgs, err := s.opts.Discord.ChannelMessages(m.ChannelID, cfg.Context.HistoryLimit, m.ID, "", "", discordgo.WithContext(ctx))
	if err != nil {
		s.logger.Warn("history_fetch_failed", "channel_id", m.ChannelID, "error", err.Error())
		return 0
	}
	info := s.channelInfo(ctx, m.ChannelID)
	selfID := s.selfID()
	ignored := 0
	defer func() {
		s.logger.Info("history_backfilled", "channel_id", m.ChannelID, "fetched", len(msgs), "stored", stored, "ignored", ignored)
	}()
	commands := s.memoryCommandIDs(cfg, msgs)
	for _, dm := range msgs {
		if dm.Author == nil || (dm.Author.Bot && dm.Author.ID != selfID) {
			continue
		}
		if commands[dm.ID] || (dm.Author.ID == selfID && dm.MessageReference != nil && commands[dm.MessageReference.MessageID]) {
			ignored++ // a /memory prefix command or the bot's answer to one: never stored
			continue
		}
		if dm.ChannelID == "" {
			dm.ChannelID = m.ChannelID
		}
		if dm.ChannelID != m.ChannelID {
			continue
		}
		s.names.learn(m.GuildID, dm)
		rec := storedFromDiscord(dm, info, dm.Author.ID == selfID)
		if s.excluded(cfg, rec) != safety.Allowed {
			ignored++
			continue
		}
		stored++
		if _, err := s.saveMessage(ctx, rec, "backfill"); err != nil {
			s.logger.Warn("store_failed", "op", "save_message", "message_id", rec.ID, "error", err.Error())
			return stored
		}
	}
	return stored
}

// memoryCommandIDs names the messages of msgs that are memory prefix commands ("!banter memory
// show"): ingest answers them without storing them, so neither they nor the bot's replies to them
// enter stored history when it is fetched again.
func (s *Service) memoryCommandIDs(cfg *config.Config, msgs []*discordgo.Message) map[string]bool {
	ids := map[string]bool{}
	for _, dm := range msgs {
		if isMemoryCommand(cfg, dm) {
			ids[dm.ID] = true
		}
	}
	return ids
}

// isMemoryCommand reports whether dm is a member's memory prefix command.
func isMemoryCommand(cfg *config.Config, dm *discordgo.Message) bool {
	if dm == nil || dm.Author == nil || dm.Author.Bot {
		return false
	}
	cmd := parsePrefixCommand(cfg, dm.Content)
	if cmd == nil || cmd.persona != "" {
		return false
	}
	_, ok := parseMemoryPrefix(cmd.topic)
	return ok
}

// answersMemoryCommand reports whether the bot's own message m is its answer to a memory prefix
// command (the gateway carries the message replied to): stored no more than the command is.
func answersMemoryCommand(cfg *config.Config, m *discordgo.Message) bool {
	r := m.ReferencedMessage
	return m.MessageReference != nil && r != nil && r.ID == m.MessageReference.MessageID && isMemoryCommand(cfg, r)
}
