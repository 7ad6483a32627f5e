package text

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// HandleMessageCreate is the pipeline's entry (ingest): filter, store, addressing signals,
// then admission (Stage A) and the channel's queue.
func (s *Service) HandleMessageCreate(m *discordgo.Message) { s.ingest(m, true, nil) }

// ingest is HandleMessageCreate; remember is false for a message a process stored before
// (an open turn's, requeued by turn recovery): memory extraction already has it, extracted or
// after its channel's memory cursor (memory.Extractor.Resume), and is not offered it twice.
// pre, when not nil, is the catch-up's write of the message (catchup_batch.go): the same
// record is not written again. It reports whether the message went on as a turn that clears
// pre's unhandled mark when it ends (turnsHandled); otherwise the pipeline is done with it.
func (s *Service) ingest(m *discordgo.Message, remember bool, pre *prestored) bool {
	if m == nil || m.Author == nil || m.GuildID == "" {
		return false // direct messages are not banter's business
	}
	s.names.learn(m.GuildID, m) // whoever it shows, for their mentions, whatever becomes of it
	cfg := s.cfg()
	ctx := s.ctx
	selfID := s.selfID()
	isSelf := selfID != "" && m.Author.ID == selfID

	if !isSelf {
		if m.Author.Bot {
			s.opts.Metrics.ingested("other_bot")
			return false
		}
		if s.filter(cfg).Blocked(m.Author.ID) {
			s.opts.Metrics.ingested("blocked_user")
			s.logger.Debug("message_ignored", "reason", "blocked_user", "message_id", m.ID, "channel_id", m.ChannelID)
			return false
		}
	}
	ch := s.channelInfo(ctx, m.ChannelID)
	if !s.channelAllowed(cfg.Permissions.AllowedChannelIDs, ch) {
		s.opts.Metrics.ingested("channel_not_allowed")
		return false
	}
	if !s.channel(m.ChannelID).firstSight(m.ID, m.GuildID) {
		s.opts.Metrics.ingested("duplicate") // seen live and again in a catch-up
		return false
	}
	if s.filter(cfg).Exclude(m.Author.ID, m.Content, isSelf) == safety.BanWord {
		s.opts.Metrics.ingested("ban_word")
		s.logger.Info("message_ignored", "reason", "ban_word", "message_id", m.ID, "channel_id", m.ChannelID, "user_id", m.Author.ID)
		return false
	}

	if !isSelf && s.handleMemoryPrefix(cfg, m) {
		return false // "!banter memory …": answered, not stored
	}
	if isSelf && answersMemoryCommand(cfg, m) {
		s.opts.Metrics.ingested("memory_command")
		return false // nor is the answer to one
	}
	rec := storedFromDiscord(m, ch, isSelf)
	cs := s.channel(m.ChannelID)
	var t *turn
	opened := false
	if !isSelf {
		t = s.newTurn(ctx, cfg, m, rec)
		t.unhandled = pre != nil && pre.marked
		opened = s.openBeforeStore(ctx, cfg, cs, t)
	}
	refused, err := s.saveOnce(ctx, rec, "ingest", pre)
	if err != nil {
		s.logger.Error("store_failed", "op", "save_message", "message_id", m.ID, "error", err.Error())
	}
	if refused { // said before its author's forget-me (or banter's reply to that): not kept
		s.opts.Metrics.ingested("forgotten")
		if isSelf {
			cs.noteMessage(true, rec.CreatedAt) // banter did speak
		}
		if opened { // no record of it is kept either (memory_write_refused is logged)
			if err := s.opts.Store.DropTurn(context.WithoutCancel(ctx), m.ID); err != nil {
				s.logger.Error("store_failed", "op", "drop_turn", "message_id", m.ID, "error", err.Error())
			}
		}
		return false // a member's: neither remembered nor answered
	}
	cs.noteMessage(isSelf, rec.CreatedAt)
	if isSelf {
		s.opts.Metrics.ingested("self")
		return false
	}
	s.opts.Metrics.ingested("stored")
	if remember {
		s.remember(rec)
	}

	return s.admit(ctx, cfg, cs, t, opened)
}

// openBeforeStore records the durable turn of a message that addresses the bot, or may (the
// direct-address classifier will be asked), before the message is stored: the catch-up of a
// later process starts after the newest stored message, so a crash between the store and the
// turn's record would lose it; the other way round, the next process finds the open turn.
// Stage A closes it (explained) when it does not admit it. It reports whether it recorded one.
func (s *Service) openBeforeStore(ctx context.Context, cfg *config.Config, cs *channelState, t *turn) bool {
	tt := t.stageATurn(cfg, s.now(), cs, s.botNickname(t.msg.GuildID))
	d := s.opts.Engine.Admit(&tt)
	if !d.DirectAddressed && t.command == nil && d.Outcome != decision.OutcomePending {
		return false
	}
	s.openTurn(ctx, t, nil)
	return true
}

