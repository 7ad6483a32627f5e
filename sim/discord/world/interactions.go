package world

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Interactions: slash commands invoked by users and the application's
// answers (callback, follow-ups and edits through its webhook).
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

// CommandOption is one option value of an invoked slash command.
type CommandOption struct {
	Name string `json:"name"`
	Type int    `json:"type"` // 1 subcommand, 3 string, 4 integer, 5 boolean, 6 user, 7 channel, 10 number
	// Value is the option's value; a subcommand has none, and its Options instead.
	Value   any             `json:"value,omitempty"`
	Options []CommandOption `json:"options,omitempty"`
}

// Interaction is a slash command invoked by a simulated user, with the
// application's response once it has answered.
type Interaction struct {
	ID      InteractionID
	Token   string
	User    UserID
	Channel ChannelID
	Guild   GuildID
	Command string
	// CommandID and CommandGuild are the invoked command's.
	CommandID    CommandID
	CommandGuild GuildID
	Options      []CommandOption
	Response     *InteractionResponse // nil until the application answered
}

// InteractionResponse is what the application answered on the callback
// endpoint.
type InteractionResponse struct {
	Type InteractionCallbackType
	Data json.RawMessage // the callback's data, as sent
	// Message is the response message (type 4) once created; for type 5 it
	// appears when the application edits @original or follows up.
	Message MessageID
}

type interaction struct {
	Interaction
	original MessageID
}

func (it *interaction) snapshot() Interaction {
	s := it.Interaction
	if it.Response != nil {
		r := *it.Response
		r.Message = it.original
		s.Response = &r
	}
	return s
}

// InvokeCommand has user u run the registered slash command name in
// channel ch: INTERACTION_CREATE goes to the application. A command the
// client would not show u (its default_member_permissions, the guild's
// overrides: SetCommandPermissions) is refused with ErrCommandHidden, and any
// command in a guild in an outage with ErrGuildUnavailable: Discord's client
// shows such a guild as unavailable, and no gateway session gets its events.
func (w *World) InvokeCommand(u UserID, ch ChannelID, name string, opts ...CommandOption) (Interaction, error) {
	w.lock()
	defer w.mu.Unlock()
	c := w.st.channels[ch]
	if c == nil {
		return Interaction{}, fmt.Errorf("invoke %q: unknown channel %s", name, ch)
	}
	g := w.st.guilds[c.guild]
	if g.members[u] == nil {
		return Interaction{}, fmt.Errorf("invoke %q: %s is not a member", name, u)
	}
	if g.unavailable {
		return Interaction{}, fmt.Errorf("invoke %q in %s: %w", name, g.id, ErrGuildUnavailable)
	}
	var cmd *Command
	for _, scope := range []GuildID{g.id, ""} {
		for _, x := range w.commandsInLocked(scope) {
			if x.Name == name && x.Type == 1 && cmd == nil {
				cmd = x
			}
		}
	}
	if cmd == nil {
		return Interaction{}, fmt.Errorf("invoke %q: no such command registered", name)
	}
	if !mayUseLocked(g, u, cmd) {
		return Interaction{}, fmt.Errorf("invoke %q by %s: %w", name, u, ErrCommandHidden)
	}
	if opts == nil {
		opts = []CommandOption{}
	}
	it := &interaction{Interaction: Interaction{
		ID: InteractionID(w.ids.nextString()), Token: "itok-" + RandomHex(24),
		User: u, Channel: ch, Guild: g.id, Command: name, CommandID: cmd.ID, CommandGuild: cmd.Guild, Options: opts,
	}}
	w.st.interactions[it.ID] = it
	w.emitLocked(InteractionCreated{Interaction: it.snapshot()})
	return it.snapshot(), nil
}

// InteractionOf returns an interaction with its response so far.
func (w *World) InteractionOf(id InteractionID) (Interaction, bool) {
	w.lock()
	defer w.mu.Unlock()
	it := w.st.interactions[id]
	if it == nil {
		return Interaction{}, false
	}
	return it.snapshot(), true
}

// ResponseMessage is the message part of an interaction response,
// follow-up or webhook edit.
type ResponseMessage struct {
	Content         string            `json:"content"`
	TTS             bool              `json:"tts"`
	Embeds          []json.RawMessage `json:"embeds"`
	Components      []json.RawMessage `json:"components"`
	AllowedMentions *AllowedMentions  `json:"allowed_mentions"`
	Flags           int               `json:"flags"`
}

func (w *World) responseMessageLocked(it *interaction, d ResponseMessage) (*Message, error) {
	return w.createMessageLocked(NewMessage{
		Channel: it.Channel, Author: w.st.bot, Content: d.Content, TTS: d.TTS, Flags: d.Flags,
		Embeds: d.Embeds, Components: d.Components, AllowedMentions: d.AllowedMentions, Origin: OriginInteraction,
		Type: MessageChatInputCommand, WebhookID: w.st.bot, Interaction: it.ID,
		InteractionMeta: &InteractionMeta{ID: it.ID, Name: it.Command, User: it.User},
	})
}

