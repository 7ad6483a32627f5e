package decision

import "strings"

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
	// prev and prev2 are the two words before the current one in this
	// sentence ("" when there are none).
	prev, prev2 string
	// inDouble and inSingle: inside "double" or 'single' quotes (kept
	// across sentences; checked for a closing quote before they count).
	inDouble, inSingle bool
}

func (st *sentence) newSentence() {
	st.lead, st.greeted, st.discourse, st.addressing, st.prevThank = true, false, false, false, false
	st.prev, st.prev2 = "", ""
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
		case f&flagGreeting != 0 || (st.prevThank && isWord(word, "you", "u", "ya")) ||
			(isWord(word, "good") && nextIsDaytime(s, tz)):
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
		}
		st.prevThank = isWord(word, "thank")
	} else if !st.addressing && maybeSecond(word) && lookupWord(word)&flagSecond != 0 {
		st.addressing = true
	}
	st.prev2, st.prev = st.prev, word
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
	inversion := false
	if f&(flagAux|flagQuestion) != 0 {
		// "banter is it raining", "banter can you": a question, not a statement.
		if nt2, ok := tz.next(); ok && nt2.pre == sepSpace {
			w2 := trimQuotes(s[nt2.start:nt2.end])
			inversion = lookupWord(w2)&flagSubject != 0
		}
	}
	n.boundary = f&flagTail != 0
	n.about = f&flagAbout != 0 && !inversion
	n.opener = inversion || f&(flagWh|flagOpener|flagGreeting|flagImperative|flagTail) != 0
	return n
}

// position reads the position of a name that ends at end (tok is its first
// word, tz is positioned after it) and returns it with its confidence;
// PositionMention when the name does not address anyone.
func (st *sentence) position(s string, tok token, tz tokenizer, end int, possessive bool) (Position, float64) {
	switch {
	case possessive, st.quoted(s, end), strings.HasPrefix(s[end:], "]("):
		return PositionMention, confMention // "banter's jokes", "he said 'banter, stop'", "[banter](https://…)"
	case tok.at:
		return PositionAt, confAt
	}
	n := readFollowing(s, tz)
	switch {
	case st.lead && st.greeted:
		return PositionGreeting, confGreeting
	case st.lead:
		pos := PositionLeading
		if st.discourse {
			pos = PositionGreeting
		}
		switch {
		case n.boundary && !n.list:
			return pos, confLeadPunct
		case n.about || n.list:
			return PositionMention, confMention
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
	if (n.boundary || n.opener) && !n.list && st.vocativeAfter(tok.question) {
		return PositionVocative, confVocative
	}
	return PositionMention, confMention
}

// vocativeAfter reports whether the words before a name in the middle or
// at the end of a sentence leave it free to be a vocative; question is set
// when a '?' follows the name.
func (st *sentence) vocativeAfter(question bool) bool {
	f, f2 := lookupWord(st.prev), lookupWord(st.prev2)
	switch {
	case f&flagGreeting != 0:
		return f2&flagReport == 0 // "then he goes thanks banter": quoted speech
	case isWord(st.prev, "this", "that"):
		// A pronoun when the clause speaks to someone ("why did you do that
		// banter"), a determiner otherwise ("is that banter", "you call that banter").
		return st.addressing && f2&(flagVerb|flagAux|flagPrep) == 0
	case isWord(st.prev, "on"):
		return isWord(st.prev2, "come", "hold", "go", "hang", "carry")
	case isWord(st.prev, "up"):
		return isWord(st.prev2, "what's", "whats", "wassup", "sup", "hurry", "wake", "shut", "speak", "cheer")
	case f&flagAdj != 0 && isWord(st.prev2, "i'm", "im", "am", "we're", "you're", "youre", "are", "feeling", "doing"):
		return true // "I'm good banter", "you're funny banter": said of a person
	case f&flagEnder != 0 && f2&flagAdj != 0:
		return true // praise: "good call banter", "nice try banter"
	case f&(flagTaker|flagReport) != 0:
		return false
	case f&(flagEnder|flagDiscourse|flagWh|flagTail) != 0:
		return true
	case st.addressing || question:
		return true
	}
	// An open-class word: a vocative unless it is itself inside a noun
	// phrase ("the office banter", "love pub banter").
	return f2&(flagDet|flagAdj|flagPrep|flagVerb|flagConj) == 0
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
