package discordsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Interactions: INTERACTION_CREATE, the callback and the webhook routes.
// https://discord.com/developers/docs/interactions/receiving-and-responding

// InteractionCallbackType is the type of an interaction response.
type InteractionCallbackType int

// Interaction callback types.
const (
	CallbackPong                   InteractionCallbackType = 1
	CallbackChannelMessage         InteractionCallbackType = 4
	CallbackDeferredChannelMessage InteractionCallbackType = 5
	CallbackDeferredUpdateMessage  InteractionCallbackType = 6
	CallbackUpdateMessage          InteractionCallbackType = 7
	CallbackAutocompleteResult     InteractionCallbackType = 8
	CallbackModal                  InteractionCallbackType = 9
)

// String names the callback type.
func (t InteractionCallbackType) String() string {
	switch t {
	case CallbackPong:
		return "PONG"
	case CallbackChannelMessage:
		return "CHANNEL_MESSAGE_WITH_SOURCE"
	case CallbackDeferredChannelMessage:
		return "DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE"
	case CallbackDeferredUpdateMessage:
		return "DEFERRED_UPDATE_MESSAGE"
	case CallbackUpdateMessage:
		return "UPDATE_MESSAGE"
	case CallbackAutocompleteResult:
		return "APPLICATION_COMMAND_AUTOCOMPLETE_RESULT"
	case CallbackModal:
		return "MODAL"
	}
	return "InteractionCallbackType(" + strconv.Itoa(int(t)) + ")"
}

type interaction struct {
	id       InteractionID
	token    string
	user     UserID
	channel  ChannelID
	guild    GuildID
	name     string
	resp     *InteractionResponse
	original MessageID
}

// Interaction is a slash command invoked by a simulated user.
type Interaction struct {
	ID      InteractionID
	Token   string
	User    UserID
	Channel ChannelID
	Command string
}

// InteractionResponse is what the bot answered on the callback endpoint.
type InteractionResponse struct {
	Type InteractionCallbackType
	Data json.RawMessage // the callback's data, as sent
	// Message is the response message (type 4) once created; for type 5 it
	// appears when the bot edits @original.
	Message MessageID
}

// CommandOption is one option value of an invoked slash command.
type CommandOption struct {
	Name  string `json:"name"`
	Type  int    `json:"type"` // 3 string, 4 integer, 5 boolean, 6 user, 7 channel, 10 number
	Value any    `json:"value"`
}

// InvokeCommand has user u run the registered slash command name in
// channel ch: it dispatches INTERACTION_CREATE to the bot (§4 I) and
// returns at once. Use WaitInteractionResponse for the bot's answer.
func (s *Server) InvokeCommand(u UserID, ch ChannelID, name string, opts ...CommandOption) (Interaction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[ch]
	if c == nil {
		return Interaction{}, fmt.Errorf("discordsim: invoke %q: unknown channel %s", name, ch)
	}
	g := s.guilds[c.guild]
	if g.members[u] == nil {
		return Interaction{}, fmt.Errorf("discordsim: invoke %q: %s is not a member", name, u)
	}
	var cmd *command
	for _, scope := range []GuildID{g.id, ""} {
		for _, x := range s.commandsInLocked(scope) {
			if x.wire.Name == name && x.wire.Type == 1 && cmd == nil {
				cmd = x
			}
		}
	}
	if cmd == nil {
		return Interaction{}, fmt.Errorf("discordsim: invoke %q: no such command registered", name)
	}
	it := &interaction{
		id: InteractionID(s.ids.nextString()), token: "itok-" + randomHex(24),
		user: u, channel: ch, guild: g.id, name: name,
	}
	s.interactions[it.id] = it
	if opts == nil {
		opts = []CommandOption{}
	}
	mem := s.wireMemberLocked(g, u, true)
	mem.Permissions = everyonePermissions
	ev := map[string]any{
		"id": it.id, "application_id": s.bot, "type": 2, "token": it.token, "version": 1,
		"guild_id": g.id, "channel_id": ch, "channel": s.wireChannelLocked(c), "member": mem,
		"app_permissions": everyonePermissions, "locale": "en-US", "guild_locale": "en-US",
		"entitlements": []any{}, "authorizing_integration_owners": map[string]any{"0": g.id}, "context": 0,
		"data": map[string]any{"id": cmd.wire.ID, "name": name, "type": 1, "options": opts, "guild_id": cmd.wire.GuildID},
	}
	for _, ss := range s.sessions {
		if ss.user == s.bot && ss.ownsGuild(g.id) {
			s.dispatchToLocked(ss, "INTERACTION_CREATE", ev, 0)
		}
	}
	s.notifyLocked()
	return Interaction{ID: it.id, Token: it.token, User: u, Channel: ch, Command: name}, nil
}

// WaitInteractionResponse waits for the bot's callback to interaction id.
func (s *Server) WaitInteractionResponse(ctx context.Context, id InteractionID) (InteractionResponse, error) {
	var r InteractionResponse
	err := s.waitFor(ctx, func() bool {
		it := s.interactions[id]
		if it == nil || it.resp == nil {
			return false
		}
		r = *it.resp
		r.Message = it.original
		return true
	})
	return r, err
}

type callbackBody struct {
	Type InteractionCallbackType `json:"type"`
	Data json.RawMessage         `json:"data"`
}

type callbackMessageData struct {
	Content         string            `json:"content"`
	TTS             bool              `json:"tts"`
	Embeds          []json.RawMessage `json:"embeds"`
	Components      []json.RawMessage `json:"components"`
	AllowedMentions *AllowedMentions  `json:"allowed_mentions"`
	Flags           int               `json:"flags"`
}

var errUnknownInteraction = &apiError{404, codeUnknownInteract, "Unknown interaction"}

