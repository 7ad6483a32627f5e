package discordsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Scripting: simulated users acting, and gateway faults.

// PostOption adjusts a scripted post.
type PostOption func(*newMessage)

// ReplyTo makes the post a reply (type 19) to message id; the replied-to
// author is pinged, as with Discord's defaults.
func ReplyTo(id MessageID) PostOption {
	return func(n *newMessage) { n.ref = &MessageReference{MessageID: id} }
}

// Mention appends a mention of u to the content.
func Mention(u UserID) PostOption {
	return func(n *newMessage) {
		if n.content != "" {
			n.content += " "
		}
		n.content += MentionUser(u)
	}
}

// WithAttachment attaches a file (metadata only: name, MIME type, size).
func WithAttachment(filename, contentType string, size int) PostOption {
	return func(n *newMessage) {
		n.attach = append(n.attach, Attachment{Filename: filename, ContentType: contentType, Size: size})
	}
}

// WithEmbed adds an embed, given as its JSON object.
func WithEmbed(embed json.RawMessage) PostOption {
	return func(n *newMessage) { n.embeds = append(n.embeds, embed) }
}

// WithAllowedMentions sets allowed_mentions on the post.
func WithAllowedMentions(am AllowedMentions) PostOption {
	return func(n *newMessage) { n.allowed = &am }
}

// Post has user u send content in channel ch, as a human would from the
// Discord app: the message is stored and MESSAGE_CREATE goes to every
// member session (content blanked for sessions without MESSAGE_CONTENT
// unless they are mentioned). It returns the created message.
func (s *Server) Post(ctx context.Context, u UserID, ch ChannelID, content string, opts ...PostOption) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, fmt.Errorf("discordsim: post: %w", err)
	}
	n := newMessage{channel: ch, author: u, content: content, origin: OriginScript}
	for _, o := range opts {
		o(&n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.createMessageLocked(n)
	if err != nil {
		return Message{}, fmt.Errorf("discordsim: post: %w", err)
	}
	return m.snapshot(), nil
}

// Edit has the author of message id change its content (MESSAGE_UPDATE).
func (s *Server) Edit(ctx context.Context, id MessageID, content string) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, fmt.Errorf("discordsim: edit: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[id]
	if m == nil {
		return Message{}, fmt.Errorf("discordsim: edit: %w", errUnknownMessage)
	}
	m, err := s.editMessageLocked(m.ChannelID, id, m.Author, &content, nil, nil)
	if err != nil {
		return Message{}, fmt.Errorf("discordsim: edit: %w", err)
	}
	return m.snapshot(), nil
}

// Delete removes message id (MESSAGE_DELETE). Fetching it afterwards gives
// 404 Unknown Message.
func (s *Server) Delete(ctx context.Context, id MessageID) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("discordsim: delete: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[id]
	if m == nil {
		return fmt.Errorf("discordsim: delete: %w", errUnknownMessage)
	}
	if err := s.deleteMessageLocked(m.ChannelID, id); err != nil {
		return fmt.Errorf("discordsim: delete: %w", err)
	}
	return nil
}

// StartTyping has user u start typing in ch (TYPING_START to others).
func (s *Server) StartTyping(u UserID, ch ChannelID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[ch]
	if c == nil || !s.isMemberLocked(c.guild, u) {
		return fmt.Errorf("discordsim: typing: %s cannot see %s", u, ch)
	}
	s.typingLocked(c, u)
	return nil
}

var errNoSession = errors.New("discordsim: the bot has no connected gateway session")

// botConnsLocked returns the bot's sessions that have a connection.
func (s *Server) botConnsLocked() []*session {
	var out []*session
	for _, ss := range s.sessions {
		if ss.user == s.bot && ss.conn != nil && !ss.invalid {
			out = append(out, ss)
		}
	}
	return out
}

// eachBotConn runs fn under the lock on every bot session with a connection, or returns
// errNoSession when there is none.
func (s *Server) eachBotConn(fn func(ss *session)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.botConnsLocked()
	if len(sess) == 0 {
		return errNoSession
	}
	for _, ss := range sess {
		fn(ss)
	}
	return nil
}

// DropGateway cuts the bot's gateway connections at the TCP level, with no
// close frame. Sessions stay resumable; clients should Resume.
func (s *Server) DropGateway() error {
	s.mu.Lock()
	sess := s.botConnsLocked()
	var conns []*gwConn
	for _, ss := range sess {
		conns = append(conns, ss.conn)
	}
	s.mu.Unlock()
	if len(conns) == 0 {
		return errNoSession
	}
	for _, c := range conns {
		c.kill()
	}
	return nil
}

// ForceReconnect sends op 7 Reconnect to the bot's connections; clients
// close and Resume on a new socket.
func (s *Server) ForceReconnect() error {
	return s.eachBotConn(func(ss *session) { ss.conn.sendLocked(encodeOp(OpReconnect, nil)) })
}

// ForceInvalidSession sends op 9 with d=resumable to the bot's
// connections and keeps the sockets open. With resumable false the session
// is discarded, so only a fresh Identify works (discordgo sends it on the
// same socket, discord.js on a new one); with true the client may Resume.
func (s *Server) ForceInvalidSession(resumable bool) error {
	return s.eachBotConn(func(ss *session) {
		c := ss.conn
		ss.conn = nil // the socket may Identify or Resume again
		if !resumable {
			ss.invalid = true
			delete(s.sessions, ss.id)
		}
		c.sendLocked(encodeOp(OpInvalidSession, resumable))
		s.notifyLocked()
	})
}

// WithholdACKs makes the bot's connections leave the next n heartbeats
// unacknowledged (no op 11). discordgo reconnects after 5 intervals
// without an ACK, discord.js as soon as one is missing.
func (s *Server) WithholdACKs(n int) error {
	return s.eachBotConn(func(ss *session) { ss.conn.withholdACK = n })
}

// RequestHeartbeat sends op 1 to the bot's connections; clients must
// answer with a heartbeat at once.
func (s *Server) RequestHeartbeat() error {
	return s.eachBotConn(func(ss *session) { ss.conn.sendLocked(encodeOp(OpHeartbeat, nil)) })
}

// CloseGateway closes the bot's gateway connections with a Close frame
// carrying code (e.g. 4000 Unknown error: the session stays resumable).
func (s *Server) CloseGateway(code CloseCode) error {
	return s.eachBotConn(func(ss *session) { ss.conn.closeWith(code, "closed by the test") })
}
