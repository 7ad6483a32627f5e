package discordsim

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// MessageType is a message's type on the wire.
// https://discord.com/developers/docs/resources/message#message-object-message-types
type MessageType int

// Message types the simulator produces.
const (
	MessageDefault          MessageType = 0
	MessageThreadCreated    MessageType = 18
	MessageReply            MessageType = 19
	MessageChatInputCommand MessageType = 20
)

// String names the message type.
func (t MessageType) String() string {
	switch t {
	case MessageDefault:
		return "DEFAULT"
	case MessageThreadCreated:
		return "THREAD_CREATED"
	case MessageReply:
		return "REPLY"
	case MessageChatInputCommand:
		return "CHAT_INPUT_COMMAND"
	}
	return fmt.Sprintf("MessageType(%d)", int(t))
}

// Origin says how a message came into being.
type Origin int

// Message origins.
const (
	OriginUnknown     Origin = iota
	OriginScript             // posted by the test through Post
	OriginREST               // created by a client through POST /channels/{id}/messages
	OriginInteraction        // an interaction response or follow-up
)

// String names the origin.
func (o Origin) String() string {
	switch o {
	case OriginScript:
		return "script"
	case OriginREST:
		return "rest"
	case OriginInteraction:
		return "interaction"
	}
	return "unknown"
}

// MessageReference is message_reference as the client sent it.
type MessageReference struct {
	MessageID       MessageID
	ChannelID       ChannelID
	GuildID         GuildID
	FailIfNotExists *bool
}

// Message is a snapshot of a message, with what the client sent kept as
// sent (Reference, AllowedMentions) and what the server computed
// (Mentions, MentionRoles, MentionEveryone).
type Message struct {
	ID              MessageID
	Type            MessageType
	ChannelID       ChannelID
	GuildID         GuildID
	Author          UserID
	Content         string
	TTS             bool
	Flags           int
	Embeds          []json.RawMessage
	Components      []json.RawMessage
	Attachments     []Attachment
	Reference       *MessageReference // nil unless a reply
	AllowedMentions *AllowedMentions  // nil when the client sent none
	Mentions        []UserID
	MentionRoles    []RoleID
	MentionEveryone bool
	Timestamp       time.Time
	EditedTimestamp time.Time // zero until edited
	Origin          Origin
	Interaction     InteractionID // for OriginInteraction
}

// ReplyTo returns the id of the message this one replies to, or "".
func (m Message) ReplyTo() MessageID {
	if m.Reference == nil {
		return ""
	}
	return m.Reference.MessageID
}

// MentionsUser reports whether the message's computed mentions include u.
func (m Message) MentionsUser(u UserID) bool { return slices.Contains(m.Mentions, u) }

type message struct {
	Message
	deleted     bool
	nonce       json.RawMessage
	webhookID   UserID
	interaction *wireInteractionMetadata
}

// Attachment is a file attached to a message (scripted posts only; the
// simulator stores no file bodies, the URL points nowhere).
// https://discord.com/developers/docs/resources/message#attachment-object
type Attachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type,omitempty"`
	Size        int    `json:"size"`
	URL         string `json:"url"`
	ProxyURL    string `json:"proxy_url"`
}

func (m *message) snapshot() Message {
	c := m.Message
	c.Attachments = slices.Clone(m.Attachments)
	c.Embeds = slices.Clone(m.Embeds)
	c.Components = slices.Clone(m.Components)
	c.Mentions = slices.Clone(m.Mentions)
	c.MentionRoles = slices.Clone(m.MentionRoles)
	return c
}

var (
	reUserMention = regexp.MustCompile(`<@!?(\d{1,20})>`)
	reRoleMention = regexp.MustCompile(`<@&(\d{1,20})>`)
	reEveryone    = regexp.MustCompile(`@(everyone|here)`)
)

// MentionUser renders a user mention, "<@id>".
func MentionUser(u UserID) string { return "<@" + string(u) + ">" }

// MentionRole renders a role mention, "<@&id>".
func MentionRole(r RoleID) string { return "<@&" + string(r) + ">" }

