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

// Byte classes of the tokenizer.
const (
	bcIgnore   uint8 = iota // spaces and symbols that separate words only
	bcWord                  // ASCII letters, digits, ' and _
	bcComma                 // , :
	bcSentence              // . ! ? ; newline
	bcAt                    // @
	bcHigh                  // first or continuation byte of a multi-byte rune
	bcAngle                 // < (may open Discord markup)
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
		}
	}
	return t
}()

// next returns the next word. ok is false at the end of the text.
func (t *tokenizer) next() (tok token, ok bool) {
	class := sepSpace
	if t.pos == 0 {
		class = sepSentence
	}
	at := false
	s := t.s
	pos := t.pos
scan:
	for pos < len(s) {
		switch byteClasses[s[pos]] {
		case bcWord:
			break scan
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
			if n := markupLen(s[pos:]); n > 0 {
				at = false
				pos += n
				continue
			}
			at = false
		case bcHigh:
			r, size := utf8.DecodeRuneInString(s[pos:])
			if isWordRune(r) {
				break scan
			}
			at = false
			switch r {
			case '–', '—', '，':
				class = max(class, sepComma)
			case '…', '。', '！', '？':
				class = sepSentence
			}
			pos += size
			continue
		}
		pos++
	}
	if pos >= len(s) {
		t.pos = pos
		return token{}, false
	}
	tok.start, tok.pre, tok.at = pos, class, at
	for pos < len(s) {
		c := byteClasses[s[pos]]
		if c == bcWord {
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
	if strings.HasPrefix(s[pos:], "://") {
		// A URL is not words: skip it up to the next whitespace.
		for pos < len(s) && s[pos] != ' ' && s[pos] != '\n' && s[pos] != '\t' {
			pos++
		}
		t.pos = pos
		return t.next()
	}
	tok.end = pos
	t.pos = pos
	// Peek the separators after the word for a question mark.
	for i := pos; i < len(s); i++ {
		c := s[i]
		if c == '?' {
			tok.question = true
			break
		}
		if c != ' ' && c != '"' && c != ')' && c != '*' && c != '!' && c != '.' && c != '\t' {
			break
		}
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

// wordFlag marks the word lists a word belongs to.
type wordFlag uint8

const (
	flagGreeting wordFlag = 1 << iota
	flagMergedGreeting
	flagAbout
	flagFiller
	flagNoise
	flagQuestion
)

// wordEntry is one word of the lists below with the lists it is in.
type wordEntry struct {
	word string
	flag wordFlag
}

// wordTable indexes the word lists below by first letter (0-25; 26 for
// anything else). It is built once and only read afterwards. Buckets hold a
// handful of words, which beats hashing for these short lookups.
var wordTable = func() (t [27][]wordEntry) {
	for _, l := range []struct {
		words []string
		flag  wordFlag
	}{
		{greetingWords, flagGreeting}, {mergedGreetings, flagMergedGreeting}, {aboutWords, flagAbout},
		{fillerWords, flagFiller}, {noiseWords, flagNoise}, {questionWords, flagQuestion},
	} {
		for _, w := range l.words {
			b := &t[bucket(w[0])]
			found := false
			for i := range *b {
				if (*b)[i].word == w {
					(*b)[i].flag |= l.flag
					found = true
				}
			}
			if !found {
				*b = append(*b, wordEntry{w, l.flag})
			}
		}
	}
	return t
}()

func bucket(c byte) int {
	if 'a' <= c && c <= 'z' {
		return int(c - 'a')
	}
	return 26
}

const maxListWord = 16 // longer words are in no list

// lookupWord returns the list flags of w (case-insensitive; ’ counts as ').
// It does not allocate.
func lookupWord(w string) wordFlag {
	if len(w) > maxListWord*3 {
		return 0
	}
	var buf [maxListWord]byte
	n := 0
	for i := 0; i < len(w); i++ {
		if n == len(buf) {
			return 0
		}
		c := w[i]
		switch {
		case c >= utf8.RuneSelf:
			if strings.HasPrefix(w[i:], "’") {
				buf[n] = '\''
				n++
				i += len("’") - 1
				continue
			}
			return 0
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	if n == 0 {
		return 0
	}
	for _, e := range wordTable[bucket(buf[0])] {
		if len(e.word) == n && e.word == string(buf[:n]) {
			return e.flag
		}
	}
	return 0
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
