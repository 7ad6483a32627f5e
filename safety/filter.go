// Package safety holds banter's content rules: which messages may enter a model's context
// (permissions.blockedUserIds, safety.banWords) and the scrubbing of ban words from what the
// bot says. Text and voice apply the same Filter at every entry into the context, so a message
// that one path refuses cannot reach the model through another (a REST lookup, a backfill, a
// catch-up, a transcript, or a row stored before a config reload).
package safety

import (
	"slices"

	"github.com/banterbot/banter/config"
)

// Reason says why a message is kept out of the context.
type Reason string

// Reasons for Exclude. They are the values logged as message_ignored reason=….
const (
	// Allowed: the message may be shown.
	Allowed Reason = ""
	// BlockedUser: the author is in permissions.blockedUserIds.
	BlockedUser Reason = "blocked_user"
	// BanWord: the content contains a safety.banWords word or phrase.
	BanWord Reason = "ban_word"
)

// Filter applies permissions.blockedUserIds and safety.banWords. It is immutable and safe
// for concurrent use; build one per configuration.
type Filter struct {
	banned  WordList
	blocked []string
}

// New returns a Filter refusing the given ban words and blocked user ids.
func New(banWords, blockedUserIDs []string) *Filter {
	return &Filter{banned: NewWordList(banWords), blocked: slices.Clone(blockedUserIDs)}
}

// ForConfig returns the Filter of a configuration.
func ForConfig(c *config.Config) *Filter {
	return New(c.Safety.BanWords, c.Permissions.BlockedUserIDs)
}

// Exclude reports why a message by authorID with content must stay out of a model's context,
// or Allowed. The bot's own messages (self) are never excluded: what it said is scrubbed on
// the way out instead.
func (f *Filter) Exclude(authorID, content string, self bool) Reason {
	switch {
	case self:
		return Allowed
	case authorID != "" && slices.Contains(f.blocked, authorID):
		return BlockedUser
	case f.banned.Contains(content):
		return BanWord
	}
	return Allowed
}

// Blocked reports whether authorID is in permissions.blockedUserIds.
func (f *Filter) Blocked(authorID string) bool {
	return authorID != "" && slices.Contains(f.blocked, authorID)
}

// BlockedIn reports whether authorID is in c's permissions.blockedUserIds, as
// Filter.Blocked does, without building a Filter: it allocates nothing, for
// checks on a per-frame path (voice barge-in).
func BlockedIn(c *config.Config, authorID string) bool {
	return authorID != "" && slices.Contains(c.Permissions.BlockedUserIDs, authorID)
}

// Scrub replaces every ban word in s with asterisks (for what the bot says).
func (f *Filter) Scrub(s string) string { return f.banned.Scrub(s) }

// Trips reports whether s holds a ban word (output the bot must not send).
func (f *Filter) Trips(s string) bool { return f.banned.Contains(s) }
