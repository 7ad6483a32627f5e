package text

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// HandleMessageCreate ingests a new message: filter, store, addressing signals, Stage A, queue.
func (s *Service) HandleMessageCreate(m *discordgo.Message) {
	if m == nil || m.Author == nil || m.GuildID == "" {
		return // direct messages are not banter's business
	}
	cfg := s.cfg()
	ctx := s.ctx
	selfID := s.selfID()
	isSelf := selfID != "" && m.Author.ID == selfID

	if !isSelf {
		if m.Author.Bot {
			s.opts.Metrics.ingested("other_bot")
			return
		}
		if s.filter(cfg).Blocked(m.Author.ID) {
			s.opts.Metrics.ingested("blocked_user")
			s.logger.Debug("message_ignored", "reason", "blocked_user", "message_id", m.ID, "channel_id", m.ChannelID)
			return
		}
	}
	ch := s.channelInfo(ctx, m.ChannelID)
	if !s.channelAllowed(cfg.Permissions.AllowedChannelIDs, ch) {
		s.opts.Metrics.ingested("channel_not_allowed")
		return
	}
	if !s.channel(m.ChannelID).firstSight(m.ID, m.GuildID) {
		s.opts.Metrics.ingested("duplicate") // seen live and again in a catch-up
		return
	}
	if s.filter(cfg).Exclude(m.Author.ID, m.Content, isSelf) == safety.BanWord {
		s.opts.Metrics.ingested("ban_word")
		s.logger.Info("message_ignored", "reason", "ban_word", "message_id", m.ID, "channel_id", m.ChannelID, "user_id", m.Author.ID)
		return
	}

	rec := storedFromDiscord(m, ch, isSelf)
	if err := s.opts.Store.SaveMessage(ctx, rec); err != nil {
		s.logger.Error("store_failed", "op", "save_message", "message_id", m.ID, "error", err.Error())
	}
	cs := s.channel(m.ChannelID)
	cs.noteMessage(isSelf, rec.CreatedAt)
	if isSelf {
		s.opts.Metrics.ingested("self")
		return
	}
	s.opts.Metrics.ingested("stored")

	t := s.newTurn(ctx, m, rec)
	tt := t.stageATurn(s.now(), cs)
	if s.opts.Engine.Admit(&tt).Outcome == decision.OutcomePending {
		// The direct-address classifier is a model call: ask it off the gateway goroutine,
		// which must not stall (handlers run one at a time), with the conversation as context.
		if !s.spawn(func() {
			tt.Recent = s.recentLines(ctx, rec)
			s.decideAndEnqueue(ctx, cs, t, &tt)
		}) {
			s.shed(t, "shutting_down")
		}
		return
	}
	s.decideAndEnqueue(ctx, cs, t, &tt)
}

// decideAndEnqueue runs Stage A on a new turn and queues it when admitted.
func (s *Service) decideAndEnqueue(ctx context.Context, cs *channelState, t *turn, tt *decision.TextTurn) {
	d := s.opts.Engine.Decide(ctx, tt, t.logAttrs()...)
	if d.Outcome != decision.OutcomeAllow {
		return
	}
	t.decision = d
	s.enqueue(cs, t)
}

// spawn runs fn on a goroutine owned by the service (Shutdown waits for it); it returns false,
// without running fn, once Shutdown has begun.
func (s *Service) spawn(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
	return true
}

// HandleMessageUpdate syncs an edit into the store.
func (s *Service) HandleMessageUpdate(m *discordgo.Message) {
	if m == nil || m.ID == "" || m.Content == "" && m.EditedTimestamp == nil {
		return
	}
	edited := s.now()
	if m.EditedTimestamp != nil {
		edited = *m.EditedTimestamp
	}
	if err := s.opts.Store.EditMessage(s.ctx, m.ID, m.Content, edited); err != nil && !isNotFound(err) {
		s.logger.Error("store_failed", "op", "edit_message", "message_id", m.ID, "error", err.Error())
	}
}

// HandleMessageDelete marks a message deleted in the store.
func (s *Service) HandleMessageDelete(m *discordgo.Message) {
	if m == nil || m.ID == "" {
		return
	}
	if err := s.opts.Store.DeleteMessage(s.ctx, m.ID); err != nil && !isNotFound(err) {
		s.logger.Error("store_failed", "op", "delete_message", "message_id", m.ID, "error", err.Error())
	}
}

// storedFromDiscord converts a gateway or REST message into its stored form.
func storedFromDiscord(m *discordgo.Message, ch channelInfo, isSelf bool) store.Message {
	rec := store.Message{
		ID:        m.ID,
		ChannelID: m.ChannelID,
		GuildID:   m.GuildID,
		Content:   m.Content,
		CreatedAt: m.Timestamp,
		IsSelf:    isSelf,
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = snowflakeTime(m.ID)
	}
	if ch.isThread {
		rec.ThreadID = m.ChannelID
	}
	if m.Author != nil {
		rec.AuthorID = m.Author.ID
		rec.AuthorName = displayName(m)
		rec.IsBot = m.Author.Bot
	}
	if m.EditedTimestamp != nil {
		rec.EditedAt = *m.EditedTimestamp
	}
	if ref := m.MessageReference; ref != nil && ref.MessageID != "" {
		rec.ReplyToID = ref.MessageID
	}
	return rec
}

