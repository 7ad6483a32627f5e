package world

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"
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
	OriginScript             // posted by a simulated user (Post, the control API)
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

// AllowedMentions is the allowed_mentions object a client sent.
// https://discord.com/developers/docs/resources/message#allowed-mentions-object
type AllowedMentions struct {
	Parse       []string `json:"parse"`
	Users       []UserID `json:"users,omitempty"`
	Roles       []RoleID `json:"roles,omitempty"`
	RepliedUser bool     `json:"replied_user,omitempty"`
}

// InteractionMeta is a response message's "interaction" field.
type InteractionMeta struct {
	ID   InteractionID
	Name string
	User UserID
}

// Message is a snapshot of a message, with what the client sent kept as
// sent (Reference, AllowedMentions, Nonce) and what the world computed
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
	Reactions       []Reaction
	Reference       *MessageReference // nil unless a reply
	AllowedMentions *AllowedMentions  // nil when the client sent none
	Mentions        []UserID
	MentionRoles    []RoleID
	MentionEveryone bool
	Timestamp       time.Time
	EditedTimestamp time.Time // zero until edited
	Origin          Origin
	Interaction     InteractionID    // for OriginInteraction
	InteractionMeta *InteractionMeta // the wire's "interaction" field
	WebhookID       UserID           // interaction responses come from the application's webhook
	Nonce           json.RawMessage
	Deleted         bool
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

// flagEphemeral marks an interaction response only its invoker sees.
const flagEphemeral = 1 << 6

// Ephemeral reports whether the message is an ephemeral interaction
// response (flag 64): only the invoking user sees it, so it is missing
// from the channel's history and from other sessions' events.
func (m Message) Ephemeral() bool { return m.Origin == OriginInteraction && m.Flags&flagEphemeral != 0 }

// clone returns a snapshot that shares nothing mutable with m.
func (m *Message) clone() Message {
	c := *m
	c.Attachments = slices.Clone(m.Attachments)
	c.Embeds = slices.Clone(m.Embeds)
	c.Components = slices.Clone(m.Components)
	c.Mentions = slices.Clone(m.Mentions)
	c.MentionRoles = slices.Clone(m.MentionRoles)
	c.Reactions = make([]Reaction, len(m.Reactions))
	for i, r := range m.Reactions {
		c.Reactions[i] = Reaction{Emoji: r.Emoji, Users: slices.Clone(r.Users)}
	}
	if m.Reactions == nil {
		c.Reactions = nil
	}
	if m.Reference != nil {
		r := *m.Reference
		c.Reference = &r
	}
	return c
}

// TypingEvent is one typing indicator: POST /channels/{id}/typing or a
// simulated user's.
type TypingEvent struct {
	Channel ChannelID
	User    UserID
	At      time.Time
}

var (
	reUserMention = regexp.MustCompile(`<@!?(\d{1,20})>`)
	reRoleMention = regexp.MustCompile(`<@&(\d{1,20})>`)
	reEveryone    = regexp.MustCompile(`@(everyone|here)`)
)

// computeMentionsLocked fills m's Mentions, MentionRoles and
// MentionEveryone from its content, honouring allowed_mentions as Discord
// does: without allowed_mentions everything parses and a reply pings the
// replied-to author; with it only the listed kinds and ids do, and the
// replied-to author only with replied_user.
// https://discord.com/developers/docs/resources/message#allowed-mentions-object
func (w *World) computeMentionsLocked(m *Message, repliedAuthor UserID) {
	am := m.AllowedMentions
	parse := func(kind string) bool { return am == nil || slices.Contains(am.Parse, kind) }
	g := w.st.guilds[m.GuildID]
	m.Mentions, m.MentionRoles, m.MentionEveryone = nil, nil, false
	for _, sm := range reUserMention.FindAllStringSubmatch(m.Content, -1) {
		u := UserID(sm[1])
		if w.st.users[u] == nil || slices.Contains(m.Mentions, u) {
			continue
		}
		if parse("users") || slices.Contains(am.Users, u) {
			m.Mentions = append(m.Mentions, u)
		}
	}
	if g != nil {
		for _, sm := range reRoleMention.FindAllStringSubmatch(m.Content, -1) {
			r := RoleID(sm[1])
			if !slices.ContainsFunc(g.roles, func(x Role) bool { return x.ID == r }) || slices.Contains(m.MentionRoles, r) {
				continue
			}
			if parse("roles") || slices.Contains(am.Roles, r) {
				m.MentionRoles = append(m.MentionRoles, r)
			}
		}
	}
	if reEveryone.MatchString(m.Content) && parse("everyone") && w.mayMentionEveryoneLocked(m) {
		m.MentionEveryone = true
	}
	if repliedAuthor != "" && (am == nil || am.RepliedUser) && !slices.Contains(m.Mentions, repliedAuthor) {
		m.Mentions = append(m.Mentions, repliedAuthor)
	}
}

