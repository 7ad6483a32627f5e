package discordsim

import (
	"encoding/json"
	"time"

	"github.com/banterbot/banter/sim/discord/world"
)

// Rendering of the world into Discord's wire shapes (wire.go), for REST
// answers and gateway dispatches alike. Every function reads through a
// View, so it runs inside world.Read or an observer.

func fmtTime(t time.Time) string { return t.UTC().Format(wireTime) }

func strp(s string) *string { return &s }

func wireUserOf(v *world.View, id UserID) wireUser {
	u, ok := v.User(id)
	if !ok {
		return wireUser{ID: id, Username: "deleted-user", Discriminator: "0"}
	}
	w := wireUser{ID: u.ID, Username: u.Name, Discriminator: "0", Bot: u.Bot}
	if u.GlobalName != "" {
		w.GlobalName = strp(u.GlobalName)
	}
	return w
}

func wireSelfUserOf(v *world.View, id UserID) wireSelfUser {
	return wireSelfUser{wireUser: wireUserOf(v, id), Verified: true}
}

// wireMemberOf renders a guild member; withUser adds the nested user,
// which Discord omits inside MESSAGE_CREATE's member.
func wireMemberOf(v *world.View, g world.Guild, u UserID, withUser bool) wireMember {
	w := wireMember{Roles: []RoleID{}, JoinedAt: fmtTime(g.CreatedAt)}
	if m, ok := v.Member(g.ID, u); ok {
		w.Roles = append(w.Roles, m.Roles...)
		w.JoinedAt = fmtTime(m.JoinedAt)
		if m.Nick != "" {
			w.Nick = strp(m.Nick)
		}
		w.Mute, w.Deaf = m.Mute, m.Deaf
	}
	if withUser {
		wu := wireUserOf(v, u)
		w.User = &wu
	}
	return w
}

func wireChannelOf(c world.Channel) wireChannel {
	w := wireChannel{
		ID: c.ID, Type: c.Type, GuildID: c.Guild, Name: c.Name, Position: c.Position,
		PermissionOverwrites: []wireOverwrite{},
	}
	for _, o := range c.Overwrites {
		w.PermissionOverwrites = append(w.PermissionOverwrites, wireOverwrite{ID: o.ID, Type: o.Type, Allow: o.Allow, Deny: o.Deny})
	}
	if c.Parent != "" {
		p := c.Parent
		w.ParentID = &p
	}
	if c.LastMessage != "" {
		id := c.LastMessage
		w.LastMessageID = &id
	}
	switch {
	case c.Type == ChannelVoice:
		w.Bitrate = 64000
		w.UserLimit = new(int)
	case c.Type.IsThread():
		w.OwnerID = c.Owner
		n := c.MessageCount
		w.MessageCount = &n
		one := 1
		w.MemberCount = &one
		w.ThreadMetadata = &wireThreadMetadata{
			AutoArchiveDuration: 1440,
			ArchiveTimestamp:    fmtTime(c.CreatedAt),
			CreateTimestamp:     fmtTime(c.CreatedAt),
		}
		w.PermissionOverwrites = nil
	}
	return w
}

func wireRolesOf(g world.Guild) []wireRole {
	out := make([]wireRole, 0, len(g.Roles))
	for _, r := range g.Roles {
		out = append(out, wireRoleOf(g.ID, r))
	}
	return out
}

// wireRoleOf renders a role of guild g: every role but @everyone (whose id is g's) is
// mentionable; a bot's managed role carries tags.bot_id.
func wireRoleOf(g GuildID, r world.Role) wireRole {
	w := wireRole{
		ID: r.ID, Name: r.Name, Position: r.Position, Permissions: r.Permissions,
		Mentionable: r.ID != RoleID(g), Managed: r.Managed,
	}
	if r.BotID != "" {
		w.Tags = &wireRoleTags{BotID: r.BotID}
	}
	return w
}

