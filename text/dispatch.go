package text

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/store"
)

// sendPlan says where and how a reply goes.
type sendPlan struct {
	text     string
	replyTo  string // message to reply to; empty posts to the channel
	mode     string // trigger_reply, target_reply, broadcast, fallback_broadcast
	fallback string // why a reply became a broadcast, if it did
	// coalesced are the addressed turns answered together with the primary one: a lost send
	// is logged under each of their ids too.
	coalesced []string
	// notice: a fixed text (apology, swamped, unknown persona), not the model's reply; its
	// nonce differs from the reply's.
	notice bool
	// filtered: the model's text held a ban word and safety.filteredReplyText went instead.
	filtered bool
}

// dispatch routes and sends the attempt's text, and logs the result.
func (s *Service) dispatch(ctx context.Context, a *attempt) {
	p := a.primary
	plan := sendPlan{replyTo: p.msg.ID, mode: "trigger_reply"}
	if !a.placeholder {
		plan = s.plan(ctx, a.cfg, &a.c, p, a.ans.send, a.fallback)
	}
	plan.text = a.text
	plan.coalesced = a.coalescedIDs()
	tSend := s.now()
	sent, err := s.send(ctx, a.cfg, p, &a.c, &plan)
	done := s.now()
	s.opts.Metrics.phase("send", done.Sub(tSend))
	s.opts.Metrics.phase("total", done.Sub(a.start))
	a.outcome = outcomeOf(err)
	if err != nil {
		if ctx.Err() != nil {
			a.outcome = "" // cut by shutdown: left open for the next process (the nonce stops a second post)
		}
		s.opts.Metrics.reply(s.logSendFailed(err, a.attrs))
		return
	}
	if a.placeholder {
		s.opts.Metrics.reply("placeholder")
	} else {
		s.opts.Metrics.reply("sent")
	}
	s.opts.Metrics.target(plan.mode)
	event := "sent_message"
	if plan.replyTo != "" {
		event = "sent_reply"
	}
	s.logger.Info(event, append(append(a.attrs, a.latencies(done)...), "sent_ids", sent, "mode", plan.mode, "target_message_id", plan.replyTo,
		"fallback", plan.fallback, "placeholder", a.placeholder, "filtered", plan.filtered, "persona", a.c.persona, "context", a.c.kind.String(),
		"model", a.res.Model, "latency_send_ms", ms(done.Sub(tSend)))...)
}

// coalescedIDs returns the ids of the addressed turns answered together with the primary one.
func (a *attempt) coalescedIDs() []string {
	var ids []string
	for _, t := range a.admitted {
		if t != a.primary && t.addressed() {
			ids = append(ids, t.msg.ID)
		}
	}
	return ids
}

// modelFailed handles a model error: an addressed user gets a short in-character apology, and
// every failure is logged. It returns the turn's durable outcome ("" when shutdown cut the
// call: the turn stays open for the next process).
func (s *Service) modelFailed(ctx context.Context, t *turn, err error, attrs []any) string {
	if ctx.Err() != nil {
		s.logger.Warn("reply_failed", append(attrs, "error", err.Error(), "cause", "shutting_down")...)
		s.opts.Metrics.reply("failed")
		return ""
	}
	s.logger.Error("reply_failed", append(attrs, "error", err.Error())...)
	if !t.addressed() {
		s.opts.Metrics.reply("failed")
		return store.TurnFailed
	}
	s.opts.Metrics.reply("apologized")
	s.sendNotice(ctx, t, apology)
	return store.TurnFailed // an apology at most, not a reply
}

// apology is sent when the model fails on a turn that addressed the bot.
const apology = "Sorry, my thoughts got tangled just now — give me a moment and ask me again?"

// sendNotice replies to t with a fixed text (no model involved).
func (s *Service) sendNotice(ctx context.Context, t *turn, text string) error {
	cfg := s.cfg()
	_, err := s.send(ctx, cfg, t, nil, &sendPlan{text: text, replyTo: t.msg.ID, mode: "trigger_reply", notice: true})
	if err != nil {
		s.logSendFailed(err, []any{"message_id", t.msg.ID, "channel_id", t.msg.ChannelID})
	}
	return err
}

