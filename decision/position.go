package decision

import (
	"strings"
	"unicode"
)

// How the name matcher reads the position of a name. A name addresses the
// bot when it stands where a vocative stands in speech:
//
//   - at the start of a sentence, possibly after greetings ("hey", "thanks",
//     "hola") or discourse markers ("ok so"), unless a statement about it
//     follows ("banter is great", "ok so banter aside");
//   - right after a comma, closing the clause or opening a new one;
//   - closing a clause ("thanks for the help banter", "can you hear me
//     banter") or interrupting one before a new clause starts ("I need a
//     hand here banter can you ..."), when the word before it does not take
//     it as an argument. Determiners, possessives, quantifiers, common
//     adjectives, prepositions, object-taking and reporting verbs,
//     auxiliaries and conjunctions do ("the banter", "good banter", "about
//     banter", "love banter", "is banter", "he said banter stop"). After an
//     open-class word ("the weather banter") the name is a vocative when
//     the clause speaks to someone (it greets, thanks, asks, orders, or says
//     "you"), or when that word does not itself follow a determiner,
//     adjective, preposition, verb or conjunction ("that's hilarious
//     zorvik" but not "I love office banter").
//
// Quoted names, link texts and possessives are mentions.

// sentence is what the matcher knows about the sentence it is reading, up
// to the current word.
type sentence struct {
	lead       bool // only greetings and discourse markers so far
	greeted    bool // a greeting or thanks opened the sentence
	discourse  bool // a discourse marker opened it ("ok", "so")
	addressing bool // the clause greets, asks, orders, or says "you"
	prevThank  bool // the previous word was "thank"
	// other: the sentence opens by calling someone else ("mike can you
	// reset banter"); whObject: it opens "what did you …", so a verb at
	// its end has its object already ("what did you say banter").
	other, whObject bool
	whLike          bool // it opens "what" or "how": "what's it like banter"
	words           int  // words read in this sentence
	// prev and prev2 are the two words before the current one in this
	// sentence ("" when there are none).
	prev, prev2 string
	// inDouble and inSingle: inside "double" or 'single' quotes (kept
	// across sentences; checked for a closing quote before they count).
	inDouble, inSingle bool
	// voice: a speech transcript; weakGreet: it opened with "a", which a
	// recognizer writes for "hey" ("a banter what time is it") but which
	// is also an article ("a banter session").
	voice, weakGreet bool
}

func (st *sentence) newSentence() {
	st.lead, st.greeted, st.discourse, st.addressing, st.prevThank = true, false, false, false, false
	st.other, st.whObject, st.whLike, st.words = false, false, false, 0
	st.prev, st.prev2 = "", ""
	st.weakGreet = false
}

// openSingle notes a single quote that opens before the word raw.
func (st *sentence) openSingle(raw string) {
	switch {
	case raw == "'":
		st.inSingle = !st.inSingle
	case raw[0] == '\'':
		st.inSingle = true
	}
}

// closeSingle notes a single quote that closes after the word raw.
func (st *sentence) closeSingle(raw string) {
	if len(raw) > 1 && raw[len(raw)-1] == '\'' {
		st.inSingle = false
	}
}