// wireGuildOf is the REST guild object.
func wireGuildOf(v *world.View, g world.Guild) wireGuild {
	var system *ChannelID
	for _, id := range g.Channels {
		if c, _ := v.Channel(id); c.Type == ChannelText {
			system = &id
			break
		}
	}
	w := wireGuild{
		ID: g.ID, Name: g.Name, OwnerID: g.Owner, MemberCount: len(g.Members),
		JoinedAt: fmtTime(g.CreatedAt), Features: []string{}, AFKTimeout: g.AFKTimeout,
		SystemChannelID: system, PreferredLocale: "en-US", Roles: wireRolesOf(g),
		Emojis: []json.RawMessage{}, Stickers: []json.RawMessage{},
	}
	if g.AFKChannel != "" {
		w.AFKChannelID = &g.AFKChannel
	}
	return w
}

// wireGuildCreateOf is the GUILD_CREATE payload for session ss: the guild plus
// channels, members, voice states and threads (discord-clients.md §4 E). As on
// Discord, members lists every member only for a session with the presences
// intent; without it, only the session's own user and the members in voice
// channels ("If your bot does not have the GUILD_PRESENCES Gateway Intent …,
// members and presences returned in this event will only contain your bot and
// users in voice channels"): other members come from REST, GUILD_MEMBER_* events
// or messages.
func wireGuildCreateOf(v *world.View, id GuildID, ss *session) wireGuildCreate {
	g, _ := v.Guild(id)
	w := wireGuildCreate{wireGuild: wireGuildOf(v, g)}
	empty := []json.RawMessage{}
	w.Presences, w.StageInstances, w.GuildScheduledEvents, w.SoundboardSounds = empty, empty, empty, empty
	w.Channels, w.Threads = []wireChannel{}, []wireChannel{}
	for _, c := range v.Channels(id) {
		wc := wireChannelOf(c)
		if c.Type.IsThread() {
			w.Threads = append(w.Threads, wc)
		} else {
			wc.GuildID = "" // Discord omits guild_id inside GUILD_CREATE channels
			w.Channels = append(w.Channels, wc)
		}
	}
	w.Members = make([]wireMember, 0, len(g.Members))
	w.VoiceStates = []wireVoiceState{}
	all := ss.intents&IntentGuildPresences != 0
	for _, u := range g.Members {
		if _, inVoice := v.VoiceState(id, u); all || inVoice || u == ss.user {
			w.Members = append(w.Members, wireMemberOf(v, g, u, true))
		}
	}
	for _, u := range g.Members {
		if vs, ok := v.VoiceState(id, u); ok {
			w.VoiceStates = append(w.VoiceStates, wireVoiceStateOf(v, g, u, &vs, false))
		}
	}
	return w
}

// wireVoiceStateOf renders a voice state. vs nil means "left" (channel
// null). full adds guild_id and member, as in VOICE_STATE_UPDATE.
func wireVoiceStateOf(v *world.View, g world.Guild, u UserID, vs *world.VoiceState, full bool) wireVoiceState {
	w := wireVoiceState{UserID: u}
	if vs != nil {
		c := vs.Channel
		w.ChannelID = &c
		w.SessionID = vs.SessionID
		w.SelfDeaf = vs.SelfDeaf
		w.SelfMute = vs.SelfMute
		w.Mute, w.Deaf = vs.Mute, vs.Deaf
	} else if m, ok := v.Member(g.ID, u); ok { // a leave: the member's own, which stay
		w.Mute, w.Deaf = m.Mute, m.Deaf
	}
	if full {
		w.GuildID = g.ID
		// A user removed from the guild (and so from voice) is no member: no member object,
		// which discord.js would otherwise put back in its cache.
		if v.IsMember(g.ID, u) {
			m := wireMemberOf(v, g, u, true)
			w.Member = &m
		}
	}
	return w
}

func wireEmojiOf(e world.Emoji) *wireEmoji {
	w := &wireEmoji{Name: e.Name, Animated: e.Animated}
	if e.ID != "" {
		id := e.ID
		w.ID = &id
	}
	return w
}