// plan routes a reply by the reply-routing table (decision.Route; docs/text.md "Routing"):
// unaddressed turns post to the channel unless text.targetedReplies is on and the model chose
// a target it may answer; addressed turns reply (to the trigger, or to the model's valid
// target), in initiative channels activity.initiativeReplyShare of the time. The model's
// target is checked here (targetRefused) and the verdict logged (reply_decision).
func (s *Service) plan(ctx context.Context, cfg *config.Config, c *convo, primary *turn, send sendArgs, fallback string) sendPlan {
	in := decision.RouteInput{
		Addressed:         primary.addressed(),
		InitiativeChannel: slices.Contains(cfg.Permissions.InitiativeChannelIDs, primary.msg.ChannelID),
		TargetedReplies:   cfg.Text.TargetedReplies,
		ReplyShare:        cfg.Activity.InitiativeReplyShare,
		TriggerID:         primary.msg.ID,
		Fallback:          fallback,
	}
	if fallback == "" && send.Mode == sendModeReply {
		in.Target = send.TargetMessageID
		in.TargetRefused = s.targetRefused(cfg, c, in.Addressed, in.Target)
	}
	r := decision.Route(in)
	if r.Fallback != "" {
		s.opts.Metrics.fallback(r.Fallback)
	}
	r.Log(ctx, s.logger, in, slog.String("message_id", primary.msg.ID), slog.String("channel_id", primary.msg.ChannelID),
		slog.Any("trigger_ids", storedIDs(c.triggers)))
	return sendPlan{replyTo: r.ReplyTo, mode: r.Mode, fallback: r.Fallback}
}

// targetRefused says why the model may not reply to target ("" when it may). An addressed
// turn's reply may answer one of the coalesced burst's messages or the anchor (the message the
// trigger replies to); an unaddressed one any message it was shown. No target may be older
// than text.targetMaxAgeMinutes.
func (s *Service) targetRefused(cfg *config.Config, c *convo, addressed bool, target string) string {
	if target == "" || target == c.primary.ID {
		return ""
	}
	var m *store.Message
	for _, shown := range c.all() {
		if shown.ID == target {
			m = &shown
			break
		}
	}
	inBurst := slices.ContainsFunc(c.triggers, func(m store.Message) bool { return m.ID == target })
	switch {
	case m == nil:
		return "unknown_target"
	case addressed && !inBurst && (c.anchor == nil || c.anchor.ID != target):
		return "not_in_burst"
	case s.now().Sub(m.CreatedAt) > time.Duration(cfg.Text.TargetMaxAgeMinutes)*time.Minute:
		return "target_too_old"
	}
	return ""
}

func storedIDs(ms []store.Message) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// send posts the plan's text through the Sender (post): ban words scrubbed, a listed person's
// "@Name" the model wrote made their mention (linkMentions), mass mentions defused, split into messages of at most 2000 characters at sentence or line boundaries,
// server errors retried with the same nonce. The first part carries the reply reference;
// allowed_mentions never lets anything ping except, per config, the replied-to user. A reply
// whose target was deleted meanwhile is sent as a plain message opened by an apology
// (targetDeletedNote). Where the bot may not reference messages (no Read Message History:
// replyReference), the reply goes out as a plain message opened by its addressee's mention
// (post.Message.Addressee). A model reply that holds a ban word is replaced by
// safety.filteredReplyText, never sent starred. Sent messages are stored with
// the persona that wrote them. It returns the ids sent and updates plan when the reply had to
// fall back.
func (s *Service) send(ctx context.Context, cfg *config.Config, t *turn, c *convo, plan *sendPlan) ([]string, error) {
	text := plan.text
	if !plan.notice && s.filter(cfg).Trips(text) {
		s.logger.Warn("reply_filtered", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID, "reason", "ban_word")
		text, plan.filtered = cfg.Safety.FilteredReplyText, true
	}
	text = s.filter(cfg).Scrub(text) // a notice or the canned text itself: never a ban word out
	if !plan.notice && !plan.filtered && c != nil {
		text = linkMentions(text, append(slices.Clone(c.people), c.mentioned...)) // "@Alice" as <@ID>
	}
	parts := post.Split(text, post.MaxLen)
	persona := cfg.Bot.Persona
	if c != nil {
		persona = c.persona
	}
	if !plan.notice {
		// Kept on the open turn: after a crash the next process recognises this reply in the
		// channel by its text too (a channel message, or a reply to another message, carries no
		// reference to the trigger), and after a crash between two parts sends the rest of it
		// (finishReply), not a new one.
		if err := s.opts.Store.SetTurnReply(ctx, t.msg.ID, text); err != nil {
			s.logger.Warn("store_failed", "op", "set_turn_reply", "message_id", t.msg.ID, "error", err.Error())
		}
	}
	var ids []string
	reference := s.replyReference(t, plan)
	for i, part := range parts {
		kind := byte('r')
		if plan.notice {
			kind = 'n'
		}
		msg := post.Message{ChannelID: t.msg.ChannelID, GuildID: t.msg.GuildID, Content: part, TurnID: t.msg.ID,
			CoalescedTurnIDs: plan.coalesced, Nonce: turnNonce(t.msg.ID, kind, i)}
		if i == 0 && plan.replyTo != "" {
			msg.ReplyTo, msg.Addressee = reference, authorOf(t, c, plan.replyTo)
			msg.PingRepliedUser = cfg.Permissions.PingRepliedUser
		}
		sent, err := s.sender.Create(ctx, msg)
		if err == nil && msg.ReplyTo != "" && sent.MessageReference == nil {
			s.unreferenced(plan) // Discord refused the reference (160009): the Sender sent it plain
		}
		if err != nil && msg.ReplyTo != "" && s.targetGone(ctx, t.msg.ChannelID, msg.ReplyTo, err) {
			s.opts.Metrics.fallback("target_deleted")
			s.logger.Warn("reply_target_deleted", "target_message_id", msg.ReplyTo, "channel_id", t.msg.ChannelID)
			plan.mode, plan.fallback, plan.replyTo = "fallback_broadcast", "target_deleted", ""
			msg.ReplyTo, msg.PingRepliedUser, msg.Addressee = "", false, ""
			if withNote := targetDeletedNote + "\n" + part; utf8.RuneCountInString(withNote) <= post.MaxLen {
				msg.Content = withNote // downgraded to a broadcast, with an apology
			}
			sent, err = s.sender.Create(ctx, msg)
		}
		if err != nil {
			return ids, fmt.Errorf("text: send part %d/%d to %s: %w", i+1, len(parts), t.msg.ChannelID, err)
		}
		if sent.ChannelID == "" {
			sent.ChannelID = t.msg.ChannelID
		}
		ids = append(ids, sent.ID)
		answers := "" // what it answers, a reply or not (a plain message when unreferenced)
		if i == 0 {
			answers = plan.replyTo
		}
		s.saveSent(ctx, sent, persona, answers, &t.msg)
	}
	return ids, nil
}

