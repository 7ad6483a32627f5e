package discordsim

import (
	"encoding/json"
	"strconv"

	"github.com/banterbot/banter/sim/discord/world"
)

// observe turns one change of the world into the dispatches Discord sends
// for it, to every session that may see it. It runs with the world locked
// (the world's Observer), so dispatches leave in the order changes happen.
// https://discord.com/developers/docs/events/gateway-events#receive-events
func (g *gateway) observe(v *world.View, e world.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch e := e.(type) {
	case world.GuildCreated:
		for _, ss := range g.sessions {
			if ss.user == v.Bot() && ss.ownsGuild(e.Guild) {
				g.dispatchToLocked(ss, "GUILD_CREATE", wireGuildCreateOf(v, e.Guild, ss), IntentGuilds)
			}
		}
	case world.MemberAdded:
		g.memberAddedLocked(v, e)
	case world.MemberRemoved:
		g.memberRemovedLocked(v, e)
	case world.GuildAvailability:
		for _, ss := range g.sessions {
			switch {
			case !ss.inGuild(v, e.Guild):
			case e.Available:
				g.dispatchToLocked(ss, "GUILD_CREATE", wireGuildCreateOf(v, e.Guild, ss), IntentGuilds)
			default:
				g.dispatchToLocked(ss, "GUILD_DELETE", wireUnavailableGuild{ID: e.Guild, Unavailable: true}, IntentGuilds)
			}
		}
	case world.GuildUpdated:
		if gd, ok := v.Guild(e.Guild); ok {
			g.guildEventLocked(v, e.Guild, "GUILD_UPDATE", wireGuildOf(v, gd))
		}
	case world.ChannelCreated:
		g.channelCreatedLocked(v, e.Channel)
	case world.ChannelUpdated:
		g.guildEventLocked(v, e.Channel.Guild, "CHANNEL_UPDATE", wireChannelOf(e.Channel))
	case world.RoleCreated:
		g.guildEventLocked(v, e.Guild, "GUILD_ROLE_CREATE", wireRoleEvent{e.Guild, wireRoleOf(e.Guild, e.Role)})
	case world.RoleUpdated:
		g.guildEventLocked(v, e.Guild, "GUILD_ROLE_UPDATE", wireRoleEvent{e.Guild, wireRoleOf(e.Guild, e.Role)})
	case world.RoleDeleted:
		g.guildEventLocked(v, e.Guild, "GUILD_ROLE_DELETE", wireRoleDeleteEvent{e.Guild, e.Role})
	case world.MemberUpdated:
		g.memberUpdatedLocked(v, e)
	case world.MessageCreated:
		g.messageLocked(v, "MESSAGE_CREATE", e.Message)
	case world.MessageUpdated:
		g.messageLocked(v, "MESSAGE_UPDATE", e.Message)
	case world.MessageDeleted:
		g.messageDeletedLocked(v, e.Message)
	case world.TypingStarted:
		g.typingLocked(v, e)
	case world.ReactionAdded, world.ReactionRemoved, world.ReactionsCleared:
		g.reactionLocked(v, e)
	case world.VoiceStateChanged:
		g.voiceStateLocked(v, e)
	case world.InteractionCreated:
		g.interactionLocked(v, e.Interaction)
	}
}

// guildEventLocked sends a GUILDS-intent event of guild gid to every session that sees it.
func (g *gateway) guildEventLocked(v *world.View, gid GuildID, t string, d any) {
	for _, ss := range g.sessions {
		if ss.sees(v, gid) {
			g.dispatchToLocked(ss, t, d, IntentGuilds)
		}
	}
}

// memberUpdatedLocked sends GUILD_MEMBER_UPDATE to the member's own sessions whatever their
// intents and to the other members' with GUILD_MEMBERS, as Discord does.
// https://discord.com/developers/docs/events/gateway#gateway-intents
func (g *gateway) memberUpdatedLocked(v *world.View, e world.MemberUpdated) {
	gd, ok := v.Guild(e.Guild)
	if !ok || !v.IsMember(e.Guild, e.User) {
		return
	}
	ev := wireGuildMember{wireMemberOf(v, gd, e.User, true), e.Guild}
	for _, ss := range g.sessions {
		if !ss.sees(v, e.Guild) {
			continue
		}
		intent := IntentGuildMembers
		if ss.user == e.User {
			intent = 0
		}
		g.dispatchToLocked(ss, "GUILD_MEMBER_UPDATE", ev, intent)
	}
}