// advance takes word (tz is positioned after it) into the sentence.
func (st *sentence) advance(s string, tz tokenizer, word string) {
	if st.lead {
		f := lookupWord(word)
		switch {
		case st.voice && st.words == 0 && len(word) == 1 && isWord(word, "a"):
			st.greeted, st.addressing, st.weakGreet = true, true, true
		case f&flagGreeting != 0 || (st.prevThank && isWord(word, "you", "u", "ya")) ||
			(len(word) == 4 && isWord(word, "good") && nextIsDaytime(s, tz)):
			st.greeted, st.addressing = true, true
		case f&flagDiscourse != 0:
			st.discourse = true
		case st.greeted && isWord(word, "a", "lot", "very", "much", "so", "bunch", "again", "tons", "loads"):
			// "thanks a lot", "thank you so much": still the greeting.
		default:
			st.lead = false
			if f&(flagQuestion|flagWh|flagImperative|flagAddrStart|flagSecond) != 0 {
				st.addressing = true
			}
			st.other = (f == 0 && callsSomeone(s, tz)) || f&flagIndefinite != 0
			st.whLike = isWord(word, "what", "what's", "whats", "how", "how's", "hows")
		}
		st.prevThank = len(word) == 5 && isWord(word, "thank")
	} else {
		if !st.addressing && maybeSecond(word) && lookupWord(word)&flagSecond != 0 {
			st.addressing = true
		}
		if st.words == 2 && len(st.prev2) <= 5 && isWord(st.prev2, "what", "who", "whom", "which") && lookupWord(st.prev)&flagAux != 0 &&
			lookupWord(word)&flagSubject != 0 {
			st.whObject = true // "what did you", "what do you"
		}
	}
	st.words++
	st.prev2, st.prev = st.prev, word
}

// callsSomeone reports whether the open-class word that starts a sentence
// (tz is positioned after it) calls someone: a comma, a question or "you"
// follows ("mike, ...", "mike can you ...", "sam what do you think").
func callsSomeone(s string, tz tokenizer) bool {
	nt, ok := tz.next()
	if !ok {
		return false
	}
	if nt.pre == sepComma {
		return true
	}
	if nt.pre != sepSpace {
		return false
	}
	w := trimQuotes(s[nt.start:nt.end])
	f := lookupWord(w)
	if f&(flagWh|flagSecond) != 0 {
		return true
	}
	if f&flagAux != 0 {
		nt2, ok := tz.next()
		return ok && nt2.pre == sepSpace && lookupWord(trimQuotes(s[nt2.start:nt2.end]))&flagSubject != 0
	}
	return false
}

// maybeSecond is a cheap pre-check for second-person words.
func maybeSecond(w string) bool {
	return len(w) > 0 && len(w) <= 8 && (w[0]|0x20 == 'y' || w[0]|0x20 == 'u')
}

// nextIsDaytime reports whether the next word makes "good" a greeting:
// "good morning", "good night".
func nextIsDaytime(s string, tz tokenizer) bool {
	nt, ok := tz.next()
	if !ok || nt.pre != sepSpace {
		return false
	}
	w := trimQuotes(s[nt.start:nt.end])
	return isWord(w, "morning", "evening", "afternoon", "night", "day", "nite")
}

// following describes what comes after a name.
type following struct {
	boundary bool // punctuation, the end, or a trailing "lol"/"please"
	list     bool // ", and" / ", or": the name is an item of a list
	about    bool // a statement about the name: "is great", "aside", "and I"
	opener   bool // a new clause: a wh-word, "you", "can you", "please", an imperative
	second   bool // the next word is "you", "your"…
}

// readFollowing reads the word(s) after a name; tz is positioned after it.
func readFollowing(s string, tz tokenizer) (n following) {
	nt, ok := tz.next()
	if !ok {
		n.boundary = true
		return n
	}
	w := trimQuotes(s[nt.start:nt.end])
	if nt.pre >= sepComma {
		n.boundary = true
		n.list = nt.pre == sepComma && isWord(w, "and", "or")
		return n
	}
	f := lookupWord(w)
	inversion, clause := false, false
	if f&(flagAux|flagQuestion|flagSubject) != 0 {
		if nt2, ok := tz.next(); ok && nt2.pre == sepSpace {
			f2 := lookupWord(trimQuotes(s[nt2.start:nt2.end]))
			// "banter is it raining", "banter can you": a question, not a
			// statement; "zorvik that was perfect": a new clause.
			inversion = f&(flagAux|flagQuestion) != 0 && f2&flagSubject != 0
			clause = f&flagSubject != 0 && f2&flagAux != 0
		}
	}
	n.second = f&flagSecond != 0
	n.boundary = f&flagTail != 0
	opening := f&(flagWh|flagOpener|flagGreeting|flagImperative|flagTail|flagQuestion) != 0
	n.about = (f&flagAbout != 0 || (!opening && (statementForm(w) || cjkStatement(w)))) && !inversion
	n.opener = inversion || clause || f&(flagWh|flagOpener|flagGreeting|flagImperative|flagTail) != 0
	return n
}