// computeMentionsLocked fills m's Mentions, MentionRoles and
// MentionEveryone from its content, honouring allowed_mentions as Discord
// does: without allowed_mentions everything parses and a reply pings the
// replied-to author; with it only the listed kinds and ids do, and the
// replied-to author only with replied_user.
// https://discord.com/developers/docs/resources/message#allowed-mentions-object
func (s *worldState) computeMentionsLocked(m *message, repliedAuthor UserID) {
	am := m.AllowedMentions
	parse := func(kind string) bool { return am == nil || slices.Contains(am.Parse, kind) }
	g := s.guilds[m.GuildID]
	m.Mentions, m.MentionRoles, m.MentionEveryone = nil, nil, false
	for _, sm := range reUserMention.FindAllStringSubmatch(m.Content, -1) {
		u := UserID(sm[1])
		if s.users[u] == nil || slices.Contains(m.Mentions, u) {
			continue
		}
		if parse("users") || slices.Contains(am.Users, u) {
			m.Mentions = append(m.Mentions, u)
		}
	}
	if g != nil {
		for _, sm := range reRoleMention.FindAllStringSubmatch(m.Content, -1) {
			r := RoleID(sm[1])
			if !slices.ContainsFunc(g.roles, func(x *role) bool { return x.id == r }) || slices.Contains(m.MentionRoles, r) {
				continue
			}
			if parse("roles") || slices.Contains(am.Roles, r) {
				m.MentionRoles = append(m.MentionRoles, r)
			}
		}
	}
	if reEveryone.MatchString(m.Content) && parse("everyone") {
		m.MentionEveryone = true
	}
	if repliedAuthor != "" && (am == nil || am.RepliedUser) && !slices.Contains(m.Mentions, repliedAuthor) {
		m.Mentions = append(m.Mentions, repliedAuthor)
	}
}

// newMessage is what a create needs; REST, scripting and interactions
// fill it.
type newMessage struct {
	channel   ChannelID
	author    UserID
	content   string
	tts       bool
	flags     int
	embeds    []json.RawMessage
	comps     []json.RawMessage
	ref       *MessageReference
	attach    []Attachment
	allowed   *AllowedMentions
	nonce     json.RawMessage
	origin    Origin
	typ       MessageType
	webhookID UserID
	inter     *wireInteractionMetadata
	interID   InteractionID
}

// apiError is a REST error: HTTP status plus Discord's JSON body.
type apiError struct {
	status  int
	code    int
	message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("discordsim: %d %s (code %d)", e.status, e.message, e.code)
}

var (
	errUnknownChannel = &apiError{404, codeUnknownChannel, "Unknown Channel"}
	errUnknownMessage = &apiError{404, codeUnknownMessage, "Unknown Message"}
	errMissingAccess  = &apiError{403, codeMissingAccess, "Missing Access"}
)

// createMessageLocked stores a message and dispatches MESSAGE_CREATE.
func (s *Server) createMessageLocked(n newMessage) (*message, error) {
	c := s.channels[n.channel]
	if c == nil || c.typ == ChannelCategory {
		return nil, errUnknownChannel
	}
	if !s.isMemberLocked(c.guild, n.author) && n.webhookID == "" {
		return nil, errMissingAccess
	}
	var repliedAuthor UserID
	typ := n.typ
	if n.ref != nil && n.ref.MessageID != "" {
		rm := s.messages[n.ref.MessageID]
		if rm == nil || rm.deleted || rm.ChannelID != c.id || rm.Ephemeral() {
			if n.ref.FailIfNotExists == nil || *n.ref.FailIfNotExists {
				return nil, &apiError{400, codeInvalidBody, "Invalid Form Body: message_reference: Unknown message"}
			}
			n.ref = nil
		} else {
			repliedAuthor = rm.Author
			n.ref.ChannelID, n.ref.GuildID = rm.ChannelID, rm.GuildID
			if typ == MessageDefault {
				typ = MessageReply
			}
		}
	} else {
		n.ref = nil
	}
	if n.content == "" && len(n.embeds) == 0 && len(n.comps) == 0 && len(n.attach) == 0 {
		return nil, &apiError{400, 50006, "Cannot send an empty message"}
	}
	m := &message{
		Message: Message{
			ID: MessageID(s.ids.nextString()), Type: typ, ChannelID: c.id, GuildID: c.guild,
			Author: n.author, Content: n.content, TTS: n.tts, Flags: n.flags, Embeds: n.embeds,
			Components: n.comps, Attachments: n.attach, Reference: n.ref, AllowedMentions: n.allowed,
			Timestamp: s.now(), Origin: n.origin, Interaction: n.interID,
		},
		nonce: n.nonce, webhookID: n.webhookID, interaction: n.inter,
	}
	for i := range m.Attachments {
		a := &m.Attachments[i]
		a.ID = s.ids.nextString()
		a.URL = "https://cdn.discordapp.com/attachments/" + string(c.id) + "/" + a.ID + "/" + a.Filename
		a.ProxyURL = "https://media.discordapp.net/attachments/" + string(c.id) + "/" + a.ID + "/" + a.Filename
	}
	s.computeMentionsLocked(m, repliedAuthor)
	s.messages[m.ID] = m
	if n.origin != OriginScript {
		s.sent = append(s.sent, m)
	}
	if m.Ephemeral() {
		// Only the invoker sees an ephemeral response: it is not in the
		// channel's history and no bot session gets MESSAGE_CREATE.
		s.notifyLocked()
		return m, nil
	}
	c.msgs = append(c.msgs, m)
	s.dispatchMessageLocked("MESSAGE_CREATE", m)
	s.notifyLocked()
	return m, nil
}