// NewMessage is a message to create; REST, simulated users and
// interaction responses fill it.
type NewMessage struct {
	Channel         ChannelID
	Author          UserID
	Content         string
	TTS             bool
	Flags           int
	Embeds          []json.RawMessage
	Components      []json.RawMessage
	Reference       *MessageReference
	Files           []File
	AllowedMentions *AllowedMentions
	Nonce           json.RawMessage
	// EnforceNonce: a create repeated by the same author in the same
	// channel with the same nonce within NonceWindow answers the first
	// message instead of creating another, as Discord does.
	EnforceNonce bool
	Origin       Origin
	Type         MessageType
	// WebhookID, Interaction and InteractionMeta mark interaction
	// responses (posted by the application's webhook).
	WebhookID       UserID
	Interaction     InteractionID
	InteractionMeta *InteractionMeta
}

// MaxContent is the longest content a bot may send; a user's client (with
// Nitro) may send twice as much.
const MaxContent = 2000

// contentLimit is MaxContent, or twice as much for a simulated user.
func contentLimit(o Origin) int {
	if o == OriginScript {
		return 2 * MaxContent
	}
	return MaxContent
}

// NonceWindow is how long Discord remembers a nonce for enforce_nonce ("a
// few minutes").
const NonceWindow = 5 * time.Minute

// CreateMessage stores a message. It checks what Discord checks: the
// channel takes messages, the author is a member (or the webhook of an
// interaction), the content fits, the message is not empty, the reply
// target exists (unless fail_if_not_exists is false), the files fit.
func (w *World) CreateMessage(n NewMessage) (Message, error) {
	w.lock()
	defer w.mu.Unlock()
	m, err := w.createMessageLocked(n)
	if err != nil {
		return Message{}, err
	}
	return m.clone(), nil
}

func (w *World) createMessageLocked(n NewMessage) (*Message, error) {
	c := w.st.channels[n.Channel]
	if c == nil {
		return nil, ErrUnknownChannel
	}
	if !w.isMemberLocked(c.guild, n.Author) && n.WebhookID == "" {
		return nil, ErrMissingAccess
	}
	if c.typ == ChannelCategory {
		return nil, &Error{400, CodeNonTextChannel, "Cannot send messages in a non-text channel"}
	}
	if err := w.checkSendLocked(c, &n); err != nil {
		return nil, err
	}
	if limit := contentLimit(n.Origin); utf8.RuneCountInString(n.Content) > limit {
		return nil, invalidBody("content", fmt.Sprintf("Must be %d or fewer in length.", limit))
	}
	if n.EnforceNonce {
		if m := w.nonceMatchLocked(c, n.Author, n.Nonce); m != nil {
			return m, nil
		}
	}
	typ, repliedAuthor, err := w.resolveReplyLocked(c, &n)
	if err != nil {
		return nil, err
	}
	if n.Content == "" && len(n.Embeds) == 0 && len(n.Components) == 0 && len(n.Files) == 0 {
		return nil, &Error{400, CodeEmptyMessage, "Cannot send an empty message"}
	}
	atts, err := w.storeFilesLocked(c.id, n.Files)
	if err != nil {
		return nil, err
	}
	m := &Message{
		ID: MessageID(w.ids.nextString()), Type: typ, ChannelID: c.id, GuildID: c.guild,
		Author: n.Author, Content: n.Content, TTS: n.TTS, Flags: n.Flags, Embeds: n.Embeds,
		Components: n.Components, Attachments: atts, Reference: n.Reference, AllowedMentions: n.AllowedMentions,
		Timestamp: w.now(), Origin: n.Origin, Interaction: n.Interaction, InteractionMeta: n.InteractionMeta,
		WebhookID: n.WebhookID, Nonce: n.Nonce,
	}
	for _, a := range atts {
		w.st.files[a.ID].message = m.ID
	}
	w.computeMentionsLocked(m, repliedAuthor)
	w.st.messages[m.ID] = m
	if n.Origin != OriginScript {
		w.st.sent = append(w.st.sent, m)
	}
	if !m.Ephemeral() {
		// Only the invoker sees an ephemeral response: it is not in the
		// channel's history.
		c.msgs = append(c.msgs, m)
	}
	w.emitLocked(MessageCreated{Message: m.clone()})
	return m, nil
}