func (g *gateway) memberAddedLocked(v *world.View, e world.MemberAdded) {
	gd, _ := v.Guild(e.Guild)
	ev := wireGuildMember{wireMemberOf(v, gd, e.User, true), e.Guild}
	for _, ss := range g.sessions {
		if !ss.ownsGuild(e.Guild) {
			continue
		}
		if ss.user == e.User {
			if v.GuildAvailable(e.Guild) {
				g.dispatchToLocked(ss, "GUILD_CREATE", wireGuildCreateOf(v, e.Guild, ss), IntentGuilds)
			}
		} else if ss.sees(v, e.Guild) {
			g.dispatchToLocked(ss, "GUILD_MEMBER_ADD", ev, IntentGuildMembers)
		}
	}
}

// memberRemovedLocked sends GUILD_DELETE (not unavailable: the user is no longer a member) to
// the removed user's sessions and GUILD_MEMBER_REMOVE to the other members'.
func (g *gateway) memberRemovedLocked(v *world.View, e world.MemberRemoved) {
	ev := struct {
		GuildID GuildID  `json:"guild_id"`
		User    wireUser `json:"user"`
	}{e.Guild, wireUserOf(v, e.User)}
	for _, ss := range g.sessions {
		if !ss.ownsGuild(e.Guild) {
			continue
		}
		if ss.user == e.User {
			g.dispatchToLocked(ss, "GUILD_DELETE", wireUnavailableGuild{ID: e.Guild}, IntentGuilds)
		} else if ss.sees(v, e.Guild) {
			g.dispatchToLocked(ss, "GUILD_MEMBER_REMOVE", ev, IntentGuildMembers)
		}
	}
}

func (g *gateway) channelCreatedLocked(v *world.View, c world.Channel) {
	wc := wireChannelOf(c)
	var ev any = wc
	t := "CHANNEL_CREATE"
	if c.Type.IsThread() {
		t = "THREAD_CREATE"
		ev = struct {
			wireChannel
			NewlyCreated bool `json:"newly_created"`
		}{wc, true}
	}
	for _, ss := range g.sessions {
		if ss.sees(v, c.Guild) {
			g.dispatchToLocked(ss, t, ev, IntentGuilds)
		}
	}
}

func intentForChannel(c world.Channel) Intents {
	if c.Type == ChannelDM {
		return IntentDirectMessages
	}
	return IntentGuildMessages
}

// messageLocked sends MESSAGE_CREATE or MESSAGE_UPDATE to every session
// whose user can see the channel, blanking content, embeds, attachments and
// components for sessions without MESSAGE_CONTENT unless the message is
// theirs or mentions them. Ephemeral messages reach no session.
// https://discord.com/developers/docs/events/gateway#message-content-intent
func (g *gateway) messageLocked(v *world.View, t string, m world.Message) {
	if m.Ephemeral() {
		return
	}
	full := wireMessageOf(v, m, g.cdn, 0)
	c, _ := v.Channel(m.ChannelID)
	intent := intentForChannel(c)
	for _, ss := range g.sessions {
		if !ss.sees(v, m.GuildID) || v.ChannelPermissions(m.ChannelID, ss.user)&world.PermViewChannel == 0 {
			continue
		}
		w := full
		if ss.intents&IntentMessageContent == 0 && m.Author != ss.user && !m.MentionsUser(ss.user) {
			w.Content = ""
			w.Embeds, w.Attachments, w.Components = []json.RawMessage{}, []json.RawMessage{}, []json.RawMessage{}
		}
		g.dispatchToLocked(ss, t, w, intent)
	}
}

func (g *gateway) messageDeletedLocked(v *world.View, m world.Message) {
	if m.Ephemeral() {
		return
	}
	ev := struct {
		ID        MessageID `json:"id"`
		ChannelID ChannelID `json:"channel_id"`
		GuildID   GuildID   `json:"guild_id,omitempty"`
	}{m.ID, m.ChannelID, m.GuildID}
	c, _ := v.Channel(m.ChannelID)
	intent := intentForChannel(c)
	for _, ss := range g.sessions {
		if ss.sees(v, m.GuildID) {
			g.dispatchToLocked(ss, "MESSAGE_DELETE", ev, intent)
		}
	}
}

func (g *gateway) typingLocked(v *world.View, e world.TypingStarted) {
	t := e.Typing
	ev := struct {
		ChannelID ChannelID   `json:"channel_id"`
		GuildID   GuildID     `json:"guild_id,omitempty"`
		UserID    UserID      `json:"user_id"`
		Timestamp int64       `json:"timestamp"`
		Member    *wireMember `json:"member,omitempty"`
	}{ChannelID: t.Channel, GuildID: e.Guild, UserID: t.User, Timestamp: t.At.Unix()}
	if gd, ok := v.Guild(e.Guild); ok {
		m := wireMemberOf(v, gd, t.User, true)
		ev.Member = &m
	}
	for _, ss := range g.sessions {
		if ss.user != t.User && ss.sees(v, e.Guild) {
			g.dispatchToLocked(ss, "TYPING_START", ev, IntentGuildMessageTyping)
		}
	}
}