// flagEphemeral marks an interaction response only its invoker sees.
const flagEphemeral = 1 << 6

// Ephemeral reports whether the message is an ephemeral interaction
// response (flag 64): only the invoking user sees it, so it is missing
// from the channel's history and from other sessions' events.
func (m Message) Ephemeral() bool { return m.Origin == OriginInteraction && m.Flags&flagEphemeral != 0 }

// editMessageLocked applies an edit by editor and dispatches MESSAGE_UPDATE.
// content nil leaves the content as it was.
func (s *Server) editMessageLocked(ch ChannelID, id MessageID, editor UserID, content *string, embeds []json.RawMessage, am *AllowedMentions) (*message, error) {
	m := s.messages[id]
	if s.channels[ch] == nil {
		return nil, errUnknownChannel
	}
	if m == nil || m.deleted || m.ChannelID != ch {
		return nil, errUnknownMessage
	}
	if m.Author != editor {
		return nil, &apiError{403, codeCannotEditOthers, "Cannot edit a message authored by another user"}
	}
	if content != nil {
		m.Content = *content
	}
	if embeds != nil {
		m.Embeds = embeds
	}
	if am != nil {
		m.AllowedMentions = am
	}
	var replied UserID
	if m.Reference != nil {
		if rm := s.messages[m.Reference.MessageID]; rm != nil {
			replied = rm.Author
		}
	}
	s.computeMentionsLocked(m, replied)
	m.EditedTimestamp = s.now()
	if !m.Ephemeral() {
		s.dispatchMessageLocked("MESSAGE_UPDATE", m)
	}
	s.notifyLocked()
	return m, nil
}

// deleteMessageLocked deletes and dispatches MESSAGE_DELETE.
func (s *Server) deleteMessageLocked(ch ChannelID, id MessageID) error {
	if s.channels[ch] == nil {
		return errUnknownChannel
	}
	m := s.messages[id]
	if m == nil || m.deleted || m.ChannelID != ch {
		return errUnknownMessage
	}
	m.deleted = true
	if m.Ephemeral() {
		s.notifyLocked()
		return nil
	}
	ev := struct {
		ID        MessageID `json:"id"`
		ChannelID ChannelID `json:"channel_id"`
		GuildID   GuildID   `json:"guild_id,omitempty"`
	}{m.ID, m.ChannelID, m.GuildID}
	intent := intentForChannel(s.channels[ch])
	for _, ss := range s.sessions {
		if s.seesGuildLocked(ss, m.GuildID) {
			s.dispatchToLocked(ss, "MESSAGE_DELETE", ev, intent)
		}
	}
	s.notifyLocked()
	return nil
}

func snowflakeLess(a, b string) bool {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	return x < y
}

// listMessagesLocked implements GET /channels/{id}/messages: newest first;
// before, after and around are exclusive, exclusive and inclusive;
// limit is 1..100, default 50.
// https://discord.com/developers/docs/resources/message#get-channel-messages
func (s *Server) listMessagesLocked(c *channel, before, after, around MessageID, limit int) []*message {
	live := make([]*message, 0, len(c.msgs))
	for _, m := range c.msgs {
		if !m.deleted {
			live = append(live, m)
		}
	}
	var sel []*message
	switch {
	case around != "":
		// limit/2 older, the message itself (if present) and the rest newer.
		i, _ := slices.BinarySearchFunc(live, around, func(m *message, id MessageID) int {
			if m.ID == id {
				return 0
			}
			if snowflakeLess(string(m.ID), string(id)) {
				return -1
			}
			return 1
		})
		lo := max(i-limit/2, 0)
		hi := min(lo+limit, len(live))
		lo = max(hi-limit, 0)
		sel = live[lo:hi]
	case before != "":
		i := 0
		for i < len(live) && snowflakeLess(string(live[i].ID), string(before)) {
			i++
		}
		sel = live[max(i-limit, 0):i]
	case after != "":
		i := 0
		for i < len(live) && !snowflakeLess(string(after), string(live[i].ID)) {
			i++
		}
		sel = live[i:min(i+limit, len(live))]
	default:
		sel = live[max(len(live)-limit, 0):]
	}
	out := slices.Clone(sel)
	slices.Reverse(out)
	return out
}