// resolveReplyLocked checks n's reply target and returns the message type
// and the replied-to author; an unknown target is an error unless
// fail_if_not_exists is false (then the message is not a reply).
func (w *World) resolveReplyLocked(c *channel, n *NewMessage) (MessageType, UserID, error) {
	typ := n.Type
	if n.Reference == nil || n.Reference.MessageID == "" {
		n.Reference = nil
		return typ, "", nil
	}
	rm := w.st.messages[n.Reference.MessageID]
	if rm == nil || rm.Deleted || rm.ChannelID != c.id || rm.Ephemeral() {
		if n.Reference.FailIfNotExists == nil || *n.Reference.FailIfNotExists {
			return 0, "", invalidBody("message_reference", "Unknown message")
		}
		n.Reference = nil
		return typ, "", nil
	}
	n.Reference.ChannelID, n.Reference.GuildID = rm.ChannelID, rm.GuildID
	if typ == MessageDefault {
		typ = MessageReply
	}
	return typ, rm.Author, nil
}

// nonceMatchLocked finds the message the same author created in c with the
// same nonce within NonceWindow.
// https://discord.com/developers/docs/resources/message#create-message-jsonform-params
func (w *World) nonceMatchLocked(c *channel, author UserID, nonce json.RawMessage) *Message {
	key := nonceKey(nonce)
	if key == "" {
		return nil
	}
	since := w.now().Add(-NonceWindow)
	for i := len(c.msgs) - 1; i >= 0; i-- {
		m := c.msgs[i]
		if m.Timestamp.Before(since) {
			break
		}
		if m.Author == author && nonceKey(m.Nonce) == key {
			return m
		}
	}
	return nil
}

// nonceKey normalises a nonce (an integer or a string of up to 25
// characters) for comparison.
func nonceKey(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var num json.Number
	if json.Unmarshal(raw, &num) == nil {
		return num.String()
	}
	return ""
}

// MessageEdit is an edit: by Editor (who must be the author), of the
// fields that are set. ViaWebhook is the interaction webhook editing a
// response, which also reaches ephemeral ones.
type MessageEdit struct {
	Channel         ChannelID
	ID              MessageID
	Editor          UserID
	Content         *string
	Embeds          []json.RawMessage
	AllowedMentions *AllowedMentions
	ViaWebhook      bool
}

// EditMessage applies an edit and recomputes the mentions.
func (w *World) EditMessage(e MessageEdit) (Message, error) {
	w.lock()
	defer w.mu.Unlock()
	return w.editMessageLocked(e)
}

func (w *World) editMessageLocked(e MessageEdit) (Message, error) {
	if w.st.channels[e.Channel] == nil {
		return Message{}, ErrUnknownChannel
	}
	if c := w.st.channels[e.Channel]; !e.ViaWebhook && !w.isMemberLocked(c.guild, e.Editor) {
		return Message{}, ErrMissingAccess
	} else if err := w.checkEditLocked(c, &e); err != nil {
		return Message{}, err
	}
	m := w.st.messages[e.ID]
	if m == nil || m.Deleted || m.ChannelID != e.Channel || (m.Ephemeral() && !e.ViaWebhook) {
		return Message{}, ErrUnknownMessage
	}
	if limit := contentLimit(m.Origin); e.Content != nil && utf8.RuneCountInString(*e.Content) > limit {
		return Message{}, invalidBody("content", fmt.Sprintf("Must be %d or fewer in length.", limit))
	}
	if m.Author != e.Editor {
		return Message{}, &Error{403, CodeCannotEditOthers, "Cannot edit a message authored by another user"}
	}
	if e.Content != nil {
		m.Content = *e.Content
	}
	if e.Embeds != nil {
		m.Embeds = e.Embeds
	}
	if e.AllowedMentions != nil {
		m.AllowedMentions = e.AllowedMentions
	}
	var replied UserID
	if m.Reference != nil {
		if rm := w.st.messages[m.Reference.MessageID]; rm != nil {
			replied = rm.Author
		}
	}
	w.computeMentionsLocked(m, replied)
	m.EditedTimestamp = w.now()
	w.emitLocked(MessageUpdated{Message: m.clone()})
	return m.clone(), nil
}