// admit runs Stage A on a new turn and queues it when admitted. A message that only names the
// bot may need the direct-address classifier, a model call: it is asked off the gateway
// goroutine, which must not stall (handlers run one at a time), with the conversation as
// context.
//
// opened says its durable turn is recorded already (openBeforeStore); one Stage A declines, or
// finds not addressed after all, is closed (explained: the decision is logged). In a channel
// where the bot may not post (the session's state says so) no Stage A runs (cannotAnswer).
// It reports whether the turn went on (queued, or to the classifier), as ingest does.
func (s *Service) admit(ctx context.Context, cfg *config.Config, cs *channelState, t *turn, opened bool) bool {
	if why := s.sendRefusal(t.msg.ChannelID); why != "" {
		s.cannotAnswer(t, opened, why) // nothing could be sent: ask no model
		return false
	}
	tt := t.stageATurn(cfg, s.now(), cs, s.botNickname(t.msg.GuildID))
	pending := s.opts.Engine.Admit(&tt).Outcome == decision.OutcomePending
	ctx = llm.WithAccount(ctx, llm.Account{Guild: t.msg.GuildID, Slot: SlotClassifier})
	if pending && !opened { // the policy changed since openBeforeStore (a reload)
		s.openTurn(ctx, t, nil)
		opened = true
	}
	decide := func() bool {
		d := s.opts.Engine.Decide(ctx, &tt, t.logAttrs()...)
		allowed := d.Outcome == decision.OutcomeAllow
		if allowed {
			t.decision = d
		}
		switch addressed := allowed && t.addressed(); {
		case addressed && !opened:
			s.openTurn(ctx, t, nil) // durable before anything is generated (turns.go)
		case !addressed && opened:
			s.closeTurnIDs([]string{t.msg.ID}, store.TurnExplained) // declined, or not addressed after all
		}
		if allowed {
			s.enqueue(cs, t)
		}
		return allowed
	}
	if !pending {
		return decide()
	}
	// The classifier may take seconds: the turn is durable before it is asked, so that a
	// crash meanwhile does not lose it.
	if !s.spawn(func() {
		s.classifierView(ctx, cfg, cs, t, &tt)
		if !decide() {
			s.turnsHandled(t)
		}
	}) {
		s.shed(t, "shutting_down") // its mark stays: the next process takes it up
	}
	return true
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

// HandleMessageUpdate syncs an edit into the store, and the images an update brings (Discord
// adds a link's image embed in an update after the create).
func (s *Service) HandleMessageUpdate(m *discordgo.Message) {
	if m == nil || m.ID == "" {
		return
	}
	if m.Content != "" || m.EditedTimestamp != nil {
		edited := s.now()
		if m.EditedTimestamp != nil {
			edited = *m.EditedTimestamp
		}
		if err := s.opts.Store.EditMessage(s.ctx, m.ID, m.Content, edited); err != nil && !isNotFound(err) {
			s.logger.Error("store_failed", "op", "edit_message", "message_id", m.ID, "error", err.Error())
		} else if err == nil {
			s.rememberEdit(m.ID)
		}
	}
	if len(m.Embeds) > 0 || len(m.Attachments) > 0 {
		s.updateImages(m)
	}
}

// updateImages replaces a stored message's images with those an update carries: its embeds'
// images, and its attachments when it lists them (else the stored attachments stay).
func (s *Service) updateImages(m *discordgo.Message) {
	rec, err := s.opts.Store.Message(s.ctx, m.ID)
	if err != nil || rec.Deleted {
		return // never stored (filtered, another channel) or gone
	}
	fresh := storedImages(m)
	var ims []store.Image
	if len(m.Attachments) == 0 {
		for _, im := range rec.Images {
			if im.Source == "attachment" {
				ims = append(ims, im)
			}
		}
	}
	ims = append(ims, fresh...)
	if slices.Equal(ims, rec.Images) {
		return
	}
	rec.Images = ims[:min(len(ims), maxStoredImages)]
	if _, err := s.saveMessage(s.ctx, rec, "update_images"); err != nil {
		s.logger.Error("store_failed", "op", "save_message", "message_id", m.ID, "error", err.Error())
	}
}

// HandleMessageDelete marks a message deleted in the store.
func (s *Service) HandleMessageDelete(m *discordgo.Message) {
	if m == nil || m.ID == "" {
		return
	}
	if m.ChannelID != "" {
		s.channel(m.ChannelID).noteDeleted(m.ID) // a turn's history read before the delete drops it
	}
	if err := s.opts.Store.DeleteMessage(s.ctx, m.ID); err != nil && !isNotFound(err) {
		s.logger.Error("store_failed", "op", "delete_message", "message_id", m.ID, "error", err.Error())
	}
	s.forgetMessage(m.ID, m.GuildID)
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
		if r := m.ReferencedMessage; r != nil && r.ID == ref.MessageID && r.Author != nil {
			rec.ReplyToOrigin = store.Origin{AuthorID: r.Author.ID, At: r.Timestamp}
			if r.Timestamp.IsZero() {
				rec.ReplyToOrigin.At = snowflakeTime(r.ID)
			}
		}
	}
	rec.Images = storedImages(m)
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

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