// Messages returns the live (not deleted) messages of a channel, oldest
// first.
func (s *Server) Messages(ch ChannelID) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[ch]
	if c == nil {
		return nil
	}
	var out []Message
	for _, m := range c.msgs {
		if !m.deleted {
			out = append(out, m.snapshot())
		}
	}
	return out
}

// Message returns one message by id; ok is false when it is unknown or
// deleted.
func (s *Server) Message(id MessageID) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[id]
	if m == nil || m.deleted {
		return Message{}, false
	}
	return m.snapshot(), true
}

// Sent returns every message clients created through REST or interaction
// responses, in order, deleted ones included, as last seen.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.sent))
	for i, m := range s.sent {
		out[i] = m.snapshot()
	}
	return out
}

// WaitMessage waits until a message created by a client (Sent, not Post)
// satisfies match, scanning from the first such message, and returns it.
func (s *Server) WaitMessage(ctx context.Context, match func(Message) bool) (Message, error) {
	var found Message
	next := 0
	err := s.waitFor(ctx, func() bool {
		for ; next < len(s.sent); next++ {
			if m := s.sent[next].snapshot(); match(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitMessages waits until n messages created by clients (Sent) satisfy
// match and returns the first n of them, in order. WaitMessages(ctx, 2,
// From(bot)) is "the bot's second message".
func (s *Server) WaitMessages(ctx context.Context, n int, match func(Message) bool) ([]Message, error) {
	var found []Message
	next := 0
	err := s.waitFor(ctx, func() bool {
		for ; next < len(s.sent) && len(found) < n; next++ {
			if m := s.sent[next].snapshot(); match(m) {
				found = append(found, m)
			}
		}
		return len(found) >= n
	})
	return found, err
}

// From matches messages authored by u (for WaitMessage).
func From(u UserID) func(Message) bool { return func(m Message) bool { return m.Author == u } }

// InChannel matches messages in channel c (for WaitMessage).
func InChannel(c ChannelID) func(Message) bool {
	return func(m Message) bool { return m.ChannelID == c }
}

// TypingEvent is one POST /channels/{id}/typing or scripted typing.
type TypingEvent struct {
	Channel ChannelID
	User    UserID
	At      time.Time
}

// Typing returns every typing event so far, in order.
func (s *Server) Typing() []TypingEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.typing)
}

// WaitTyping waits for a typing event in channel c by user u.
func (s *Server) WaitTyping(ctx context.Context, c ChannelID, u UserID) (TypingEvent, error) {
	var found TypingEvent
	err := s.waitFor(ctx, func() bool {
		for _, t := range s.typing {
			if t.Channel == c && t.User == u {
				found = t
				return true
			}
		}
		return false
	})
	return found, err
}

func (s *Server) typingLocked(c *channel, u UserID) {
	at := s.now()
	s.typing = append(s.typing, TypingEvent{Channel: c.id, User: u, At: at})
	ev := struct {
		ChannelID ChannelID   `json:"channel_id"`
		GuildID   GuildID     `json:"guild_id,omitempty"`
		UserID    UserID      `json:"user_id"`
		Timestamp int64       `json:"timestamp"`
		Member    *wireMember `json:"member,omitempty"`
	}{ChannelID: c.id, GuildID: c.guild, UserID: u, Timestamp: at.Unix()}
	if g := s.guilds[c.guild]; g != nil {
		m := s.wireMemberLocked(g, u, true)
		ev.Member = &m
	}
	for _, ss := range s.sessions {
		if ss.user != u && s.seesGuildLocked(ss, c.guild) {
			s.dispatchToLocked(ss, "TYPING_START", ev, IntentGuildMessageTyping)
		}
	}
	s.notifyLocked()
}
