package decision

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sepClass classifies the separators between two words. Stronger classes
// win when several separators sit between the same two words.
type sepClass uint8

const (
	sepSpace    sepClass = iota // whitespace or ignorable symbols only
	sepComma                    // , : – — (a vocative or clause break)
	sepSentence                 // . ! ? ; newline, or the start/end of the text
)

// token is one word of a text: a maximal run of letters, digits,
// apostrophes and underscores. Offsets are byte offsets into the text.
type token struct {
	start, end int
	pre        sepClass // separators before the word (sepSentence at the start)
	at         bool     // an '@' sits right before the word
	question   bool     // a '?' sits after the word, before the next one
}

// tokenizer walks the words of a string without allocating. Copying a
// tokenizer value forks the walk (used for look-ahead).
type tokenizer struct {
	s   string
	pos int
}

func isWordRune(r rune) bool {
	return r == '\'' || r == '’' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// next returns the next word. ok is false at the end of the text; post then
// reports the separators after the last word.
func (t *tokenizer) next() (tok token, ok bool) {
	class := sepSpace
	if t.pos == 0 {
		class = sepSentence
	}
	at := false
	for t.pos < len(t.s) {
		c := t.s[t.pos]
		if c < utf8.RuneSelf {
			if c == '\'' || c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
				break
			}
			at = false
			switch c {
			case ',', ':':
				class = max(class, sepComma)
			case '.', '!', '?', ';', '\n':
				class = sepSentence
			case '@':
				at = true
			}
			t.pos++
			continue
		}
		r, size := utf8.DecodeRuneInString(t.s[t.pos:])
		if isWordRune(r) {
			break
		}
		at = false
		switch r {
		case '–', '—', '，':
			class = max(class, sepComma)
		case '…', '。', '！', '？':
			class = sepSentence
		}
		t.pos += size
	}
	if t.pos >= len(t.s) {
		return token{}, false
	}
	tok.start, tok.pre, tok.at = t.pos, class, at
	for t.pos < len(t.s) {
		c := t.s[t.pos]
		if c < utf8.RuneSelf {
			if c == '\'' || c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
				t.pos++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(t.s[t.pos:])
		if !isWordRune(r) {
			break
		}
		t.pos += size
	}
	tok.end = t.pos
	// Peek the separators after the word for a question mark.
	for i := t.pos; i < len(t.s); i++ {
		c := t.s[i]
		if c == '?' {
			tok.question = true
			break
		}
		if c == ' ' || c == '\t' || c == '"' || c == ')' || c == '*' || c == '!' || c == '.' {
			continue
		}
		break
	}
	return tok, true
}

// peekSep returns the separator class between the current position and the
// next word (sepSentence if no word follows).
func (t tokenizer) peekSep() sepClass {
	nt, ok := t.next()
	if !ok {
		return sepSentence
	}
	return nt.pre
}

// trimApostrophes strips leading and trailing apostrophes of a word
// ("'banter'" quotes) and reports whether it ended in a possessive 's.
func trimWord(w string) (core string, possessive bool) {
	for len(w) > 0 && (w[0] == '\'' || w[0] == '_') {
		w = w[1:]
	}
	for strings.HasPrefix(w, "’") {
		w = w[len("’"):]
	}
	switch {
	case hasSuffixFold(w, "'s"):
		return w[:len(w)-2], true
	case hasSuffixFold(w, "’s"):
		return w[:len(w)-len("’s")], true
	}
	for len(w) > 0 && (w[len(w)-1] == '\'' || w[len(w)-1] == '_') {
		w = w[:len(w)-1]
	}
	for strings.HasSuffix(w, "’") {
		w = w[:len(w)-len("’")]
	}
	return w, false
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// inSet reports whether w equals (case-insensitively) one of set.
func inSet(w string, set []string) bool {
	for _, s := range set {
		if len(s) == len(w) && strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// Word lists. They are read-only; the matcher never changes them.
var (
	// greetingWords may precede a name at the start of a sentence without
	// turning the name into a mention ("hey banter", "ok so banter").
	greetingWords = []string{
		"hey", "hi", "hello", "heya", "hiya", "howdy", "yo", "oi", "ok", "okay", "alright",
		"please", "pls", "sup", "thanks", "thank", "thx", "ty", "morning", "evening",
		"afternoon", "night", "gm", "gn", "so", "well", "oh", "ah", "um", "uh", "and",
		"but", "dear", "sorry", "hm", "hmm", "lol", "wait",
	}
	// mergedGreetings may be glued to the name ("heybanter", "yobanter").
	mergedGreetings = []string{"hey", "hi", "hello", "yo", "oi", "ok", "okay", "heya", "hiya"}
	// aboutWords after a sentence-initial name (without a comma) make it a
	// statement about the bot: "banter is great", "banter said no".
	aboutWords = []string{
		"is", "was", "isn't", "isnt", "wasn't", "wasnt", "has", "had", "hasn't", "said", "says",
		"seems", "sounds", "sounded", "and", "or", "just", "thinks", "thought", "knows", "told",
		"also", "always", "never", "gets", "got", "keeps", "kept", "likes", "liked", "went",
		"did", "didn't", "does", "doesn't", "would", "wouldn't", "can't", "cannot", "won't",
		"bot", "again", "too", "itself", "here", "there",
	}
	// fillerWords carry no content on their own ("uh huh", "yeah ok").
	fillerWords = []string{
		"uh", "um", "umm", "uhm", "er", "erm", "ah", "oh", "huh", "hm", "hmm", "mm", "mhm",
		"mmhm", "yeah", "yea", "yep", "yup", "yes", "no", "nope", "nah", "ok", "okay", "k",
		"right", "sure", "cool", "nice", "wow", "lol", "haha", "hah", "ha", "heh", "so",
		"well", "like", "alright", "oops", "whoa", "ooh", "aha", "true", "damn", "hey", "hi",
		"hello", "yo", "oi", "thanks", "thank", "you", "bye", "gotcha", "indeed", "exactly",
		"totally", "okey", "dokey", "uhh", "umm", "ahh", "ohh", "i", "see", "hmmm",
	}
	// questionWords open a question even when the ASR drops the '?'.
	questionWords = []string{
		"what", "what's", "whats", "why", "how", "how's", "who", "who's", "where", "where's",
		"when", "which", "can", "could", "would", "should", "will", "is", "are", "do", "does",
		"did", "have", "has",
	}
)
