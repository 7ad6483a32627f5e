package discordsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// Channel message routes.
// https://discord.com/developers/docs/resources/message

// createMessageBody is POST /channels/{id}/messages as discordgo and
// discord.js send it (nulls accepted for embeds, components, sticker_ids).
type createMessageBody struct {
	Content          string                `json:"content"`
	TTS              bool                  `json:"tts"`
	Embeds           []json.RawMessage     `json:"embeds"`
	Components       []json.RawMessage     `json:"components"`
	AllowedMentions  *AllowedMentions      `json:"allowed_mentions"`
	MessageReference *wireMessageReference `json:"message_reference"`
	Nonce            json.RawMessage       `json:"nonce"`
	EnforceNonce     bool                  `json:"enforce_nonce"`
	Flags            int                   `json:"flags"`
	StickerIDs       []string              `json:"sticker_ids"`
}

const maxContent = 2000

func (b *createMessageBody) toNew(ch ChannelID, author UserID, origin Origin) (newMessage, error) {
	if utf8.RuneCountInString(b.Content) > maxContent {
		return newMessage{}, &apiError{400, codeInvalidBody, "Invalid Form Body: content: Must be 2000 or fewer in length."}
	}
	n := newMessage{
		channel: ch, author: author, content: b.Content, tts: b.TTS, flags: b.Flags,
		embeds: b.Embeds, comps: b.Components, allowed: b.AllowedMentions, nonce: b.Nonce, origin: origin,
	}
	if r := b.MessageReference; r != nil && r.MessageID != "" {
		n.ref = &MessageReference{MessageID: r.MessageID, ChannelID: r.ChannelID, GuildID: r.GuildID, FailIfNotExists: r.FailIfNotExists}
	}
	return n, nil
}

func (s *Server) postMessage(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	if c.typ == ChannelVoice || c.typ == ChannelCategory {
		return 0, nil, &apiError{400, 50008, "Cannot send messages in a non-text channel"}
	}
	var b createMessageBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	n, err := b.toNew(c.id, q.user, OriginREST)
	if err != nil {
		return 0, nil, err
	}
	if b.EnforceNonce {
		if m := s.nonceMatchLocked(c, q.user, b.Nonce); m != nil {
			return http.StatusOK, s.wireMessageLocked(m, 0), nil
		}
	}
	m, err := s.createMessageLocked(n)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.wireMessageLocked(m, 0), nil
}

// nonceWindow is how long Discord remembers a nonce for enforce_nonce ("a few minutes").
const nonceWindow = 5 * time.Minute

// nonceMatchLocked finds the message the same author created in c with the same nonce within
// nonceWindow: with enforce_nonce, Discord answers a repeated create with that message instead
// of creating another.
// https://discord.com/developers/docs/resources/message#create-message-jsonform-params
func (s *Server) nonceMatchLocked(c *channel, author UserID, nonce json.RawMessage) *message {
	key := nonceKey(nonce)
	if key == "" {
		return nil
	}
	since := s.now().Add(-nonceWindow)
	for i := len(c.msgs) - 1; i >= 0; i-- {
		m := c.msgs[i]
		if m.Timestamp.Before(since) {
			break
		}
		if m.Author == author && nonceKey(m.nonce) == key {
			return m
		}
	}
	return nil
}

// nonceKey normalises a nonce (an integer or a string of up to 25 characters) for comparison.
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

// intParam reads an integer query parameter within [lo, hi].
func intParam(q *apiRequest, name string, def, lo, hi int) (int, error) {
	v := q.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &apiError{400, codeInvalidBody, fmt.Sprintf("Invalid Form Body: %s: must be between %d and %d", name, lo, hi)}
	}
	return n, nil
}

func snowflakeParam(q *apiRequest, name string) (MessageID, error) {
	v := q.URL.Query().Get(name)
	if v == "" {
		return "", nil
	}
	if _, err := strconv.ParseUint(v, 10, 64); err != nil {
		return "", &apiError{400, codeInvalidBody, fmt.Sprintf("Invalid Form Body: %s: Value %q is not snowflake.", name, v)}
	}
	return MessageID(v), nil
}