// position reads the position of a name that ends at end (tok is its first
// word, tz is positioned after it) and returns it with its confidence;
// PositionMention when the name does not address anyone.
// A lookalike (a speech-recognition variant) is read more strictly.
func (st *sentence) position(s string, tok token, tz tokenizer, end int, possessive, lookalike bool) (Position, float64) {
	switch {
	case possessive, st.quoted(s, end), strings.HasPrefix(s[end:], "]("):
		return PositionMention, confTopic // "banter's jokes", "he said 'banter, stop'", "[banter](https://…)"
	case tok.at:
		return PositionAt, confAt
	case tok.start > 0 && (s[tok.start-1] == '/' || s[tok.start-1] == '~' || s[tok.start-1] == '$'):
		return PositionMention, confTopic // "./banter run", "~/banter": a path
	}
	n := readFollowing(s, tz)
	switch {
	case st.lead && optionFollows(s, end):
		return PositionMention, confTopic // "banter replay -labels x": a command line
	case st.lead && st.weakGreet && !n.boundary && !n.opener && !n.second:
		return PositionMention, confTopic // "a banter session"
	case st.lead && st.greeted:
		return PositionGreeting, confGreeting
	case st.lead:
		pos := PositionLeading
		if st.discourse {
			pos = PositionGreeting
		}
		switch {
		case n.boundary:
			return pos, confLeadPunct // also "banter, and you?"
		case n.about:
			return PositionMention, confTopic // "banter is slow today", "banter 很慢"
		case n.opener:
			return pos, confLeadClause
		}
		return pos, confLead
	case tok.pre == sepComma:
		if (n.boundary && !n.list) || n.opener {
			return PositionVocative, confVocative
		}
		return PositionMention, confMention
	}
	if (n.boundary || n.opener) && !n.list && st.vocativeAfter(tok.question, lookalike, n.second) {
		return PositionVocative, confVocative
	}
	f, f2 := lookupWord(st.prev), lookupWord(st.prev2)
	if f&(flagDet|flagPrep) != 0 || (f&flagAdj != 0 && f2&flagCopula == 0) || (st.words == 1 && f == 0) {
		return PositionMention, confTopic // "the banter", "peak banter", "bit of banter", "pub banter"
	}
	return PositionMention, confMention
}

