package text

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
)

// maxMessageLen is Discord's limit on a message's content, in characters.
const maxMessageLen = 2000

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

// send posts the plan's text: ban words scrubbed, mass mentions defused, split into messages
// of at most 2000 characters at sentence or line boundaries. The first part carries the reply
// reference; allowed_mentions never lets anything ping except, per config, the replied-to
// user. A reply whose target was deleted meanwhile is sent as a plain message. Sent messages are
// stored with the persona that wrote them. It returns the ids sent and updates plan when the
// reply had to fall back.
func (s *Service) send(ctx context.Context, cfg *config.Config, t *turn, c *convo, plan *sendPlan) ([]string, error) {
	text := defuseMentions(newWordList(cfg.Safety.BanWords).scrub(plan.text))
	parts := splitMessage(text, maxMessageLen)
	persona := cfg.Bot.Persona
	if c != nil {
		persona = c.persona
	}
	var ids []string
	for i, part := range parts {
		msg := &discordgo.MessageSend{
			Content:         part,
			AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}},
		}
		replyTo := ""
		if i == 0 && plan.replyTo != "" {
			replyTo = plan.replyTo
			fail := true
			msg.Reference = &discordgo.MessageReference{MessageID: replyTo, ChannelID: t.msg.ChannelID, GuildID: t.msg.GuildID, FailIfNotExists: &fail}
			msg.AllowedMentions.RepliedUser = cfg.Permissions.PingRepliedUser
		}
		sent, err := s.opts.Discord.ChannelMessageSendComplex(t.msg.ChannelID, msg, discordgo.WithContext(ctx))
		if err != nil && replyTo != "" && s.targetGone(ctx, t.msg.ChannelID, replyTo, err) {
			s.opts.Metrics.fallback("target_deleted")
			s.logger.Warn("reply_target_deleted", "target_message_id", replyTo, "channel_id", t.msg.ChannelID)
			plan.mode, plan.fallback, plan.replyTo, replyTo = "fallback_broadcast", "target_deleted", "", ""
			msg.Reference = nil
			msg.AllowedMentions.RepliedUser = false
			sent, err = s.opts.Discord.ChannelMessageSendComplex(t.msg.ChannelID, msg, discordgo.WithContext(ctx))
		}
		if err != nil {
			return ids, fmt.Errorf("text: send part %d/%d to %s: %w", i+1, len(parts), t.msg.ChannelID, err)
		}
		ids = append(ids, sent.ID)
		rec := storedFromDiscord(sent, s.channelInfo(ctx, t.msg.ChannelID), true)
		rec.Persona = persona
		if rec.ReplyToID == "" {
			rec.ReplyToID = replyTo
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

// splitMessage cuts text into parts of at most limit characters, preferring paragraph, line,
// sentence and word boundaries, in that order.
func splitMessage(text string, limit int) []string {
	text = strings.TrimSpace(text)
	limit = max(limit, 1) // a part holds at least one character, or the loop never ends
	var parts []string
	for {
		// Only the next limit runes are counted, not the whole rest: a long
		// reply with a small limit stays linear.
		cut := byteIndexOfRune(text, limit)
		if cut == len(text) {
			break
		}
		window := text[:cut]
		at := -1
		for _, sep := range []string{"\n\n", "\n"} {
			if i := strings.LastIndex(window, sep); i > cut/3 {
				at = i + len(sep)
				break
			}
		}
		if at < 0 {
			at = lastSentenceEnd(window, cut/3)
		}
		if at < 0 {
			if i := strings.LastIndexFunc(window, unicode.IsSpace); i > cut/3 {
				at = i + 1
			}
		}
		if at < 0 {
			at = cut
		}
		parts = append(parts, strings.TrimSpace(text[:at]))
		text = strings.TrimSpace(text[at:])
	}
	if text != "" || len(parts) == 0 {
		parts = append(parts, text)
	}
	return parts
}

// lastSentenceEnd finds the end of the last sentence in s that ends after byte min.
func lastSentenceEnd(s string, min int) int {
	for i := len(s) - 2; i > min; i-- {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && unicode.IsSpace(rune(s[i+1])) {
			return i + 1
		}
	}
	return -1
}

// byteIndexOfRune returns the byte offset of the n-th rune of s (len(s) if s is shorter).
func byteIndexOfRune(s string, n int) int {
	i := 0
	for pos := range s {
		if i == n {
			return pos
		}
		i++
	}
	return len(s)
}
