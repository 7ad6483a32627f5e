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
	quote      bool     // an odd number of double quotes sits before the word
	question   bool     // a '?' sits after the word, before the next one
	mention    bool     // a user mention (<@123>), read as a word (tokenizer.mentions)
}

// tokenizer walks the words of a string without allocating. Copying a
// tokenizer value forks the walk (used for look-ahead).
type tokenizer struct {
	s   string
	pos int
	// mentions: user mentions (<@123>, <@!123>) are words, not skipped.
	mentions bool
}

func isWordRune(r rune) bool {
	return r == '\'' || r == '’' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Byte classes of the tokenizer.
const (
	bcIgnore   uint8 = iota // spaces and symbols that separate words only
	bcWord                  // ASCII letters, digits, ' and _
	bcComma                 // , :
	bcSentence              // . ! ? ; newline
	bcAt                    // @
	bcHigh                  // first or continuation byte of a multi-byte rune
	bcAngle                 // < (may open Discord markup)
	bcQuote                 // " (a double quote)
	bcTick                  // ` (may open inline code or a code block)
)

// markupLen returns the length of the Discord markup at the start of s
// ("<@123>", "<:name:123>", "<a:name:123>", "<#123>", "<t:1700000000:R>",
// "</cmd:123>"), or 0.
func markupLen(s string) int {
	if len(s) < 3 || s[0] != '<' {
		return 0
	}
	switch s[1] {
	case '@', '#', ':', 'a', 't', '/':
	default:
		return 0
	}
	for i := 2; i < len(s) && i < 128; i++ {
		switch c := s[i]; {
		case c == '>':
			return i + 1
		case c == ' ' || c == '\n' || c == '<':
			return 0
		}
	}
	return 0
}

// userMention reports whether markup is a user mention: <@123> or <@!123>.
func userMention(markup string) bool {
	if len(markup) < 4 || markup[1] != '@' {
		return false
	}
	digits := markup[2 : len(markup)-1]
	if digits[0] == '!' {
		digits = digits[1:]
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return len(digits) > 0
}

// byteClasses classifies every byte value; it is built once and only read.
var byteClasses = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = bcHigh
		case c == '\'' || c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9'):
			t[c] = bcWord
		case c == ',' || c == ':':
			t[c] = bcComma
		case c == '.' || c == '!' || c == '?' || c == ';' || c == '\n':
			t[c] = bcSentence
		case c == '@':
			t[c] = bcAt
		case c == '<':
			t[c] = bcAngle
		case c == '"':
			t[c] = bcQuote
		case c == '`':
			t[c] = bcTick
		}
	}
	return t
}()

// next returns the next word. ok is false at the end of the text.
func (t *tokenizer) next() (tok token, ok bool) {
	for {
		class := sepSpace
		if t.pos == 0 {
			class = sepSentence
		}
		pos, class, at, quote := t.skipSeparators(t.pos, class)
		s := t.s
		if pos >= len(s) {
			t.pos = pos
			return token{}, false
		}
		tok.start, tok.pre, tok.at, tok.quote = pos, class, at, quote
		if s[pos] == '<' { // a user mention, in mentions mode
			tok.end, tok.mention = pos+markupLen(s[pos:]), true
			t.pos = tok.end
			tok.question = questionAfter(s, tok.end)
			return tok, true
		}
		pos = wordEnd(s, pos)
		if strings.HasPrefix(s[pos:], "://") {
			// A URL is not words: skip it up to the next whitespace.
			for pos < len(s) && s[pos] != ' ' && s[pos] != '\n' && s[pos] != '\t' {
				pos++
			}
			t.pos = pos
			tok = token{}
			continue
		}
		tok.end = pos
		t.pos = pos
		tok.question = questionAfter(s, pos)
		return tok, true
	}
}

