package text

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/memory"
	"github.com/banterbot/banter/store"
)

// Long-term memory in the text pipeline (docs/memory.md): stored messages are offered to the
// memory extractor (Options.Memory), the facts of a turn's participants and of what it asks
// about go into its prompt, memory_lookup searches the facts before the messages, and a
// deleted message takes the facts it was the only source of with it.

// saveMessage stores a message (source names the caller for the log: ingest, catch_up, …). A
// message its author said before running /memory forget-me in the guild, or banter's reply to
// one, arriving only now, is refused by the store: that is logged (memory_write_refused, not
// naming the member) and reported as refused, not as an error.
func (s *Service) saveMessage(ctx context.Context, rec store.Message, source string) (refused bool, err error) {
	err = s.opts.Store.SaveMessage(ctx, rec)
	if errors.Is(err, store.ErrForgotten) {
		s.logRefused(rec, source)
		return true, nil
	}
	return false, err
}

// logRefused logs a message the store refused because its author ran /memory forget-me after
// saying it (or it is banter's reply to such words); source names the write.
func (s *Service) logRefused(rec store.Message, source string) {
	s.logger.Info("memory_write_refused", "guild_id", rec.GuildID, "channel_id", rec.ChannelID, "message_id", rec.ID,
		"what", "message", "op", source, "reason", "forgotten")
}

// writeRefused logs a write about t the store refused because its author ran /memory
// forget-me after saying it (what: prompt_ledger, turn); by message, not by author. The store
// counts it (banter_store_operations_total{result="forgotten"}).
func (s *Service) writeRefused(t *turn, what, op string) {
	s.logger.Info("memory_write_refused", "guild_id", t.msg.GuildID, "channel_id", t.msg.ChannelID, "message_id", t.msg.ID,
		"what", what, "op", op, "reason", "forgotten")
}

// forgottenTurn reports whether t's author ran /memory forget-me in its server after saying it
// (while t waited in the queue): such a turn is not answered, and is logged and counted (not by
// author). The watermark is read when the attempt takes the turn: a forget-me after that is one
// during the reply (docs/memory.md).
func (s *Service) forgottenTurn(ctx context.Context, t *turn) bool {
	gone, err := s.opts.Store.Forgot(ctx, t.msg.GuildID, t.msg.AuthorID, t.msg.CreatedAt)
	if err != nil {
		s.logger.Warn("store_failed", "op", "forgot", "message_id", t.msg.ID, "error", err.Error())
		return false
	}
	if gone {
		s.opts.Metrics.shed(t.addressed(), "forgotten")
		s.logger.Info("message_ignored", "reason", "forgotten", "source", "queue", "message_id", t.msg.ID,
			"channel_id", t.msg.ChannelID)
	}
	return gone
}

// remember offers a stored message to memory extraction.
func (s *Service) remember(m store.Message) {
	if s.opts.Memory != nil && !m.IsSelf {
		s.opts.Memory.Observe(s.ctx, m)
	}
}

// resumeMemory queues again, when this process starts owning a guild, the messages a process
// that stopped had queued for memory extraction and not extracted (memory.Extractor.Resume).
// It runs on the gateway's event goroutine, before the guild's catch-up and live messages, so
// that a channel's older messages are queued first.
func (s *Service) resumeMemory(g *discordgo.Guild) {
	if s.opts.Memory != nil && g != nil && g.ID != "" && !g.Unavailable {
		s.opts.Memory.Resume(s.ctx, g.ID)
	}
}

// rememberEdit re-extracts an edited message: the facts it alone was the source of go, and its
// new words are offered again.
func (s *Service) rememberEdit(id string) {
	if s.opts.Memory == nil {
		return
	}
	m, err := s.opts.Store.Message(s.ctx, id)
	if err != nil || m.Deleted || m.IsSelf || !s.cfg().Memory.EnabledFor(m.GuildID) {
		return
	}
	s.forgetMessage(id, m.GuildID)
	s.remember(m)
}

// forgetMessage deletes the facts whose only source was the message (deleted or edited) and
// drops it from a pending batch; guild is the message's ("" when unknown: every guild's
// recall is refreshed).
func (s *Service) forgetMessage(id, guild string) {
	if s.opts.Memory != nil {
		s.opts.Memory.DropMessage(id)
		defer s.opts.Memory.Invalidate(guild)
	}
	n, err := s.opts.Store.ForgetMessage(s.ctx, id)
	if err != nil {
		s.logger.Error("store_failed", "op", "forget_message", "message_id", id, "error", err.Error())
	} else if n > 0 {
		s.logger.Info("memory_facts_forgotten", "message_id", id, "facts", n, "reason", "message_deleted_or_edited")
	}
}

// addMemories appends to the turn's prompt what banter remembers of its participants and of
// what the turn's messages talk about, within memory.promptTokens.
func (s *Service) addMemories(ctx context.Context, a *attempt) {
	cfg, guild := a.cfg, a.primary.msg.GuildID
	if s.opts.Memory == nil || !cfg.Memory.EnabledFor(guild) || len(a.req.Messages) == 0 {
		return
	}
	ids := make([]string, 0, len(a.c.people))
	for _, p := range a.c.people {
		ids = append(ids, p.id)
	}
	var words []string
	for _, t := range a.c.triggers {
		words = append(words, t.Content)
	}
	facts, err := s.opts.Memory.Recall(ctx, guild, ids, strings.Join(words, " "), cfg.Memory.PromptTokens)
	if err != nil {
		s.logger.Warn("store_failed", append(a.attrs, "op", "memory_recall", "error", err.Error())...)
		return
	}
	if block := memory.Render(facts, s.now()); block != "" {
		last := &a.req.Messages[len(a.req.Messages)-1]
		last.Content += "\n" + block
	}
}

// factsFound renders the guild's facts matching a memory_lookup query, for the top of its
// result ("" when memory is off or none match): by words, and by meaning too when the query
// has an embedding (qv), blended (memory.BlendFacts).
func (s *Service) factsFound(ctx context.Context, cfg *config.Config, guild, query string, qv store.Embedding) string {
	if !cfg.Memory.EnabledFor(guild) {
		return ""
	}
	fs, err := memory.LookupFacts(ctx, s.opts.Store, guild, query, qv, cfg.Embeddings.MeaningWeight, cfg.Lookups.Memory.MaxResults)
	if err != nil || len(fs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Facts remembered:\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "- %s\n", f.Statement)
	}
	b.WriteString("Messages:\n")
	return b.String()
}

// queryEmbedding embeds a memory_lookup query when search by meaning is on for the turn's
// guild; ok is false (search by words only) when it is off or the call failed (logged).
func (s *Service) queryEmbedding(ctx context.Context, a *attempt, query string) (store.Embedding, bool) {
	guild := a.primary.msg.GuildID
	if !s.opts.Embedder.On(a.cfg, guild) {
		return store.Embedding{}, false
	}
	qv, err := s.opts.Embedder.Query(ctx, guild, query)
	if err != nil {
		s.logger.Warn("memory_lookup_words_only", append(a.attrs, "error", err.Error())...)
		return store.Embedding{}, false
	}
	return qv, true
}