// displayName is the name people see: server nickname, else global name, else username.
func displayName(m *discordgo.Message) string {
	if m.Member != nil && m.Member.Nick != "" {
		return m.Member.Nick
	}
	if m.Author.GlobalName != "" {
		return m.Author.GlobalName
	}
	return m.Author.Username
}

// snowflakeTime is the creation time encoded in a Discord id.
func snowflakeTime(id string) time.Time {
	t, err := discordgo.SnowflakeTimestamp(id)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// turn is one admitted message on its way to a reply.
type turn struct {
	msg        store.Message
	mentions   bool
	replyToBot bool   // replies to one of the bot's messages in this channel (DirectReply)
	replyRef   string // the message replied to, when any (bot's or someone else's)
	command    *prefixCommand
	arrived    time.Time // when it was received (monotonic clock)
	seq        uint64    // channel message counter at arrival
	decision   decision.Decision
}

func (t *turn) addressed() bool { return t.decision.DirectAddressed || t.command != nil }

func (t *turn) logAttrs() []slog.Attr {
	return []slog.Attr{slog.String("message_id", t.msg.ID), slog.String("channel_id", t.msg.ChannelID),
		slog.String("user_id", t.msg.AuthorID), slog.String("user_name", t.msg.AuthorName)}
}

// newTurn reads the addressing facts of a stored message: mention, reply to the bot, command.
func (s *Service) newTurn(ctx context.Context, m *discordgo.Message, rec store.Message) *turn {
	selfID := s.selfID()
	t := &turn{msg: rec, arrived: time.Now()} // monotonic: the coalescing window is real time
	// Discord lists the replied-to author in mentions when a reply pings; only a mention
	// written in the text counts as one.
	for _, u := range m.Mentions {
		if u != nil && u.ID == selfID && (strings.Contains(m.Content, "<@"+selfID+">") || strings.Contains(m.Content, "<@!"+selfID+">")) {
			t.mentions = true
		}
	}
	if rec.ReplyToID != "" && s.sameChannelReference(ctx, m, rec.ReplyToID) {
		t.replyRef = rec.ReplyToID
		t.replyToBot = s.isBotMessage(ctx, m, rec.ReplyToID)
	}
	t.command = parsePrefixCommand(s.cfg(), rec.Content)
	return t
}

// sameChannelReference reports whether m's reference (to message id) points into m's own
// channel: a reference naming another channel (a forward, a thread's starter message) never
// brings that channel's message into this channel's context. A reference without a channel id
// is checked by looking the message up in this channel.
func (s *Service) sameChannelReference(ctx context.Context, m *discordgo.Message, id string) bool {
	switch ch := m.MessageReference.ChannelID; {
	case ch == m.ChannelID:
		return true
	case ch != "":
		return false
	}
	ref, ok := s.lookup(ctx, m.ChannelID, id)
	return ok && !ref.Deleted // a 404 in this channel: gone, or never here
}

// isBotMessage reports whether id is a live (not deleted) message of the bot in m's channel.
func (s *Service) isBotMessage(ctx context.Context, m *discordgo.Message, id string) bool {
	selfID := s.selfID()
	if ref := m.ReferencedMessage; ref != nil && ref.ID == id && ref.Author != nil {
		if ref.Author.ID != selfID {
			return false
		}
	}
	parent, ok := s.lookup(ctx, m.ChannelID, id)
	return ok && parent.IsSelf && !parent.Deleted && parent.ChannelID == m.ChannelID
}

// stageATurn renders the turn for Stage A at time now.
func (t *turn) stageATurn(now time.Time, cs *channelState) decision.TextTurn {
	lastBot, seq := cs.snapshot()
	tt := decision.TextTurn{
		MessageID:      t.msg.ID,
		ChannelID:      t.msg.ChannelID,
		AuthorID:       t.msg.AuthorID,
		AuthorName:     t.msg.AuthorName,
		Content:        t.msg.Content,
		MentionsBot:    t.mentions,
		ReplyToBot:     t.replyToBot,
		Command:        t.command != nil,
		At:             t.msg.CreatedAt,
		Now:            now,
		BotLastSpokeAt: lastBot,
		Phase:          decision.PhaseEnqueue,
	}
	if t.seq != 0 {
		tt.Phase = decision.PhasePreGeneration
		tt.NewerMessages = int(seq - t.seq)
	}
	return tt
}

// classifierLines is how many earlier messages the direct-address classifier is shown.
const classifierLines = 8

// recentLines are the messages before m in its channel, oldest first, for the direct-address
// classifier's prompt.
func (s *Service) recentLines(ctx context.Context, m store.Message) []decision.ContextLine {
	before, err := s.opts.Store.RecentMessages(ctx, m.ChannelID, m.CreatedAt, classifierLines)
	if err != nil {
		s.logger.Warn("store_failed", "op", "recent_messages", "channel_id", m.ChannelID, "error", err.Error())
	}
	before = s.shownOnly(s.cfg(), before) // stored before a reload of the ban words or blocked users
	lines := make([]decision.ContextLine, len(before))
	for i, b := range before {
		lines[i] = decision.ContextLine{Speaker: b.AuthorName, Text: b.Content, Bot: b.IsSelf}
	}
	return lines
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
