package discordsim

import (
	"encoding/json"
	"time"
)

// Rendering of the model into wire shapes. Every function needs s.mu held.

func fmtTime(t time.Time) string { return t.UTC().Format(wireTime) }

func strp(s string) *string { return &s }

func (s *worldState) wireUserLocked(id UserID) wireUser {
	u := s.users[id]
	if u == nil {
		return wireUser{ID: id, Username: "deleted-user", Discriminator: "0"}
	}
	w := wireUser{ID: u.id, Username: u.name, Discriminator: "0", Bot: u.bot}
	if u.globalName != "" {
		w.GlobalName = strp(u.globalName)
	}
	return w
}

func (s *Server) wireSelfUserLocked(id UserID) wireSelfUser {
	return wireSelfUser{wireUser: s.wireUserLocked(id), Verified: true}
}

// wireMemberLocked renders a guild member; withUser adds the nested user,
// which Discord omits inside MESSAGE_CREATE's member.
func (s *Server) wireMemberLocked(g *guild, u UserID, withUser bool) wireMember {
	m := g.members[u]
	w := wireMember{Roles: []RoleID{}, JoinedAt: fmtTime(g.createdAt)}
	if m != nil {
		w.Roles = append(w.Roles, m.roles...)
		w.JoinedAt = fmtTime(m.joinedAt)
		if m.nick != "" {
			w.Nick = strp(m.nick)
		}
	}
	if withUser {
		wu := s.wireUserLocked(u)
		w.User = &wu
	}
	return w
}

func (s *Server) wireChannelLocked(c *channel) wireChannel {
	w := wireChannel{
		ID: c.id, Type: c.typ, GuildID: c.guild, Name: c.name, Position: c.position,
		PermissionOverwrites: []wireOverwrite{},
	}
	if c.parent != "" {
		p := c.parent
		w.ParentID = &p
	}
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if !c.msgs[i].deleted {
			id := c.msgs[i].ID
			w.LastMessageID = &id
			break
		}
	}
	switch {
	case c.typ == ChannelVoice:
		w.Bitrate = 64000
		w.UserLimit = new(int)
		w.LastMessageID = nil
	case c.typ.isThread():
		w.OwnerID = c.owner
		n := 0
		for _, m := range c.msgs {
			if !m.deleted {
				n++
			}
		}
		w.MessageCount = &n
		one := 1
		w.MemberCount = &one
		w.ThreadMetadata = &wireThreadMetadata{
			AutoArchiveDuration: 1440,
			ArchiveTimestamp:    fmtTime(c.createdAt),
			CreateTimestamp:     fmtTime(c.createdAt),
		}
		w.PermissionOverwrites = nil
	}
	return w
}

func (s *Server) wireRolesLocked(g *guild) []wireRole {
	out := make([]wireRole, 0, len(g.roles))
	for _, r := range g.roles {
		out = append(out, wireRole{
			ID: r.id, Name: r.name, Position: r.position, Permissions: r.permissions,
			Mentionable: r.id != RoleID(g.id),
		})
	}
	return out
}

// wireGuildLocked is the REST guild object.
func (s *Server) wireGuildLocked(g *guild) wireGuild {
	var system *ChannelID
	for _, id := range g.channels {
		if s.channels[id].typ == ChannelText {
			c := id
			system = &c
			break
		}
	}
	return wireGuild{
		ID: g.id, Name: g.name, OwnerID: g.owner, MemberCount: len(g.members),
		JoinedAt: fmtTime(g.createdAt), Features: []string{}, AFKTimeout: 300,
		SystemChannelID: system, PreferredLocale: "en-US", Roles: s.wireRolesLocked(g),
		Emojis: []json.RawMessage{}, Stickers: []json.RawMessage{},
	}
}

