package world

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Emoji is a reaction's emoji: a Unicode emoji (Name only) or a custom
// one (ID and Name).
type Emoji struct {
	ID       string
	Name     string
	Animated bool
}

// String is the emoji as REST paths name it: the Unicode emoji, or
// "name:id" for a custom one.
func (e Emoji) String() string {
	if e.ID != "" {
		return e.Name + ":" + e.ID
	}
	return e.Name
}

// Reaction is one emoji's reactions on a message, users in the order they
// reacted.
type Reaction struct {
	Emoji Emoji
	Users []UserID
}

// MaxReactions is how many different emojis one message may carry.
const MaxReactions = 20

// ParseEmoji reads an emoji as a REST path names it (already unescaped):
// a Unicode emoji, or "name:id" for a custom emoji. The simulated guilds
// have no custom emojis, so every custom one is unknown (10014), as are
// strings that are not emoji.
// https://discord.com/developers/docs/resources/message#create-reaction
func ParseEmoji(s string) (Emoji, error) {
	if name, id, ok := strings.Cut(s, ":"); ok && name != "" && id != "" {
		return Emoji{}, ErrUnknownEmoji
	}
	if s == "" || len(s) > 64 || !utf8.ValidString(s) {
		return Emoji{}, ErrUnknownEmoji
	}
	symbol := false
	for _, r := range s {
		switch {
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsSpace(r) || r == ':'):
			return Emoji{}, ErrUnknownEmoji
		case unicode.Is(unicode.So, r), r >= 0x1f1e6 && r <= 0x1f1ff, r == 0x20e3:
			symbol = true
		}
	}
	if !symbol {
		return Emoji{}, ErrUnknownEmoji
	}
	return Emoji{Name: s}, nil
}

// reactionTargetLocked finds a live, visible message of channel ch for a
// user who may react there.
func (w *World) reactionTargetLocked(v *View, ch ChannelID, id MessageID, u UserID) (*Message, error) {
	if _, err := v.ChannelFor(ch, u); err != nil {
		return nil, err
	}
	m := w.st.messages[id]
	if m == nil || m.Deleted || m.ChannelID != ch || m.Ephemeral() {
		return nil, ErrUnknownMessage
	}
	return m, nil
}

// AddReaction has u react to a message with e; reacting twice with the
// same emoji changes nothing, as on Discord.
func (w *World) AddReaction(ch ChannelID, id MessageID, u UserID, e Emoji) error {
	v := w.lock()
	defer w.mu.Unlock()
	m, err := w.reactionTargetLocked(v, ch, id, u)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(m.Reactions, func(r Reaction) bool { return r.Emoji == e })
	switch {
	case i >= 0 && slices.Contains(m.Reactions[i].Users, u):
		return nil
	case i >= 0:
		m.Reactions[i].Users = append(m.Reactions[i].Users, u)
	case len(m.Reactions) >= MaxReactions:
		return &Error{400, CodeMaxReactions, "Maximum number of reactions reached (20)"}
	default:
		m.Reactions = append(m.Reactions, Reaction{Emoji: e, Users: []UserID{u}})
	}
	w.emitLocked(ReactionAdded{Message: m.clone(), User: u, Emoji: e})
	return nil
}

// RemoveReaction takes user's reaction e off a message, as by (the user
// itself, or the bot, which has Manage Messages). A reaction that is not
// there is no error, as on Discord.
func (w *World) RemoveReaction(ch ChannelID, id MessageID, by, user UserID, e Emoji) error {
	v := w.lock()
	defer w.mu.Unlock()
	m, err := w.reactionTargetLocked(v, ch, id, by)
	if err != nil {
		return err
	}
	if by != user && by != w.st.bot {
		return ErrMissingPermissions
	}
	i := slices.IndexFunc(m.Reactions, func(r Reaction) bool { return r.Emoji == e })
	if i < 0 || !slices.Contains(m.Reactions[i].Users, user) {
		return nil
	}
	m.Reactions[i].Users = slices.DeleteFunc(m.Reactions[i].Users, func(x UserID) bool { return x == user })
	if len(m.Reactions[i].Users) == 0 {
		m.Reactions = slices.Delete(m.Reactions, i, i+1)
	}
	w.emitLocked(ReactionRemoved{Message: m.clone(), User: user, Emoji: e})
	return nil
}

// ClearReactions removes every reaction of a message, or (e non-nil)
// every reaction with one emoji; only the bot may (Manage Messages).
func (w *World) ClearReactions(ch ChannelID, id MessageID, by UserID, e *Emoji) error {
	v := w.lock()
	defer w.mu.Unlock()
	m, err := w.reactionTargetLocked(v, ch, id, by)
	if err != nil {
		return err
	}
	if by != w.st.bot {
		return ErrMissingPermissions
	}
	if e == nil {
		m.Reactions = nil
	} else {
		m.Reactions = slices.DeleteFunc(m.Reactions, func(r Reaction) bool { return r.Emoji == *e })
	}
	w.emitLocked(ReactionsCleared{Message: m.clone(), Emoji: e})
	return nil
}

// ReactionUsers lists who reacted with e (GET …/reactions/{emoji}), by
// user id after after, at most limit.
func (w *World) ReactionUsers(ch ChannelID, id MessageID, by UserID, e Emoji, after UserID, limit int) ([]UserID, error) {
	v := w.lock()
	defer w.mu.Unlock()
	m, err := w.reactionTargetLocked(v, ch, id, by)
	if err != nil {
		return nil, err
	}
	var users []UserID
	for _, r := range m.Reactions {
		if r.Emoji == e {
			users = slices.Clone(r.Users)
		}
	}
	slices.SortFunc(users, func(a, b UserID) int { return cmpSnowflake(string(a), string(b)) })
	out := []UserID{}
	for _, u := range users {
		if (after == "" || SnowflakeLess(string(after), string(u))) && len(out) < limit {
			out = append(out, u)
		}
	}
	return out, nil
}

func cmpSnowflake(a, b string) int {
	switch {
	case SnowflakeLess(a, b):
		return -1
	case a == b:
		return 0
	}
	return 1
}
