package text

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
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
}

// dispatch routes and sends the attempt's text, and logs the result.
func (s *Service) dispatch(ctx context.Context, a *attempt) {
	p := a.primary
	plan := sendPlan{replyTo: p.msg.ID, mode: "trigger_reply"}
	if !a.placeholder {
		plan = s.plan(a.cfg, &a.c, p, a.ans.send, a.fallback)
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
		s.opts.Metrics.reply("failed")
		s.logger.Error("send_failed", append(a.attrs, "error", err.Error())...)
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
		"fallback", plan.fallback, "placeholder", a.placeholder, "persona", a.c.persona, "context", a.c.kind.String(),
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
		s.logger.Error("send_failed", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID, "error", err.Error())
	}
	return err
}

// plan routes a reply. Addressed turns (mention, DirectReply, name, alias, command) reply to the
// trigger, or with text.targetedReplies to the message the model chose among the burst's
// messages and the anchor (planAddressed). Unaddressed turns post to the channel, except that
// in initiative channels a share (activity.initiativeReplyShare) of the model's threaded
// candidates — valid reply targets among the messages it was shown — reply to that target. A
// target that was not shown, free text instead of a tool call, or invalid tool arguments fall
// back to a broadcast.
func (s *Service) plan(cfg *config.Config, c *convo, primary *turn, send sendArgs, fallback string) sendPlan {
	if primary.addressed() {
		return s.planAddressed(cfg, c, primary, send, fallback)
	}
	if fallback != "" {
		s.opts.Metrics.fallback(fallback)
		return sendPlan{mode: "fallback_broadcast", fallback: fallback}
	}
	if send.Mode != sendModeReply {
		return sendPlan{mode: "broadcast"}
	}
	target := send.TargetMessageID
	if !c.shown[target] {
		s.opts.Metrics.fallback("unknown_target")
		s.logger.Warn("reply_target_rejected", "target_message_id", target, "channel_id", primary.msg.ChannelID, "reason", "not_shown")
		return sendPlan{mode: "fallback_broadcast", fallback: "unknown_target"}
	}
	if slices.Contains(cfg.Permissions.InitiativeChannelIDs, primary.msg.ChannelID) &&
		shareOf(target) < cfg.Activity.InitiativeReplyShare {
		return sendPlan{replyTo: target, mode: "target_reply"}
	}
	return sendPlan{mode: "broadcast"}
}

// planAddressed routes the reply to an addressed turn: to the trigger, unless targeted replies
// are on and the model chose (send_discord_message mode reply) another message it may answer:
// one of the coalesced burst's messages, or the anchor (the message the trigger replies to).
// Any other target is refused and the reply goes to the trigger. The check is logged
// (reply_target_checked).
func (s *Service) planAddressed(cfg *config.Config, c *convo, primary *turn, send sendArgs, fallback string) sendPlan {
	p := sendPlan{replyTo: primary.msg.ID, mode: "trigger_reply"}
	if fallback != "" || send.Mode != sendModeReply {
		return p
	}
	target := send.TargetMessageID
	if target == "" || target == primary.msg.ID {
		return p
	}
	accepted, why := false, "not_in_burst"
	switch {
	case !cfg.Text.TargetedReplies:
		why = "targeted_replies_off"
	case slices.ContainsFunc(c.triggers, func(m store.Message) bool { return m.ID == target }):
		accepted, why = true, "burst_message"
		p.replyTo = target
	case c.anchor != nil && c.anchor.ID == target:
		accepted, why = true, "anchor"
		p.replyTo, p.mode = target, "target_reply"
	}
	s.logger.Info("reply_target_checked", "message_id", primary.msg.ID, "channel_id", primary.msg.ChannelID,
		"target_message_id", target, "accepted", accepted, "reason", why, "trigger_ids", storedIDs(c.triggers))
	return p
}

func storedIDs(ms []store.Message) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// shareOf maps an id to a stable number in [0, 1): the same candidate always gets the same
// routing, and over many candidates the reply share is as configured.
func shareOf(id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()>>11) / float64(1<<53)
}

// send posts the plan's text through the Sender (post): ban words scrubbed, mass mentions
// defused, split into messages of at most 2000 characters at sentence or line boundaries,
// server errors retried with the same nonce. The first part carries the reply reference;
// allowed_mentions never lets anything ping except, per config, the replied-to user. A reply
// whose target was deleted meanwhile is sent as a plain message. Sent messages are stored with
// the persona that wrote them. It returns the ids sent and updates plan when the reply had to
// fall back.
func (s *Service) send(ctx context.Context, cfg *config.Config, t *turn, c *convo, plan *sendPlan) ([]string, error) {
	text := s.filter(cfg).Scrub(plan.text)
	parts := post.Split(text, post.MaxLen)
	persona := cfg.Bot.Persona
	if c != nil {
		persona = c.persona
	}
	var ids []string
	for i, part := range parts {
		kind := byte('r')
		if plan.notice {
			kind = 'n'
		}
		msg := post.Message{ChannelID: t.msg.ChannelID, GuildID: t.msg.GuildID, Content: part, TurnID: t.msg.ID,
			CoalescedTurnIDs: plan.coalesced, Nonce: turnNonce(t.msg.ID, kind, i)}
		if i == 0 && plan.replyTo != "" {
			msg.ReplyTo = plan.replyTo
			msg.PingRepliedUser = cfg.Permissions.PingRepliedUser
		}
		sent, err := s.sender.Create(ctx, msg)
		if err != nil && msg.ReplyTo != "" && s.targetGone(ctx, t.msg.ChannelID, msg.ReplyTo, err) {
			s.opts.Metrics.fallback("target_deleted")
			s.logger.Warn("reply_target_deleted", "target_message_id", msg.ReplyTo, "channel_id", t.msg.ChannelID)
			plan.mode, plan.fallback, plan.replyTo = "fallback_broadcast", "target_deleted", ""
			msg.ReplyTo, msg.PingRepliedUser = "", false
			sent, err = s.sender.Create(ctx, msg)
		}
		if err != nil {
			return ids, fmt.Errorf("text: send part %d/%d to %s: %w", i+1, len(parts), t.msg.ChannelID, err)
		}
		ids = append(ids, sent.ID)
		if sent.ChannelID == "" {
			sent.ChannelID = t.msg.ChannelID
		}
		rec := storedFromDiscord(sent, s.channelInfo(ctx, t.msg.ChannelID), true)
		rec.Persona = persona
		if rec.ReplyToID == "" {
			rec.ReplyToID = msg.ReplyTo
		}
		if err := s.opts.Store.SaveMessage(ctx, rec); err != nil {
			s.logger.Warn("store_failed", "op", "save_message", "message_id", sent.ID, "error", err.Error())
		}
	}
	return ids, nil
}

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