// skipSeparators moves from pos to the start of the next word and returns
// where it starts, the strongest separator crossed (at least class), whether
// an '@' stands right before it and whether it is inside quotes (the quote
// state is the tokenizer's scan so far: it toggles from the text start).
func (t *tokenizer) skipSeparators(pos int, class sepClass) (int, sepClass, bool, bool) {
	at, quote := false, false
	s := t.s
	for pos < len(s) {
		switch byteClasses[s[pos]] {
		case bcWord:
			return pos, class, at, quote
		case bcIgnore:
			at = false
		case bcComma:
			at = false
			class = max(class, sepComma)
		case bcSentence:
			at = false
			class = sepSentence
		case bcAt:
			at = true
		case bcAngle:
			// Discord markup (<@id>, <#id>, <:emoji:id>, <t:123:R>, </cmd:id>)
			// is not words: skip it whole.
			at = false
			if n := markupLen(s[pos:]); n > 0 {
				if t.mentions && userMention(s[pos:pos+n]) {
					return pos, class, at, quote
				}
				pos += n
				continue
			}
		case bcQuote:
			at, quote = false, !quote
		case bcTick:
			// Code (`x`, ```block```) is not words: skip it up to the
			// matching run of backticks, if there is one.
			at = false
			if n := codeLen(s[pos:]); n > 0 {
				pos += n
				continue
			}
		case bcHigh:
			r, size := utf8.DecodeRuneInString(s[pos:])
			if isWordRune(r) {
				return pos, class, at, quote
			}
			at = false
			switch r {
			case '“', '”':
				quote = !quote
			case '–', '—', '，', '、':
				class = max(class, sepComma)
			case '…', '。', '！', '？':
				class = sepSentence
			}
			pos += size
			continue
		}
		pos++
	}
	return pos, class, at, quote
}

// wordEnd returns where the word starting at pos ends.
func wordEnd(s string, pos int) int {
	for pos < len(s) {
		c := byteClasses[s[pos]]
		if c == bcWord || (joiner(s[pos]) && pos > 0 && joinsBefore(s, pos) && pos+1 < len(s) && joinsAt(s, pos+1)) {
			// '.', '/' and '-' inside a word join it: "banter.yaml",
			// "cmd/banter", "banter-bot" are single words.
			pos++
			continue
		}
		if c != bcHigh {
			break
		}
		r, size := utf8.DecodeRuneInString(s[pos:])
		if !isWordRune(r) {
			break
		}
		pos += size
	}
	return pos
}

// joinsAt and joinsBefore report whether an ASCII letter or digit starts
// s[i] (ends s[:i]), or a letter that folds to one ("K", U+212A, is "k";
// "ſ" is "s"), so that a name joins words the same way in any case form.
func joinsAt(s string, i int) bool {
	if s[i] < utf8.RuneSelf {
		return isAlnum(s[i])
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return foldsToASCII(r)
}

func joinsBefore(s string, i int) bool {
	if s[i-1] < utf8.RuneSelf {
		return isAlnum(s[i-1])
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return foldsToASCII(r)
}

// questionAfter reports whether a question mark follows the word that ends
// at pos, across spaces, closing quotes and emphasis.
func questionAfter(s string, pos int) bool {
	for i := pos; i < len(s); i++ {
		c := s[i]
		if c == '?' {
			return true
		}
		if c != ' ' && c != '"' && c != ')' && c != '*' && c != '!' && c != '.' && c != '\t' {
			return false
		}
	}
	return false
}

// joiner reports whether c joins two words it sits between.
func joiner(c byte) bool { return c == '.' || c == '/' || c == '-' }

func isAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// codeLen returns the length of the code span or block at the start of s
// (from the opening run of backticks through the matching closing run), or
// 0 when it is not closed.
func codeLen(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	if i := strings.Index(s[n:], s[:n]); i >= 0 {
		return n + i + n
	}
	return 0
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

// trimWord strips leading and trailing apostrophes of a word
// ("'banter'" quotes) and reports whether it ended in a possessive 's.
func trimWord(w string) (core string, possessive bool) {
	if n := len(w); n > 0 {
		// Fast path: a plain word (no quotes, no possessive).
		f, l := w[0], w[n-1]
		plainEnd := l != '\'' && l != '_' && l < utf8.RuneSelf && (n < 2 || (l != 's' && l != 'S') || (w[n-2] != '\'' && w[n-2] != 0x99))
		if f != '\'' && f != '_' && f < utf8.RuneSelf && plainEnd {
			return w, false
		}
	}
	for len(w) > 0 && (w[0] == '\'' || w[0] == '_') {
		w = w[1:]
	}
	for strings.HasPrefix(w, "’") {
		w = w[len("’"):]
	}
	// A possessive ending in any case form ("'S", "'ſ"), as names fold.
	if i := foldSuffixStart(w, "'s"); i >= 0 {
		return w[:i], true
	}
	if i := foldSuffixStart(w, "’s"); i >= 0 {
		return w[:i], true
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