// listMessages is GET /channels/{id}/messages?before|after|around=&limit=.
func (s *Server) listMessages(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	limit, err := intParam(q, "limit", 50, 1, 100)
	if err != nil {
		return 0, nil, err
	}
	var ids [3]MessageID
	for i, name := range []string{"before", "after", "around"} {
		if ids[i], err = snowflakeParam(q, name); err != nil {
			return 0, nil, err
		}
	}
	out := []wireMessage{}
	for _, m := range s.listMessagesLocked(c, ids[0], ids[1], ids[2], limit) {
		out = append(out, s.wireMessageLocked(m, 0))
	}
	return http.StatusOK, out, nil
}

func (s *Server) getMessage(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	m := s.messages[MessageID(q.PathValue("message_id"))]
	if m == nil || m.deleted || m.ChannelID != c.id || m.Ephemeral() {
		return 0, nil, errUnknownMessage
	}
	return http.StatusOK, s.wireMessageLocked(m, 0), nil
}

type editMessageBody struct {
	Content         *string           `json:"content"`
	Embeds          []json.RawMessage `json:"embeds"`
	AllowedMentions *AllowedMentions  `json:"allowed_mentions"`
}

func (s *Server) patchMessage(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	var b editMessageBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	if b.Content != nil && utf8.RuneCountInString(*b.Content) > maxContent {
		return 0, nil, &apiError{400, codeInvalidBody, "Invalid Form Body: content: Must be 2000 or fewer in length."}
	}
	if m := s.messages[MessageID(q.PathValue("message_id"))]; m != nil && m.Ephemeral() {
		return 0, nil, errUnknownMessage // only the interaction webhook reaches it
	}
	m, err := s.editMessageLocked(c.id, MessageID(q.PathValue("message_id")), q.user, b.Content, b.Embeds, b.AllowedMentions)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.wireMessageLocked(m, 0), nil
}

// deleteMessage lets authors delete their messages (and, as bots with
// Manage Messages usually can, the bot delete anyone's).
func (s *Server) deleteMessage(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	id := MessageID(q.PathValue("message_id"))
	if m := s.messages[id]; m != nil && m.Ephemeral() {
		return 0, nil, errUnknownMessage
	}
	if m := s.messages[id]; m != nil && !m.deleted && m.Author != q.user && q.user != s.bot {
		return 0, nil, &apiError{403, 50013, "Missing Permissions"}
	}
	if err := s.deleteMessageLocked(c.id, id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) postTyping(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	s.typingLocked(c, q.user)
	return http.StatusNoContent, nil, nil
}

// postThread is POST /channels/{id}/threads and
// POST /channels/{id}/messages/{mid}/threads.
// https://discord.com/developers/docs/resources/channel#start-thread-from-message
func (s *Server) postThread(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	if c.typ != ChannelText {
		return 0, nil, &apiError{400, 50024, "Cannot execute action on this channel type"}
	}
	var b struct {
		Name string      `json:"name"`
		Type ChannelType `json:"type"`
	}
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	if b.Name == "" || utf8.RuneCountInString(b.Name) > 100 {
		return 0, nil, &apiError{400, codeInvalidBody, "Invalid Form Body: name: Must be between 1 and 100 in length."}
	}
	typ := ChannelPublicThread
	if mid := q.PathValue("message_id"); mid != "" {
		if m := s.messages[MessageID(mid)]; m == nil || m.deleted || m.ChannelID != c.id {
			return 0, nil, errUnknownMessage
		}
	} else if b.Type == ChannelPrivateThread {
		typ = ChannelPrivateThread
	}
	t := s.createChannelLocked(s.guilds[c.guild], typ, b.Name, c.id)
	t.owner = q.user
	s.dispatchThreadCreateLocked(t)
	return http.StatusCreated, s.wireChannelLocked(t), nil
}