// vocativeAfter reports whether the words before a name in the middle or
// at the end of a sentence leave it free to be a vocative; question is set
// when a '?' follows the name, lookalike for a speech-recognition variant,
// toYou when "you" follows it ("I swear banter you're …").
func (st *sentence) vocativeAfter(question, lookalike, toYou bool) bool {
	f, f2 := lookupWord(st.prev), lookupWord(st.prev2)
	switch {
	case closingPhrase(st.prev2, st.prev):
		return true // "fair enough banter", "spot on banter", "tell me more banter"
	case f&flagGreeting != 0:
		return f2&flagReport == 0 // "then he goes thanks banter": quoted speech
	case st.other:
		return false // "mike can you reset banter": mike is the one spoken to
	case isWord(st.prev, "this", "that"):
		// A pronoun when the clause speaks to someone ("why would you say
		// that banter", "thanks for that banter"), a determiner otherwise
		// ("is that banter", "you call that banter", "enough of that banter").
		// A look-alike is a word: "who made this banner".
		return !lookalike && st.addressing && f2&flagCopula == 0 && !isWord(st.prev2, "call", "calls", "called", "of")
	case isWord(st.prev, "like") && st.whLike && f2&(flagVerb|flagAux) == 0:
		return true // "what's the weather like banter"
	case isWord(st.prev, "on"):
		return isWord(st.prev2, "come", "hold", "go", "hang", "carry")
	case isWord(st.prev, "up"):
		return isWord(st.prev2, "what's", "whats", "wassup", "sup", "hurry", "wake", "shut", "speak", "cheer")
	case f&flagAdj != 0 && isWord(st.prev2, "i'm", "im", "am", "we're", "you're", "youre", "are", "feeling", "doing",
		"what's", "whats", "how's", "hows"):
		return true // "I'm good banter", "you're funny banter": said of a person; "what's good zorvik"
	case f&flagAdj != 0 && lookupWord(st.prev2)&(flagDiscourse|flagGreeting) != 0:
		return true // "ok fine banter": an interjection
	case f&flagEnder != 0 && f2&flagAdj != 0:
		return true // praise: "good call banter", "nice try banter"
	case isWord(st.prev, "you", "u", "ya") && f2&flagAux != 0 && f2&flagCopula == 0:
		return false // "do you banter?", "can you banter": the name is a verb
	case f&flagSubject != 0 && f2&flagAux == 0 && isWord(st.prev, "i", "we", "they", "he", "she"):
		return false // "that's how we banter" (but "where were we zorvik")
	case f&flagVerb != 0 && st.whObject:
		return true // "what did you say banter": the verb's object is "what"
	case isWord(st.prev, "bad") && isWord(st.prev2, "my"):
		return true // "my bad zorvik"
	case f&(flagTaker|flagReport) != 0:
		return false
	case f == 0 && participle(st.prev):
		return true // "we're all waiting zorvik", "I'm so tired banter"
	case f == 0 && !toYou && isWord(st.prev2, "i", "we", "they", "he", "she"):
		return false // "I broke zorvik": the verb's object (but "I swear banter you're …")
	case f&(flagEnder|flagDiscourse|flagWh|flagTail) != 0:
		return true
	case f == 0 && st.words == 1 && !st.addressing && !question:
		return false // "pub banter", "peak banter": a noun with its modifier
	case st.addressing || question:
		return true
	case f == 0 && f2&flagCopula == 0 && adjectiveForm(st.prev):
		return false // "mindless banter", "the hilarious banter" (but "that's hilarious zorvik")
	}
	// An open-class word: a vocative unless it is itself inside a noun
	// phrase ("the office banter", "some pub banter") or a verb after a
	// modal ("can't handle banter"); after a copula it is a predicate
	// ("that's hilarious zorvik"), after a verb an object ("that makes
	// sense banter").
	switch {
	case f2&flagAux != 0 && f2&flagCopula == 0:
		return false
	case isWord(st.prev2, "a", "an"):
		return true // "I have a question banter": a complete noun phrase
	}
	return f2&(flagDet|flagAdj|flagPrep|flagConj|flagVerb) == 0 // "nothing beats friday banter"
}

// closingPhrases are two-word phrases that close a clause, so that a name
// after them is a vocative even though their last word would take it as
// an argument on its own ("enough banter", "more banter").
var closingPhrases = [...][2]string{
	{"fair", "enough"}, {"good", "enough"}, {"true", "enough"}, {"spot", "on"}, {"to", "know"}, {"me", "more"},
	{"us", "more"}, {"once", "more"}, {"all", "good"}, {"sounds", "good"}, {"looks", "good"}, {"sounds", "great"},
	{"looks", "great"}, {"so", "true"}, {"well", "played"}, {"well", "done"}, {"no", "worries"}, {"not", "now"},
	{"too", "slow"}, {"too", "good"}, {"got", "it"}, {"my", "point"}, {"same", "here"}, {"makes", "sense"},
}

