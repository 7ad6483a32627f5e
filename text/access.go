package text

import (
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord/perms"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/store"
)

// Channel permissions. What the bot may do in a channel is computed from the gateway session's
// state (the guild's roles, the channel's overwrites, the bot's own member: discord/perms), so
// that a channel it may not post in costs no model call and one it may not read no REST
// request. When the state cannot tell (no session attached, a guild not yet available after
// READY), Discord's answer decides: a 403 on a send is final (post.Refusal), never retried.

// sendRefusal says why the bot may not post in a channel according to the session's state
// ("missing_access", "missing_permissions"), "" when it may or the state cannot tell.
func (s *Service) sendRefusal(channelID string) string {
	return perms.SendRefusal(s.state.Load(), s.selfID(), channelID)
}

// readable reports whether the bot may read a channel's history according to the session's
// state; known is false when the state cannot tell.
func (s *Service) readable(channelID string) (readable, known bool) {
	return perms.Readable(s.state.Load(), s.selfID(), channelID)
}

// mayReference reports whether the bot may reference (reply to) messages in a channel
// according to the session's state; known is false when the state cannot tell.
func (s *Service) mayReference(channelID string) (may, known bool) {
	return perms.MayReference(s.state.Load(), s.selfID(), channelID)
}

// cannotAnswer drops a new turn in a channel where the bot may not post: no classifier or reply
// model is asked. A turn that addresses the bot, or may (its durable turn is open), is logged
// reply_skipped with the reason, counted (banter_text_replies_total{outcome="no_permission"})
// and its durable turn closed as explained.
func (s *Service) cannotAnswer(t *turn, opened bool, reason string) {
	if !opened {
		s.logger.Debug("message_ignored", "reason", "cannot_send", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID)
		return
	}
	s.opts.Metrics.reply("no_permission")
	s.logger.Warn("reply_skipped", "reason", reason, "message_id", t.msg.ID, "channel_id", t.msg.ChannelID,
		"user_id", t.msg.AuthorID)
	s.closeTurnIDs([]string{t.msg.ID}, store.TurnExplained)
}

// logSendFailed logs a send that failed, once: reply_failed with the reason when Discord refused
// it for the bot's permissions in the channel (final), else send_failed. It returns the reply
// outcome to count: forbidden or failed.
func (s *Service) logSendFailed(err error, attrs []any) string {
	if why := post.Refusal(err); why != "" {
		s.logger.Warn("reply_failed", append(attrs, "reason", why, "error", err.Error())...)
		return "forbidden"
	}
	s.logger.Error("send_failed", append(attrs, "error", err.Error())...)
	return "failed"
}

// ownRoles returns the ids of the bot's own roles in a guild according to the session's state:
// the managed roles it holds. Discord makes one for a bot invited with permissions, named after
// it (its tags.bot_id, which discordgo does not read, names the bot); a bot holds no other
// managed role (those of boosts and subscriptions go to people).
func (s *Service) ownRoles(guildID string) []string {
	st, selfID := s.state.Load(), s.selfID()
	if st == nil || guildID == "" || selfID == "" {
		return nil
	}
	member, err := st.Member(guildID, selfID)
	if err != nil {
		return nil
	}
	g, err := st.Guild(guildID)
	if err != nil {
		return nil
	}
	st.RLock()
	defer st.RUnlock()
	var own []string
	for _, r := range g.Roles {
		if r != nil && r.Managed && slices.Contains(member.Roles, r.ID) {
			own = append(own, r.ID)
		}
	}
	return own
}

// mentionsOwnRole reports whether m mentions one of the bot's own roles in its text (Discord
// lists it in mention_roles and writes <@&ID>): a member typing "@banter" in Discord's client
// may pick the bot's role instead of the bot, and means the bot either way.
func (s *Service) mentionsOwnRole(m *discordgo.Message) bool {
	if len(m.MentionRoles) == 0 {
		return false
	}
	for _, id := range s.ownRoles(m.GuildID) {
		if slices.Contains(m.MentionRoles, id) && strings.Contains(m.Content, "<@&"+id+">") {
			return true
		}
	}
	return false
}

// botNickname returns the bot's nickname in a guild according to the session's state ("" none
// or unknown): GUILD_CREATE lists the bot's member, and Discord sends the bot its own
// GUILD_MEMBER_UPDATE when it is renamed, so the state follows renames as they happen.
func (s *Service) botNickname(guildID string) string {
	st, selfID := s.state.Load(), s.selfID()
	if st == nil || guildID == "" || selfID == "" {
		return ""
	}
	member, err := st.Member(guildID, selfID)
	if err != nil {
		return ""
	}
	st.RLock() // the state updates a member in place
	defer st.RUnlock()
	return member.Nick
}