// replyReference is the message the plan's reply may reference: plan.replyTo, or "" when the
// session's state says the bot may not reference messages in the channel (View Channel and
// Read Message History: perms.MayReference), so that no create is refused for it (160009);
// the reply then goes out plain, opened by its addressee's mention. When the state cannot
// tell, the reference is sent and the Sender falls back on Discord's 160009.
func (s *Service) replyReference(t *turn, plan *sendPlan) string {
	if plan.replyTo == "" {
		return ""
	}
	if may, known := s.mayReference(t.msg.ChannelID); !known || may {
		return plan.replyTo
	}
	s.logger.Info("reply_unreferenced", "reason", "no_read_history", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID,
		"target_message_id", plan.replyTo)
	s.unreferenced(plan)
	return ""
}

// unreferenced records that the plan's reply goes out as a plain message because the bot may
// not read the channel's history: a fallback_broadcast counted no_read_history.
func (s *Service) unreferenced(plan *sendPlan) {
	s.opts.Metrics.fallback("no_read_history")
	plan.mode, plan.fallback = "fallback_broadcast", "no_read_history"
}

// authorOf is the author of message id: the turn's own message, or one of the conversation
// shown (c may be nil); "" when unknown (the plain message then opens with no mention).
func authorOf(t *turn, c *convo, id string) string {
	if id == t.msg.ID {
		return t.msg.AuthorID
	}
	if c != nil {
		for _, m := range c.all() {
			if m.ID == id {
				return m.AuthorID
			}
		}
	}
	return ""
}

// saveSent stores a message the bot sent, written by persona, as a reply to replyTo ("" for
// none); trigger, when it is the message replied to, gives the stored reply its origin.
func (s *Service) saveSent(ctx context.Context, sent *discordgo.Message, persona, replyTo string, trigger *store.Message) {
	rec := storedFromDiscord(sent, s.channelInfo(ctx, sent.ChannelID), true)
	rec.Persona = persona
	if rec.ReplyToID == "" {
		rec.ReplyToID = replyTo
	}
	if trigger != nil && rec.ReplyToOrigin.AuthorID == "" && rec.ReplyToID == trigger.ID {
		rec.ReplyToOrigin = store.Origin{AuthorID: trigger.AuthorID, At: trigger.CreatedAt}
	}
	if _, err := s.saveMessage(ctx, rec, "reply"); err != nil {
		s.logger.Warn("store_failed", "op", "save_message", "message_id", sent.ID, "error", err.Error())
	}
}

// targetDeletedNote opens a reply whose target was deleted before it could be sent: it goes to
// the channel instead, with this apology.
const targetDeletedNote = "_(The message I was answering was deleted, sorry — here is my reply anyway.)_"

// targetGone reports whether a failed reply failed because its target no longer exists.
func (s *Service) targetGone(ctx context.Context, channelID, id string, sendErr error) bool {
	var re *discordgo.RESTError
	if !errors.As(sendErr, &re) || re.Response == nil {
		return false
	}
	if re.Response.StatusCode != http.StatusBadRequest && re.Response.StatusCode != http.StatusNotFound {
		return false
	}
	_, err := s.opts.Discord.ChannelMessage(channelID, id, discordgo.WithContext(ctx))
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusNotFound
}