func closingPhrase(prev2, prev string) bool {
	if len(prev2) == 0 || len(prev) < 2 {
		return false
	}
	for _, p := range closingPhrases {
		if len(p[1]) == len(prev) && isWord(prev, p[1]) && isWord(prev2, p[0]) {
			return true
		}
	}
	return false
}

// optionFollows reports whether a command-line option ("-labels",
// "--version") follows the name that ends at end, within its line: the
// name is a command, not an addressee. A name set off by a colon or a comma
// ("banter: -O2 or -Os?") is spoken to, whatever options the line names.
func optionFollows(s string, end int) bool {
	if end < len(s) && (s[end] == ':' || s[end] == ',') {
		return false
	}
	for i := end; i+1 < len(s) && s[i] != '\n' && i < end+80; i++ {
		if s[i] == ' ' && s[i+1] == '-' {
			j := i + 2
			if j < len(s) && s[j] == '-' {
				j++
			}
			if j < len(s) && ('a' <= s[j] && s[j] <= 'z') {
				return true
			}
		}
	}
	return false
}

// adjectiveForm reports whether an open-class word has an adjective's
// ending: "mindless", "hilarious", "playful", "sarcastic".
func adjectiveForm(w string) bool {
	if len(w) < 6 {
		return false
	}
	for _, suf := range [...]string{"less", "ful", "ous", "ive", "able", "ible", "ical", "ish", "istic"} {
		if hasSuffixFold(w, suf) {
			return true
		}
	}
	return false
}

// participle reports whether w looks like an -ing or -ed verb form.
func participle(w string) bool {
	return len(w) > 4 && (hasSuffixFold(w, "ing") || (hasSuffixFold(w, "ed") && !hasSuffixFold(w, "eed")))
}

// statementForm reports whether an open-class word after a sentence-initial
// name makes a statement about it: a verb in -s or -ed, or an -ly adverb
// ("banter needs", "banter roasted", "banter literally"), not a bare
// imperative ("banter pass", "banter focus", "banter reply").
func statementForm(w string) bool {
	switch {
	case len(w) < 4 || strings.ContainsAny(w, "'’"):
		return false // "here's", "let's": contractions are not verb endings
	case strings.ContainsFunc(w, notWordLetter):
		return false // "burst_limit_5s", "v2s", "app.logs": identifiers and codes are not verbs
	case hasSuffixFold(w, "ly"):
		return !hasSuffixFold(w, "ply")
	case hasSuffixFold(w, "ed"):
		return !hasSuffixFold(w, "eed")
	case hasSuffixFold(w, "s"):
		return !hasSuffixFold(w, "ss") && !hasSuffixFold(w, "us") && !hasSuffixFold(w, "is")
	}
	return false
}

// notWordLetter reports whether r cannot be part of a word's spelling: a digit, an
// underscore, a dot, a slash and the like (letters of any script, a hyphen, and an
// apostrophe can).
func notWordLetter(r rune) bool {
	return !unicode.IsLetter(r) && r != '-' && r != '\'' && r != '’'
}

// trimQuotes strips the quotes and underscores around a word, keeping any
// 's ("'that's'" → "that's").
func trimQuotes(w string) string {
	for len(w) > 0 && (w[0] == '\'' || w[0] == '_') {
		w = w[1:]
	}
	for len(w) > 0 && (w[len(w)-1] == '\'' || w[len(w)-1] == '_') {
		w = w[:len(w)-1]
	}
	return w
}

// quoted reports whether the name ending at end sits inside quotes that
// close after it.
func (st *sentence) quoted(s string, end int) bool {
	rest := s[end:]
	if st.inDouble && (strings.IndexByte(rest, '"') >= 0 || strings.Contains(rest, "”")) {
		return true
	}
	if st.inSingle {
		rest = s[end-1:]
		for i := 0; i < len(rest); i++ {
			if rest[i] == '\'' && (i+1 == len(rest) || !isAlnum(rest[i+1])) {
				return true
			}
		}
	}
	return false
}