// interactionCallback is POST /interactions/{id}/{token}/callback (no
// authentication, as on Discord). 204, or 200 with the created resource
// when ?with_response=true.
func (s *Server) interactionCallback(q *apiRequest) (int, any, error) {
	it := s.interactions[InteractionID(q.PathValue("interaction_id"))]
	if it == nil || it.token != q.PathValue("token") {
		return 0, nil, errUnknownInteraction
	}
	if it.resp != nil {
		return 0, nil, &apiError{400, codeAlreadyAcked, "Interaction has already been acknowledged."}
	}
	var b callbackBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	switch b.Type {
	case CallbackChannelMessage:
		var d callbackMessageData
		if len(b.Data) > 0 {
			if err := json.Unmarshal(b.Data, &d); err != nil {
				return 0, nil, errInvalidJSON
			}
		}
		m, err := s.interactionMessageLocked(it, d, MessageChatInputCommand)
		if err != nil {
			return 0, nil, err
		}
		it.original = m.ID
	case CallbackDeferredChannelMessage, CallbackModal:
	default:
		return 0, nil, &apiError{400, 40043, "Interaction callback type not valid for this interaction"}
	}
	it.resp = &InteractionResponse{Type: b.Type, Data: b.Data}
	s.notifyLocked()
	if q.URL.Query().Get("with_response") == "true" {
		res := map[string]any{"interaction": map[string]any{"id": it.id, "type": 2, "response_message_id": it.original}}
		if m := s.messages[it.original]; m != nil {
			res["resource"] = map[string]any{"type": b.Type, "message": s.wireMessageLocked(m, 0)}
		}
		return http.StatusOK, res, nil
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) interactionMessageLocked(it *interaction, d callbackMessageData, typ MessageType) (*message, error) {
	n := newMessage{
		channel: it.channel, author: s.bot, content: d.Content, tts: d.TTS, flags: d.Flags,
		embeds: d.Embeds, comps: d.Components, allowed: d.AllowedMentions, origin: OriginInteraction,
		typ: typ, webhookID: s.bot, interID: it.id,
		inter: &wireInteractionMetadata{ID: it.id, Type: 2, Name: it.name, User: s.wireUserLocked(it.user)},
	}
	return s.createMessageLocked(n)
}

func (s *Server) webhookInteraction(q *apiRequest) (*interaction, error) {
	if UserID(q.PathValue("application_id")) != s.bot {
		return nil, &apiError{404, codeUnknownWebhook, "Unknown Webhook"}
	}
	tok := q.PathValue("token")
	for _, it := range s.interactions {
		if it.token == tok {
			return it, nil
		}
	}
	return nil, &apiError{404, codeUnknownWebhook, "Unknown Webhook"}
}

// webhookMessage resolves {message_id} ("@original" or an id) of an
// interaction's webhook.
func (s *Server) webhookMessage(q *apiRequest, it *interaction) (*message, error) {
	id := MessageID(q.PathValue("message_id"))
	if id == "@original" {
		id = it.original
	}
	m := s.messages[id]
	if m == nil || m.deleted || m.Interaction != it.id {
		return nil, errUnknownMessage
	}
	return m, nil
}

// webhookFollowup is POST /webhooks/{app}/{token}: a follow-up message.
func (s *Server) webhookFollowup(q *apiRequest) (int, any, error) {
	it, err := s.webhookInteraction(q)
	if err != nil {
		return 0, nil, err
	}
	if it.resp == nil {
		return 0, nil, errUnknownInteraction
	}
	var d callbackMessageData
	if err := decodeBody(q, &d); err != nil {
		return 0, nil, err
	}
	m, err := s.interactionMessageLocked(it, d, MessageChatInputCommand)
	if err != nil {
		return 0, nil, err
	}
	if it.original == "" {
		it.original = m.ID // a follow-up to a deferred response becomes the original
	}
	return http.StatusOK, s.wireMessageLocked(m, 0), nil
}

func (s *Server) webhookGetMessage(q *apiRequest) (int, any, error) {
	it, err := s.webhookInteraction(q)
	if err != nil {
		return 0, nil, err
	}
	m, err := s.webhookMessage(q, it)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.wireMessageLocked(m, 0), nil
}

// webhookEditMessage edits a response; editing @original of a deferred
// response creates it, as on Discord.
func (s *Server) webhookEditMessage(q *apiRequest) (int, any, error) {
	it, err := s.webhookInteraction(q)
	if err != nil {
		return 0, nil, err
	}
	var b editMessageBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	if q.PathValue("message_id") == "@original" && it.original == "" {
		if it.resp == nil {
			return 0, nil, errUnknownInteraction
		}
		d := callbackMessageData{Embeds: b.Embeds, AllowedMentions: b.AllowedMentions}
		if b.Content != nil {
			d.Content = *b.Content
		}
		m, err := s.interactionMessageLocked(it, d, MessageChatInputCommand)
		if err != nil {
			return 0, nil, err
		}
		it.original = m.ID
		s.notifyLocked()
		return http.StatusOK, s.wireMessageLocked(m, 0), nil
	}
	m, err := s.webhookMessage(q, it)
	if err != nil {
		return 0, nil, err
	}
	m, err = s.editMessageLocked(m.ChannelID, m.ID, m.Author, b.Content, b.Embeds, b.AllowedMentions)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.wireMessageLocked(m, 0), nil
}

func (s *Server) webhookDeleteMessage(q *apiRequest) (int, any, error) {
	it, err := s.webhookInteraction(q)
	if err != nil {
		return 0, nil, err
	}
	m, err := s.webhookMessage(q, it)
	if err != nil {
		return 0, nil, err
	}
	if err := s.deleteMessageLocked(m.ChannelID, m.ID); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
