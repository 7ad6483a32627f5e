package store

import (
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// SearchQuery asks the message memory for stored messages that match some words. It never
// crosses guilds, and the caller names the channels it may search: the store only knows the
// channels the bot reads, not who may see them, so widening the scope is the caller's decision.
type SearchQuery struct {
	// GuildID is required: results come from this guild only.
	GuildID string
	// ChannelIDs restricts the search to these channels; empty searches the whole guild.
	ChannelIDs []string
	// Text is what to look for, as a person would type it (not a query language): its words
	// are matched case-insensitively, any of them, best matches first.
	Text string
	// Before excludes messages created at or after it (zero: no bound).
	Before time.Time
	// ExcludeAuthorIDs drops messages by these authors (blocked users, the bot itself).
	ExcludeAuthorIDs []string
	// Limit caps the results (at most MaxSearchResults; 0 means 5).
	Limit int
}

// MaxSearchResults bounds SearchQuery.Limit.
const MaxSearchResults = 50

// maxSearchTerms and maxTermLen bound the work one query can ask for.
const (
	maxSearchTerms = 16
	maxTermLen     = 64
)

// searchTerms splits text into at most maxSearchTerms lower-case words of letters and digits,
// without repeats. Anything else (quotes, operators, punctuation) separates words, so no
// query-language syntax reaches the database.
func searchTerms(text string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(foldText(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(f) > maxTermLen || seen[f] {
			continue
		}
		seen[f] = true
		terms = append(terms, f)
		if len(terms) == maxSearchTerms {
			break
		}
	}
	return terms
}

func (q SearchQuery) limit() int {
	switch {
	case q.Limit <= 0:
		return 5
	case q.Limit > MaxSearchResults:
		return MaxSearchResults
	}
	return q.Limit
}

// foldText lower-cases text and removes its diacritics ("Crème" → "creme"), so a search matches
// however accents were typed. SQLite's unicode61 tokenizer does the same inside the index; the
// Postgres driver stores this folded text in its search column.
func foldText(text string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	folded, _, err := transform.String(t, text)
	if err != nil {
		folded = text
	}
	return strings.ToLower(folded)
}