// wireGuildCreateLocked is the GUILD_CREATE payload: the guild plus
// channels, members, voice states and threads (discord-clients.md §4 E).
func (s *Server) wireGuildCreateLocked(g *guild) wireGuildCreate {
	w := wireGuildCreate{wireGuild: s.wireGuildLocked(g)}
	empty := []json.RawMessage{}
	w.Presences, w.StageInstances, w.GuildScheduledEvents, w.SoundboardSounds = empty, empty, empty, empty
	w.Channels, w.Threads = []wireChannel{}, []wireChannel{}
	for _, id := range g.channels {
		c := s.channels[id]
		if c.typ.isThread() {
			w.Threads = append(w.Threads, s.wireChannelLocked(c))
		} else {
			wc := s.wireChannelLocked(c)
			wc.GuildID = "" // Discord omits guild_id inside GUILD_CREATE channels
			w.Channels = append(w.Channels, wc)
		}
	}
	w.Members = make([]wireMember, 0, len(g.memberOrder))
	for _, u := range g.memberOrder {
		w.Members = append(w.Members, s.wireMemberLocked(g, u, true))
	}
	w.VoiceStates = []wireVoiceState{}
	for _, u := range g.memberOrder {
		if vs := g.voice[u]; vs != nil {
			w.VoiceStates = append(w.VoiceStates, s.wireVoiceStateLocked(g, u, vs, false))
		}
	}
	return w
}

// wireVoiceStateLocked renders a voice state. vs nil means "left" (channel
// null). full adds guild_id and member, as in VOICE_STATE_UPDATE.
func (s *Server) wireVoiceStateLocked(g *guild, u UserID, vs *voiceState, full bool) wireVoiceState {
	w := wireVoiceState{UserID: u}
	if vs != nil {
		c := vs.channel
		w.ChannelID = &c
		w.SessionID = vs.sessionID
		w.SelfDeaf = vs.selfDeaf
		w.SelfMute = vs.selfMute
	}
	if full {
		w.GuildID = g.id
		m := s.wireMemberLocked(g, u, true)
		w.Member = &m
	}
	return w
}

// wireMessageLocked renders a message. depth limits referenced_message
// nesting to one level, as Discord.
func (s *Server) wireMessageLocked(m *message, depth int) wireMessage {
	w := wireMessage{
		ID: m.ID, Type: int(m.Type), ChannelID: m.ChannelID, GuildID: m.GuildID,
		Author: s.wireUserLocked(m.Author), Content: m.Content, Timestamp: fmtTime(m.Timestamp),
		TTS: m.TTS, MentionEveryone: m.MentionEveryone, Mentions: []wireUser{},
		MentionRoles: []RoleID{}, Attachments: []json.RawMessage{}, Embeds: []json.RawMessage{},
		Components: []json.RawMessage{}, Flags: m.Flags, Nonce: m.nonce, WebhookID: m.webhookID,
	}
	if !m.EditedTimestamp.IsZero() {
		w.EditedTimestamp = strp(fmtTime(m.EditedTimestamp))
	}
	w.MentionRoles = append(w.MentionRoles, m.MentionRoles...)
	w.Embeds = append(w.Embeds, m.Embeds...)
	for _, a := range m.Attachments {
		b, _ := json.Marshal(a)
		w.Attachments = append(w.Attachments, b)
	}
	w.Components = append(w.Components, m.Components...)
	g := s.guilds[m.GuildID]
	if g != nil && g.members[m.Author] != nil && m.webhookID == "" {
		mm := s.wireMemberLocked(g, m.Author, false)
		w.Member = &mm
	}
	for _, u := range m.Mentions {
		wu := s.wireUserLocked(u)
		if g != nil && g.members[u] != nil {
			mm := s.wireMemberLocked(g, u, false)
			wu.Member = &mm
		}
		w.Mentions = append(w.Mentions, wu)
	}
	if m.interaction != nil {
		w.Interaction = m.interaction
		w.ApplicationID = s.bot
	}
	if ref := m.Reference; ref != nil {
		t := 0
		w.MessageReference = &wireMessageReference{Type: &t, MessageID: ref.MessageID, ChannelID: ref.ChannelID, GuildID: ref.GuildID}
		if depth == 0 {
			if rm := s.messages[ref.MessageID]; rm != nil && !rm.deleted {
				r := s.wireMessageLocked(rm, depth+1)
				r.Member = nil
				w.ReferencedMessage = &r
			}
		}
	}
	return w
}
