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
	"github.com/banterbot/banter/llm"
)

// sendPlan says where and how a reply goes.
type sendPlan struct {
	text     string
	replyTo  string // message to reply to; empty posts to the channel
	mode     string // trigger_reply, target_reply, broadcast, fallback_broadcast
	fallback string // why a reply became a broadcast, if it did
}

// plan routes a reply. Addressed turns (mention, DirectReply, name, alias, command) reply to the
// trigger. Unaddressed turns post to the channel, except that in initiative channels a share
// (activity.initiativeReplyShare) of the model's threaded candidates — valid reply targets
// among the messages it was shown — reply to that target. A target that was not shown, free
// text instead of a tool call, or invalid tool arguments fall back to a broadcast.
func (s *Service) plan(cfg *config.Config, c *convo, primary *turn, res *llm.Result, fallback string) sendPlan {
	if primary.addressed() {
		return sendPlan{replyTo: primary.msg.ID, mode: "trigger_reply"}
	}
	if fallback != "" {
		s.opts.Metrics.fallback(fallback)
		return sendPlan{mode: "fallback_broadcast", fallback: fallback}
	}
	if res.Send.Mode != llm.SendModeReply {
		return sendPlan{mode: "broadcast"}
	}
	target := res.Send.TargetMessageID
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
	text := newWordList(cfg.Safety.BanWords).scrub(plan.text)
	parts := post.Split(text, post.MaxLen)
	persona := cfg.Bot.Persona
	if c != nil {
		persona = c.persona
	}
	var ids []string
	for i, part := range parts {
		msg := post.Message{ChannelID: t.msg.ChannelID, GuildID: t.msg.GuildID, Content: part, TurnID: t.msg.ID}
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
