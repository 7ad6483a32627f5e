// Package store persists what banter must remember across restarts: the messages it has seen and
// sent (with reply links and the persona each of its own messages used), people's personas, and
// the ledger of reply attempts that rate limits count (per channel and per user).
//
// Store is the interface the pipelines use; Open returns its embedded default, SQLite. The
// driver is modernc.org/sqlite, a pure-Go translation of SQLite: it needs no system library and
// no C compiler of its own, so `go build` and CI stay simple, and its speed is far beyond the
// bot's write rate (a few rows per message). See docs/store.md.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("store: not found")

// Message is one Discord message as banter remembers it.
type Message struct {
	ID         string
	ChannelID  string
	GuildID    string
	ThreadID   string // set when the message is in a thread; ChannelID is then the thread itself
	AuthorID   string
	AuthorName string
	IsBot      bool // written by any bot
	IsSelf     bool // written by banter itself
	Content    string
	CreatedAt  time.Time
	EditedAt   time.Time // zero when never edited
	ReplyToID  string    // the message this one replies to, if any
	// ReplyToOrigin is who wrote ReplyToID and when, when the writer knows it (not stored): if
	// they have since run forget-me, banter's reply is refused (ErrForgotten) and another
	// member's is stored without the link, as ForgetMember leaves them.
	ReplyToOrigin Origin
	Persona       string // for banter's own messages: the persona that wrote it
	Deleted       bool
	// Images are the images the message shows (attachments, image embeds), as Discord
	// described them when the message was stored.
	Images []Image
	// Unhandled marks a message stored before the text pipeline handled it (a catch-up's
	// batch: unhandled.go) when the save inserts it; a save of a message stored already leaves
	// its mark as it is. Not read back: UnhandledMessages lists the marked ones.
	Unhandled bool
}