// wireReactionsOf renders a message's reactions as seen by viewer ("me").
func wireReactionsOf(rs []world.Reaction, viewer UserID) []wireReaction {
	if len(rs) == 0 {
		return nil
	}
	out := make([]wireReaction, 0, len(rs))
	for _, r := range rs {
		me := false
		for _, u := range r.Users {
			me = me || u == viewer
		}
		out = append(out, wireReaction{
			Count: len(r.Users), CountDetails: wireCountDetails{Normal: len(r.Users)},
			Me: me, Emoji: *wireEmojiOf(r.Emoji), BurstColors: []string{},
		})
	}
	return out
}

// wireMessageOf renders a message; its attachments get freshly signed CDN
// URLs. depth limits referenced_message nesting to one level, as Discord.
func wireMessageOf(v *world.View, m world.Message, c *cdn, depth int) wireMessage {
	w := wireMessage{
		ID: m.ID, Type: int(m.Type), ChannelID: m.ChannelID, GuildID: m.GuildID,
		Author: wireUserOf(v, m.Author), Content: m.Content, Timestamp: fmtTime(m.Timestamp),
		TTS: m.TTS, MentionEveryone: m.MentionEveryone, Mentions: []wireUser{},
		MentionRoles: []RoleID{}, Attachments: []json.RawMessage{}, Embeds: []json.RawMessage{},
		Components: []json.RawMessage{}, Flags: m.Flags, Nonce: m.Nonce, WebhookID: m.WebhookID,
		Reactions: wireReactionsOf(m.Reactions, v.Bot()),
	}
	if !m.EditedTimestamp.IsZero() {
		w.EditedTimestamp = strp(fmtTime(m.EditedTimestamp))
	}
	w.MentionRoles = append(w.MentionRoles, m.MentionRoles...)
	w.Embeds = append(w.Embeds, m.Embeds...)
	for _, a := range m.Attachments {
		b, _ := json.Marshal(wireAttachmentOf(m.ChannelID, a, c))
		w.Attachments = append(w.Attachments, b)
	}
	w.Components = append(w.Components, m.Components...)
	g, inGuild := v.Guild(m.GuildID)
	if inGuild && v.IsMember(m.GuildID, m.Author) && m.WebhookID == "" {
		mm := wireMemberOf(v, g, m.Author, false)
		w.Member = &mm
	}
	for _, u := range m.Mentions {
		wu := wireUserOf(v, u)
		if inGuild && v.IsMember(m.GuildID, u) {
			mm := wireMemberOf(v, g, u, false)
			wu.Member = &mm
		}
		w.Mentions = append(w.Mentions, wu)
	}
	if im := m.InteractionMeta; im != nil {
		w.Interaction = &wireInteractionMetadata{ID: im.ID, Type: 2, Name: im.Name, User: wireUserOf(v, im.User)}
		w.ApplicationID = v.Bot()
	}
	if ref := m.Reference; ref != nil {
		t := 0
		w.MessageReference = &wireMessageReference{Type: &t, MessageID: ref.MessageID, ChannelID: ref.ChannelID, GuildID: ref.GuildID}
		if depth == 0 {
			if rm, ok := v.Message(ref.MessageID); ok {
				r := wireMessageOf(v, rm, c, depth+1)
				r.Member = nil
				w.ReferencedMessage = &r
			}
		}
	}
	return w
}

// wireAttachmentOf renders an attachment with CDN URLs signed now.
// https://discord.com/developers/docs/resources/message#attachment-object
func wireAttachmentOf(ch ChannelID, a world.Attachment, c *cdn) wireAttachment {
	w := wireAttachment{ID: a.ID, Filename: a.Filename, Description: a.Description, ContentType: a.ContentType, Size: a.Size}
	if c != nil {
		w.URL, w.ProxyURL = c.urls(ch, a)
	}
	if a.Width > 0 && a.Height > 0 {
		width, height := a.Width, a.Height
		w.Width, w.Height = &width, &height
	}
	return w
}