// reactionLocked sends MESSAGE_REACTION_ADD, _REMOVE, _REMOVE_ALL or
// _REMOVE_EMOJI to the sessions with GUILD_MESSAGE_REACTIONS that see the
// channel.
// https://discord.com/developers/docs/events/gateway-events#message-reaction-add
func (g *gateway) reactionLocked(v *world.View, e world.Event) {
	var t string
	var m world.Message
	var d any
	switch e := e.(type) {
	case world.ReactionAdded:
		m, t = e.Message, "MESSAGE_REACTION_ADD"
		ev := wireReactionEvent{UserID: e.User, ChannelID: m.ChannelID, MessageID: m.ID, GuildID: m.GuildID,
			Emoji: wireEmojiOf(e.Emoji), MessageAuthorID: m.Author, BurstColors: []string{}}
		if gd, ok := v.Guild(m.GuildID); ok {
			mm := wireMemberOf(v, gd, e.User, true)
			ev.Member = &mm
		}
		d = ev
	case world.ReactionRemoved:
		m, t = e.Message, "MESSAGE_REACTION_REMOVE"
		d = wireReactionEvent{UserID: e.User, ChannelID: m.ChannelID, MessageID: m.ID, GuildID: m.GuildID,
			Emoji: wireEmojiOf(e.Emoji)}
	case world.ReactionsCleared:
		m, t = e.Message, "MESSAGE_REACTION_REMOVE_ALL"
		ev := wireReactionEvent{ChannelID: m.ChannelID, MessageID: m.ID, GuildID: m.GuildID}
		if e.Emoji != nil {
			t = "MESSAGE_REACTION_REMOVE_EMOJI"
			we := wireEmojiOf(*e.Emoji)
			ev.Emoji = we
		}
		d = ev
	}
	for _, ss := range g.sessions {
		if ss.sees(v, m.GuildID) {
			g.dispatchToLocked(ss, t, d, IntentGuildMessageReactions)
		}
	}
}

// voiceStateLocked sends VOICE_STATE_UPDATE to the session the state
// belongs to (whatever its intents) and to every other member session with
// GUILD_VOICE_STATES; during an outage of the guild to none, the state's own
// session included (the GUILD_CREATE that ends it carries the voice states).
func (g *gateway) voiceStateLocked(v *world.View, e world.VoiceStateChanged) {
	gd, ok := v.Guild(e.Guild)
	if !ok {
		return
	}
	w := wireVoiceStateOf(v, gd, e.User, e.State, true)
	self := g.sessions[e.Session]
	if self != nil && self.sees(v, e.Guild) {
		g.dispatchToLocked(self, "VOICE_STATE_UPDATE", w, 0)
	}
	for _, ss := range g.sessions {
		if ss != self && ss.sees(v, e.Guild) {
			g.dispatchToLocked(ss, "VOICE_STATE_UPDATE", w, IntentGuildVoiceStates)
		}
	}
}

// interactionLocked sends INTERACTION_CREATE to the application's sessions
// (§4 I), with what discord.js needs: entitlements, channel, member.user,
// app_permissions; never during an outage of the guild (InvokeCommand refuses
// one then).
func (g *gateway) interactionLocked(v *world.View, it world.Interaction) {
	gd, _ := v.Guild(it.Guild)
	c, _ := v.Channel(it.Channel)
	mem := wireMemberOf(v, gd, it.User, true)
	mem.Permissions = strconv.FormatUint(v.MemberPermissions(gd.ID, it.User), 10)
	ev := map[string]any{
		"id": it.ID, "application_id": v.Bot(), "type": 2, "token": it.Token, "version": 1,
		"guild_id": it.Guild, "channel_id": it.Channel, "channel": wireChannelOf(c), "member": mem,
		"app_permissions": world.EveryonePermissions, "locale": "en-US", "guild_locale": "en-US",
		"entitlements": []any{}, "authorizing_integration_owners": map[string]any{"0": it.Guild}, "context": 0,
		"data": map[string]any{"id": it.CommandID, "name": it.Command, "type": 1, "options": it.Options, "guild_id": it.CommandGuild},
	}
	for _, ss := range g.sessions {
		if ss.user == v.Bot() && ss.sees(v, it.Guild) {
			g.dispatchToLocked(ss, "INTERACTION_CREATE", ev, 0)
		}
	}
}