// Respond is the callback (POST /interactions/{id}/{token}/callback):
// types 4 (a message, created now), 5 (deferred) and 9 (a modal). A second
// response is 400 40060. It returns the response message, if one was
// created.
func (w *World) Respond(id InteractionID, token string, typ InteractionCallbackType, data json.RawMessage) (Interaction, *Message, error) {
	w.lock()
	defer w.mu.Unlock()
	it := w.st.interactions[id]
	if it == nil || it.Token != token {
		return Interaction{}, nil, ErrUnknownInteraction
	}
	if it.Response != nil {
		return Interaction{}, nil, &Error{400, CodeAlreadyAcked, "Interaction has already been acknowledged."}
	}
	var msg *Message
	switch typ {
	case CallbackChannelMessage:
		var d ResponseMessage
		if len(data) > 0 {
			if err := json.Unmarshal(data, &d); err != nil {
				return Interaction{}, nil, &Error{400, CodeInvalidJSON, "The request body contains invalid JSON."}
			}
		}
		m, err := w.responseMessageLocked(it, d)
		if err != nil {
			return Interaction{}, nil, err
		}
		it.original = m.ID
		c := m.clone()
		msg = &c
	case CallbackDeferredChannelMessage, CallbackModal:
	default:
		return Interaction{}, nil, &Error{400, CodeCallbackType, "Interaction callback type not valid for this interaction"}
	}
	it.Response = &InteractionResponse{Type: typ, Data: data}
	w.emitLocked(Changed{What: "interaction response"})
	return it.snapshot(), msg, nil
}

// webhookLocked finds the interaction of the application's webhook token.
func (w *World) webhookLocked(app UserID, token string) (*interaction, error) {
	if app != w.st.bot {
		return nil, ErrUnknownWebhook
	}
	for _, it := range w.st.interactions {
		if it.Token == token {
			return it, nil
		}
	}
	return nil, ErrUnknownWebhook
}

// webhookMessageLocked resolves "@original" or an id of an interaction's
// webhook.
func (w *World) webhookMessageLocked(it *interaction, id MessageID) (*Message, error) {
	if id == "@original" {
		id = it.original
	}
	m := w.st.messages[id]
	if m == nil || m.Deleted || m.Interaction != it.ID {
		return nil, ErrUnknownMessage
	}
	return m, nil
}

// Followup posts a follow-up message (POST /webhooks/{app}/{token}); a
// follow-up to a deferred response becomes the original.
func (w *World) Followup(app UserID, token string, d ResponseMessage) (Message, error) {
	w.lock()
	defer w.mu.Unlock()
	it, err := w.webhookLocked(app, token)
	if err != nil {
		return Message{}, err
	}
	if it.Response == nil {
		return Message{}, ErrUnknownInteraction
	}
	m, err := w.responseMessageLocked(it, d)
	if err != nil {
		return Message{}, err
	}
	if it.original == "" {
		it.original = m.ID
	}
	return m.clone(), nil
}

// WebhookMessage returns a response message of the webhook.
func (w *World) WebhookMessage(app UserID, token string, id MessageID) (Message, error) {
	w.lock()
	defer w.mu.Unlock()
	it, err := w.webhookLocked(app, token)
	if err != nil {
		return Message{}, err
	}
	m, err := w.webhookMessageLocked(it, id)
	if err != nil {
		return Message{}, err
	}
	return m.clone(), nil
}

// EditWebhookMessage edits a response message; editing @original of a
// deferred response creates it, as on Discord.
func (w *World) EditWebhookMessage(app UserID, token string, id MessageID, content *string, embeds []json.RawMessage, am *AllowedMentions) (Message, error) {
	w.lock()
	defer w.mu.Unlock()
	it, err := w.webhookLocked(app, token)
	if err != nil {
		return Message{}, err
	}
	if id == "@original" && it.original == "" {
		if it.Response == nil {
			return Message{}, ErrUnknownInteraction
		}
		d := ResponseMessage{Embeds: embeds, AllowedMentions: am}
		if content != nil {
			d.Content = *content
		}
		m, err := w.responseMessageLocked(it, d)
		if err != nil {
			return Message{}, err
		}
		it.original = m.ID
		w.emitLocked(Changed{What: "interaction response"})
		return m.clone(), nil
	}
	m, err := w.webhookMessageLocked(it, id)
	if err != nil {
		return Message{}, err
	}
	return w.editMessageLocked(MessageEdit{Channel: m.ChannelID, ID: m.ID, Editor: m.Author, Content: content,
		Embeds: embeds, AllowedMentions: am, ViaWebhook: true})
}

// DeleteWebhookMessage deletes a response message.
func (w *World) DeleteWebhookMessage(app UserID, token string, id MessageID) error {
	w.lock()
	defer w.mu.Unlock()
	it, err := w.webhookLocked(app, token)
	if err != nil {
		return err
	}
	m, err := w.webhookMessageLocked(it, id)
	if err != nil {
		return err
	}
	return w.deleteMessageLocked(MessageDelete{Channel: m.ChannelID, ID: m.ID, ViaWebhook: true})
}
