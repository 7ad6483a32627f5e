// Package world is the state of the simulated Discord: users, guilds,
// members, roles, channels and threads, messages (with their attachments
// and reactions), typing, voice states, application commands and
// interactions, with Discord's rules for changing them (who may edit or
// delete what, reply resolution, mentions, nonces, lengths) and Discord's
// JSON error codes when a change is refused.
//
// It does no I/O. The transports of package discordsim (REST, the gateway,
// voice signalling) are thin adapters over it: they decode a request, call
// one World method, and render what it returns; every change is also
// reported as an Event, which the gateway turns into dispatches.
//
// Lock discipline: one mutex guards the whole world. Every exported method
// of World takes it for the duration of the call and returns values, never
// pointers into the state. Observers (Observe) are called with the lock
// held, in commit order, with a View for consistent reads; they must not
// call World methods (they would deadlock) and must not block. Read runs a
// function the same way. A transport that keeps state of its own (the
// gateway's sessions) takes its own lock inside an observer or Read, never
// the other way round: the order is always world, then transport.
package world

import (
	"sync"
	"time"
)

// Config sets up a World.
type Config struct {
	// Now is the clock of message and member timestamps (default time.Now).
	Now func() time.Time
	// IDNow is the clock snowflakes are made from (default Now). Ids stay
	// strictly increasing even when it stands still.
	IDNow func() time.Time
	// BotName is the application's bot user's name (default "simbot").
	BotName string
	// BotToken fixes the bot's token (default: a random Discord-shaped one).
	BotToken string
}

// Observer is told about every change, in commit order, with the world
// locked (see the package doc).
type Observer func(v *View, e Event)

// World is the simulated Discord's state. Build it with New; it is safe for
// concurrent use.
type World struct {
	now func() time.Time
	ids snowflakes

	mu        sync.Mutex // guards everything below
	observers []Observer
	st        state
}

// state is the world's data; every field is guarded by World.mu.
type state struct {
	users        map[UserID]*user
	tokens       map[string]UserID
	bot          UserID
	guilds       map[GuildID]*guild
	guildOrder   []GuildID
	channels     map[ChannelID]*channel
	messages     map[MessageID]*Message
	files        map[AttachmentID]*file
	sent         []*Message // created by clients through REST or interactions, in order
	typing       []TypingEvent
	commands     map[CommandID]*Command
	interactions map[InteractionID]*interaction
}

// New builds a world holding the application's bot user.
func New(c Config) *World {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.IDNow == nil {
		c.IDNow = c.Now
	}
	if c.BotName == "" {
		c.BotName = "simbot"
	}
	w := &World{now: c.Now, ids: snowflakes{now: c.IDNow}}
	w.st = state{
		users:        map[UserID]*user{},
		tokens:       map[string]UserID{},
		guilds:       map[GuildID]*guild{},
		channels:     map[ChannelID]*channel{},
		messages:     map[MessageID]*Message{},
		files:        map[AttachmentID]*file{},
		commands:     map[CommandID]*Command{},
		interactions: map[InteractionID]*interaction{},
	}
	w.st.bot = w.createUserLocked(c.BotName, true, true)
	if c.BotToken != "" {
		u := w.st.users[w.st.bot]
		delete(w.st.tokens, u.token)
		u.token = c.BotToken
		w.st.tokens[c.BotToken] = u.id
	}
	return w
}

// Observe adds an observer. Call it before the world is used concurrently.
func (w *World) Observe(o Observer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observers = append(w.observers, o)
}

// Read runs fn with the world locked: every query through v sees one
// consistent state. fn must not call World methods.
func (w *World) Read(fn func(v *View)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(&View{st: &w.st})
}

// Now is the world's clock.
func (w *World) Now() time.Time { return w.now() }

// emitLocked tells every observer about a change. w.mu must be held.
func (w *World) emitLocked(e Event) {
	v := &View{st: &w.st}
	for _, o := range w.observers {
		o(v, e)
	}
}

// lock takes the world's lock and returns a View of it, for the locked
// method bodies: `v := w.lock(); defer w.mu.Unlock()`.
func (w *World) lock() *View {
	w.mu.Lock()
	return &View{st: &w.st}
}
