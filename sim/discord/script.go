package discordsim

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/banterbot/banter/sim/discord/world"
)

// Scripting: simulated users acting as a human would from the Discord app.
// Each call is one change of the world; the gateway dispatches it.

// PostOption adjusts a scripted post.
type PostOption func(*world.NewMessage)

// ReplyTo makes the post a reply (type 19) to message id; the replied-to
// author is pinged, as with Discord's defaults.
func ReplyTo(id MessageID) PostOption {
	return func(n *world.NewMessage) { n.Reference = &world.MessageReference{MessageID: id} }
}

// Mention appends a mention of u to the content.
func Mention(u UserID) PostOption {
	return func(n *world.NewMessage) {
		if n.Content != "" {
			n.Content += " "
		}
		n.Content += MentionUser(u)
	}
}

// WithFile attaches an uploaded file: the CDN serves data at the
// attachment's signed URL. contentType "" takes the type from the name's
// extension; images get their width and height.
func WithFile(filename, contentType string, data []byte) PostOption {
	return func(n *world.NewMessage) {
		n.Files = append(n.Files, world.File{Name: filename, ContentType: contentType, Data: data})
	}
}

// WithEmbed adds an embed, given as its JSON object.
func WithEmbed(embed json.RawMessage) PostOption {
	return func(n *world.NewMessage) { n.Embeds = append(n.Embeds, embed) }
}

// WithAllowedMentions sets allowed_mentions on the post.
func WithAllowedMentions(am AllowedMentions) PostOption {
	return func(n *world.NewMessage) { n.AllowedMentions = &am }
}

// Post has user u send content in channel ch, as a human would from the
// Discord app: the message is stored and MESSAGE_CREATE goes to every
// member session (content blanked for sessions without MESSAGE_CONTENT
// unless they are mentioned). It returns the created message.
func (s *Server) Post(ctx context.Context, u UserID, ch ChannelID, content string, opts ...PostOption) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, fmt.Errorf("discordsim: post: %w", err)
	}
	n := world.NewMessage{Channel: ch, Author: u, Content: content, Origin: world.OriginScript}
	for _, o := range opts {
		o(&n)
	}
	m, err := s.CreateMessage(n)
	if err != nil {
		return Message{}, fmt.Errorf("discordsim: post: %w", err)
	}
	return m, nil
}

// Edit has the author of message id change its content (MESSAGE_UPDATE).
func (s *Server) Edit(ctx context.Context, id MessageID, content string) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, fmt.Errorf("discordsim: edit: %w", err)
	}
	m, ok := s.Message(id)
	if !ok {
		return Message{}, fmt.Errorf("discordsim: edit: %w", world.ErrUnknownMessage)
	}
	m, err := s.EditMessage(world.MessageEdit{Channel: m.ChannelID, ID: id, Editor: m.Author, Content: &content})
	if err != nil {
		return Message{}, fmt.Errorf("discordsim: edit: %w", err)
	}
	return m, nil
}

// Delete removes message id as a moderator would (MESSAGE_DELETE).
// Fetching it afterwards gives 404 Unknown Message.
func (s *Server) Delete(ctx context.Context, id MessageID) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("discordsim: delete: %w", err)
	}
	m, ok := s.Message(id)
	if !ok {
		return fmt.Errorf("discordsim: delete: %w", world.ErrUnknownMessage)
	}
	if err := s.DeleteMessage(world.MessageDelete{Channel: m.ChannelID, ID: id}); err != nil {
		return fmt.Errorf("discordsim: delete: %w", err)
	}
	return nil
}

// React has user u react to message id with emoji (a Unicode emoji, e.g.
// "👍"): MESSAGE_REACTION_ADD goes to the sessions with
// GUILD_MESSAGE_REACTIONS.
func (s *Server) React(ctx context.Context, u UserID, id MessageID, emoji string) error {
	return s.reaction(ctx, "react", u, id, emoji, true)
}

// Unreact takes user u's reaction emoji off message id
// (MESSAGE_REACTION_REMOVE).
func (s *Server) Unreact(ctx context.Context, u UserID, id MessageID, emoji string) error {
	return s.reaction(ctx, "unreact", u, id, emoji, false)
}

func (s *Server) reaction(ctx context.Context, what string, u UserID, id MessageID, emoji string, add bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("discordsim: %s: %w", what, err)
	}
	e, err := world.ParseEmoji(emoji)
	if err != nil {
		return fmt.Errorf("discordsim: %s %q: %w", what, emoji, err)
	}
	m, ok := s.Message(id)
	if !ok {
		return fmt.Errorf("discordsim: %s: %w", what, world.ErrUnknownMessage)
	}
	if add {
		err = s.AddReaction(m.ChannelID, id, u, e)
	} else {
		err = s.RemoveReaction(m.ChannelID, id, u, u, e)
	}
	if err != nil {
		return fmt.Errorf("discordsim: %s: %w", what, err)
	}
	return nil
}

// CreateTextChannel creates a text channel (type 0) in a guild; it panics
// on an unknown guild (a test's mistake).
func (s *Server) CreateTextChannel(g GuildID, name string) ChannelID {
	return s.mustCreateChannel(g, ChannelText, name)
}

// CreateVoiceChannel creates a voice channel (type 2) in a guild; it
// panics on an unknown guild.
func (s *Server) CreateVoiceChannel(g GuildID, name string) ChannelID {
	return s.mustCreateChannel(g, ChannelVoice, name)
}

func (s *Server) mustCreateChannel(g GuildID, t ChannelType, name string) ChannelID {
	id, err := s.CreateChannel(g, t, name)
	if err != nil {
		panic("discordsim: " + err.Error())
	}
	return id
}

// CreateThread creates a public thread (type 11) under a text channel,
// owned by the given user, and dispatches THREAD_CREATE.
func (s *Server) CreateThread(parent ChannelID, owner UserID, name string) (ChannelID, error) {
	c, err := s.StartThread(world.NewThread{Parent: parent, Owner: owner, Name: name})
	if err != nil {
		return "", fmt.Errorf("discordsim: create thread: %w", err)
	}
	return c.ID, nil
}

// InteractionResponse returns the bot's answer to interaction id; ok is
// false until it answered.
func (s *Server) InteractionResponse(id InteractionID) (InteractionResponse, bool) {
	it, ok := s.InteractionOf(id)
	if !ok || it.Response == nil {
		return InteractionResponse{}, false
	}
	return *it.Response, true
}