// MessageDelete is a deletion by By: the author, or the bot (which has
// Manage Messages); "" is the simulator itself (a moderator), allowed
// anything. ViaWebhook is the interaction webhook deleting a response.
type MessageDelete struct {
	Channel    ChannelID
	ID         MessageID
	By         UserID
	ViaWebhook bool
}

// DeleteMessage deletes a message; fetching it afterwards is 404 Unknown
// Message.
func (w *World) DeleteMessage(d MessageDelete) error {
	w.lock()
	defer w.mu.Unlock()
	return w.deleteMessageLocked(d)
}

func (w *World) deleteMessageLocked(d MessageDelete) error {
	if w.st.channels[d.Channel] == nil {
		return ErrUnknownChannel
	}
	if c := w.st.channels[d.Channel]; d.By != "" && !d.ViaWebhook && !w.isMemberLocked(c.guild, d.By) {
		return ErrMissingAccess
	}
	m := w.st.messages[d.ID]
	if m == nil || m.Deleted || m.ChannelID != d.Channel || (m.Ephemeral() && !d.ViaWebhook) {
		return ErrUnknownMessage
	}
	if d.By != "" && m.Author != d.By && d.By != w.st.bot {
		return ErrMissingPermissions
	}
	m.Deleted = true
	w.emitLocked(MessageDeleted{Message: m.clone()})
	return nil
}

// MessageQuery is GET /channels/{id}/messages: before, after and around
// are exclusive, exclusive and inclusive; Limit is 1..100.
type MessageQuery struct {
	Before, After, Around MessageID
	Limit                 int
}

// ListMessages answers a history fetch by user by (who must be a member),
// newest first, as Discord.
// https://discord.com/developers/docs/resources/message#get-channel-messages
func (w *World) ListMessages(ch ChannelID, by UserID, q MessageQuery) ([]Message, error) {
	v := w.lock()
	defer w.mu.Unlock()
	if _, err := v.ChannelFor(ch, by); err != nil {
		return nil, err
	}
	return v.ListMessages(ch, q), nil
}

// Messages returns the live (not deleted) messages of a channel, oldest
// first.
func (w *World) Messages(ch ChannelID) []Message {
	w.lock()
	defer w.mu.Unlock()
	c := w.st.channels[ch]
	if c == nil {
		return nil
	}
	var out []Message
	for _, m := range c.msgs {
		if !m.Deleted {
			out = append(out, m.clone())
		}
	}
	return out
}

// Message returns one message by id; ok is false when it is unknown or
// deleted.
func (w *World) Message(id MessageID) (Message, bool) {
	v := w.lock()
	defer w.mu.Unlock()
	return v.Message(id)
}

// Sent returns every message clients created through REST or interaction
// responses, in order, deleted ones included, as last seen.
func (w *World) Sent() []Message { return w.SentSince(0) }

// SentSince returns the messages of Sent from index i on (Sent()[i:]).
func (w *World) SentSince(i int) []Message {
	w.lock()
	defer w.mu.Unlock()
	if i >= len(w.st.sent) {
		return nil
	}
	out := make([]Message, 0, len(w.st.sent)-i)
	for _, m := range w.st.sent[max(i, 0):] {
		out = append(out, m.clone())
	}
	return out
}

// StartTyping records that u is typing in ch (TYPING_START to others).
func (w *World) StartTyping(u UserID, ch ChannelID) error {
	v := w.lock()
	defer w.mu.Unlock()
	c, err := v.ChannelFor(ch, u)
	if err != nil {
		return err
	}
	t := TypingEvent{Channel: c.ID, User: u, At: w.now()}
	w.st.typing = append(w.st.typing, t)
	w.emitLocked(TypingStarted{Typing: t, Guild: c.Guild})
	return nil
}

// Typing returns every typing event so far, in order.
func (w *World) Typing() []TypingEvent {
	w.lock()
	defer w.mu.Unlock()
	return slices.Clone(w.st.typing)
}

func (w *World) isMemberLocked(g GuildID, u UserID) bool {
	gd := w.st.guilds[g]
	return gd != nil && gd.members[u] != nil
}