// Image is one image a message shows, as Discord described it. Its URLs are signed and expire
// (after about a day): fetching the message again gives fresh ones.
type Image struct {
	// Source is "attachment" or "embed".
	Source      string `json:"source"`
	URL         string `json:"url,omitempty"`
	ProxyURL    string `json:"proxy_url,omitempty"`
	Filename    string `json:"filename,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// encodeImages is the images column's value: a JSON array, or "" for none.
func encodeImages(ims []Image) string {
	if len(ims) == 0 {
		return ""
	}
	b, err := json.Marshal(ims)
	if err != nil {
		return "" // plain strings and numbers always marshal
	}
	return string(b)
}

// decodeImages reads the images column; a value that does not decode is no images.
func decodeImages(s string) []Image {
	if s == "" {
		return nil
	}
	var ims []Image
	if json.Unmarshal([]byte(s), &ims) != nil {
		return nil
	}
	return ims
}

// UserPersona is how a person wants to be known to the bot.
type UserPersona struct {
	UserID        string
	PreferredName string
	Pronouns      string
	Description   string
	UpdatedAt     time.Time
}

// NoPersona is what Summary says of a member without a persona.
const NoPersona = "no persona on file"

// Summary renders the persona in one line for a model's prompt, as text and voice show the
// people in a conversation: "goes by Sam; pronouns they/them; about: …", or NoPersona for a
// nil or empty persona.
func (p *UserPersona) Summary() string {
	if p == nil {
		return NoPersona
	}
	var parts []string
	if p.PreferredName != "" {
		parts = append(parts, "goes by "+p.PreferredName)
	}
	if p.Pronouns != "" {
		parts = append(parts, "pronouns "+p.Pronouns)
	}
	if p.Description != "" {
		parts = append(parts, "about: "+p.Description)
	}
	if len(parts) == 0 {
		return NoPersona
	}
	return strings.Join(parts, "; ")
}

// Prompt is one reply attempt, a row of the rate-limit ledger.
type Prompt struct {
	GuildID   string
	ChannelID string
	// UserID is the author of the message answered (may be empty), SaidAt when they said it
	// (not stored): the row is refused when they have run forget-me in GuildID since.
	UserID string
	SaidAt time.Time
	Kind   PromptKind
	At     time.Time // when the attempt was made
}

// PromptKind tells the rate-limit ledger whether a reply attempt answered an addressed turn.
type PromptKind int

const (
	// PromptUnknown is the zero value and is never recorded.
	PromptUnknown PromptKind = iota
	// PromptExplicit answered a turn that addressed the bot.
	PromptExplicit
	// PromptInitiative was the bot speaking up on its own.
	PromptInitiative
)

// String returns the kind's name as stored.
func (k PromptKind) String() string {
	switch k {
	case PromptExplicit:
		return "explicit"
	case PromptInitiative:
		return "initiative"
	}
	return "unknown"
}

// Store is banter's persistence. Implementations are safe for concurrent use.
type Store interface {
	// SaveMessage inserts or replaces a message. A deleted message stays deleted (a deletion
	// is final on Discord; a late save must not resurrect it). A message its author said
	// before running forget-me in the guild, or banter's reply to one, is refused
	// (ErrForgotten; forgets.go).
	SaveMessage(ctx context.Context, m Message) error
	// SaveMessages saves ms in one transaction, each as SaveMessage saves it, in order (a
	// later message with an id saved before replaces it as a later SaveMessage would). It
	// returns each message's result: nil, or ErrForgotten (wrapped, naming the message) for one
	// refused, and an error when the transaction failed: then none of ms was saved (the caller
	// may save them one by one). An empty ms is no write.
	SaveMessages(ctx context.Context, ms []Message) ([]error, error)
	// EditMessage updates a stored message's content; ErrNotFound when it was never stored.
	EditMessage(ctx context.Context, id, content string, editedAt time.Time) error
	// DeleteMessage marks a message deleted (and no longer unhandled); ErrNotFound when it was
	// never stored.
	DeleteMessage(ctx context.Context, id string) error
	// Message returns one message, deleted ones included (check Deleted).
	Message(ctx context.Context, id string) (Message, error)
	// RecentMessages returns up to limit non-deleted messages of a channel created before
	// `before` (all when zero), oldest first.
	RecentMessages(ctx context.Context, channelID string, before time.Time, limit int) ([]Message, error)

	// SearchMessages finds non-deleted messages matching q's words within q's guild and
	// channels, best matches first. A query without words finds nothing; a guild is required.
	SearchMessages(ctx context.Context, q SearchQuery) ([]Message, error)

	// SavePersona inserts or replaces a user's persona.
	SavePersona(ctx context.Context, p UserPersona) error
	// Personas returns the personas of the given users that exist, keyed by user id.
	Personas(ctx context.Context, userIDs []string) (map[string]UserPersona, error)

	// RecordPrompt notes one reply attempt (a call to the reply model) for a channel. The
	// ledger serves a sliding hour: the channel's rows more than an hour older than p.At may be
	// dropped. It refuses (ErrForgotten, nothing written) a row naming a member who ran
	// forget-me in p.GuildID at or after p.SaidAt, checked in the insert itself.
	RecordPrompt(ctx context.Context, p Prompt) error
	// CountPrompts counts a channel's reply attempts since a time, by kind.
	CountPrompts(ctx context.Context, channelID string, since time.Time) (map[PromptKind]int, error)
	// CountUserPrompts counts a channel's reply attempts made for userID since a time.
	CountUserPrompts(ctx context.Context, channelID, userID string, since time.Time) (int, error)

	// OpenTurn records an admitted addressed turn as open (before its reply is generated), or
	// reopens it with t's AnswerID (a coalesced turn, a restarted process answering it again).
	// It refuses (ErrForgotten, nothing written) a turn whose t.Author ran forget-me in its
	// guild at or after saying it, checked in the insert itself.
	OpenTurn(ctx context.Context, t Turn) error
	// CloseTurns records the outcome (TurnSent, TurnSkipped, TurnFailed, TurnExplained) of
	// turns; ids never opened are ignored.
	CloseTurns(ctx context.Context, ids []string, outcome string, at time.Time) error
	// OpenTurns returns a guild's open turns, oldest first.
	OpenTurns(ctx context.Context, guildID string) ([]Turn, error)
	// SetTurnReply records the text of an open turn's reply before it is sent (Turn.Reply); a
	// closed or unknown turn is left as it is.
	SetTurnReply(ctx context.Context, messageID, reply string) error
	// DropTurn deletes a turn's record (its message was refused: ErrForgotten); an unknown id
	// is no error.
	DropTurn(ctx context.Context, messageID string) error

	// Memory holds the facts banter remembers about people (facts.go).
	Memory
	// Embeddings finds facts and messages by meaning (embeddings.go).
	Embeddings
	// VoiceSessions keeps the voice sessions joined by command across restarts
	// (voicesessions.go).
	VoiceSessions
	// OpenVoiceTurns keeps the utterance the bot is answering in each guild's voice session
	// (voiceturns.go).
	OpenVoiceTurns
	// GuildsLeft records the servers banter was removed from and purges their data after a
	// grace period (guildsleft.go).
	GuildsLeft
	// UnhandledMessages marks the messages a catch-up stored before the pipeline handled them
	// (unhandled.go).
	UnhandledMessages

	// Prune deletes messages, turns and open voice turns created before cutoff and ledger rows
	// older than an hour before now, and reports how many messages went.
	Prune(ctx context.Context, cutoff, now time.Time) (int, error)
	// Close flushes and closes the store.
	Close() error
}

// OpenDriver opens the store named by driver ("sqlite": dsn is a file path; "postgres": dsn is a
// connection string) and brings its schema up to date.
func OpenDriver(ctx context.Context, driver, dsn string) (Store, error) {
	return OpenDriverWith(ctx, driver, dsn, PostgresOptions{})
}

// OpenDriverWith is OpenDriver with the Postgres driver's options (ignored by SQLite).
func OpenDriverWith(ctx context.Context, driver, dsn string, pg PostgresOptions) (Store, error) {
	switch driver {
	case "", "sqlite":
		return Open(ctx, dsn)
	case "postgres":
		return OpenPostgres(ctx, dsn, pg)
	}
	return nil, fmt.Errorf("store: unknown store.driver %q (want sqlite or postgres)", driver)
}

// reverse turns a newest-first page into oldest-first order.
func reverse(ms []Message) {
	for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
		ms[i], ms[j] = ms[j], ms[i]
	}
}

// addPromptCount adds n calls of the stored kind name to counts; unknown names are ignored.
func addPromptCount(counts map[PromptKind]int, kind string, n int) {
	switch kind {
	case PromptExplicit.String():
		counts[PromptExplicit] += n
	case PromptInitiative.String():
		counts[PromptInitiative] += n
	}
}
