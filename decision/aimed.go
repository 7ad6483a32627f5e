package decision

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Who a message is aimed at when Discord's own signals say "the bot": a
// mention of the bot inside a sentence about it ("why is @banter so slow
// today") is not an address, and neither is a reply to one of the bot's
// messages that speaks to someone else ("look mike, even the bot agrees
// with me") or about the bot in the third person ("this bot is unhinged").

// MentionAddresses reports whether the single user mention in s (the
// bot's, when the message mentions it) stands where an addressee stands:
// "@banter what's the weather", "thanks @banter", but not "why is @banter
// so slow today" or "@banter is down again". With no user mention written
// in s, or several (one of them someone else's), it reports true: the
// mention is taken at its word. conf is the position's confidence (a
// plain topic or a maybe). It does not allocate.
func MentionAddresses(s string) (addressed bool, conf float64) {
	if !strings.Contains(s, "<@") {
		return true, 1
	}
	tz := tokenizer{s: s, mentions: true}
	var st sentence
	st.newSentence()
	found := false
	addressed = true
	conf = 1
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		if tok.pre == sepSentence {
			st.newSentence()
		}
		raw := s[tok.start:tok.end]
		if tok.mention {
			if found {
				return true, 1 // several mentions: we cannot tell which is the bot's
			}
			found = true
			var pos Position
			pos, conf = st.position(s, tok, tz, tok.end, false, false)
			addressed = pos != PositionMention || (st.lead && continuesRequest(s, tz))
		} else if tok.quote {
			st.inDouble = !st.inDouble
		}
		st.advance(s, tz, trimQuotes(raw))
	}
	return !found || addressed, conf
}

// continuesRequest reports whether the word after a mention that opens a
// sentence (tz is positioned after it) goes on with a request rather than
// a statement about the bot: a conjunction or preposition ("@banter and
// now?", "@banter about that plan…").
func continuesRequest(s string, tz tokenizer) bool {
	nt, ok := tz.next()
	return ok && lookupWord(trimQuotes(s[nt.start:nt.end]))&(flagConj|flagPrep) != 0
}

// ReplyAimedElsewhere reports whether a reply to one of the bot's
// messages speaks to someone else or about the bot rather than to it: it
// calls another person (a mention or "@name", or a name opening or closing
// the sentence: "mike, read this", "priya you were right", "read this,
// mike"), talks about "the bot" in the third person (in the languages of
// the word lists), or uses the bot's name as a topic ("even banter agrees").
// m is the name matcher's reading of the same text. It does not allocate.
func ReplyAimedElsewhere(s string, m NameMatch) bool {
	if m.Kind == MatchAddress {
		return false
	}
	if m.Kind == MatchMention || thirdPersonBot(s) {
		return true
	}
	return callsAnother(s)
}

// thirdPersonBot reports whether s speaks of "the bot" (or "this bot",
// "el bot", "der Bot", "le bot", "o bot", "бот", "机器人", "ボット").
func thirdPersonBot(s string) bool {
	if strings.Contains(s, "机器人") || strings.Contains(s, "ボット") {
		return true
	}
	tz := tokenizer{s: s}
	prev := ""
	for {
		tok, ok := tz.next()
		if !ok {
			return false
		}
		w := trimQuotes(s[tok.start:tok.end])
		switch {
		case isWord(w, "bot", "bots") && isWord(prev, "the", "this", "that", "el", "der", "den", "dem", "le", "ce", "o", "este", "il", "questo", "da"):
			return true
		case isWord(w, "бот", "бота", "боту", "ботом", "боте"):
			return true
		}
		prev = w
	}
}

// callsAnother reports whether s calls someone by name or mention: a
// mention or "@name" in an addressing position, an open-class word opening
// the sentence as a vocative ("mike, …", "sam look …", "priya you …"), or
// closing it after a comma ("…, миша").
func callsAnother(s string) bool {
	tz := tokenizer{s: s, mentions: true}
	var st sentence
	st.newSentence()
	for {
		tok, ok := tz.next()
		if !ok {
			return false
		}
		if tok.pre == sepSentence {
			st.newSentence()
		}
		raw := s[tok.start:tok.end]
		w := trimQuotes(raw)
		if tok.mention || tok.at {
			if pos, _ := st.position(s, tok, tz, tok.end, false, false); pos != PositionMention {
				return true
			}
		}
		if st.lead && lookupWord(w) == 0 && !tok.mention && callsSomeoneAt(s, tz) {
			return true
		}
		if lookupWord(w) == 0 && !tok.mention && st.words > 0 && tok.pre == sepComma &&
			tz.peekSep() == sepSentence && !participle(w) && !adjectiveForm(w) {
			return true
		}
		st.advance(s, tz, w)
	}
}

// callsSomeoneAt reports whether the open-class word opening a sentence
// (tz is positioned after it) calls someone: "you", a wh-word, an
// imperative or an inversion follows ("priya, you were right", "sam look
// at this", "mike ur cooked"). A comma alone is not enough: "perfect,
// thanks".
func callsSomeoneAt(s string, tz tokenizer) bool {
	nt, ok := tz.next()
	if !ok || nt.pre == sepSentence {
		return false
	}
	f := lookupWord(trimQuotes(s[nt.start:nt.end]))
	if f&(flagSecond|flagImperative|flagWh) != 0 {
		return true
	}
	if f&flagAux != 0 {
		nt2, ok := tz.next()
		return ok && nt2.pre == sepSpace && lookupWord(trimQuotes(s[nt2.start:nt2.end]))&flagSubject != 0
	}
	return false
}

// memberNamed reports whether the name matched at m is the start of the
// display name of someone in the conversation ("banter bob, gg" with
// Banter Bob among the recent speakers): theirs, not the bot's.
func memberNamed[L ContextLine | Participant](s string, m NameMatch, people []L) bool {
	rest := s[m.Start:]
	for i := range people {
		var name string
		switch p := any(&people[i]).(type) {
		case *ContextLine:
			name = p.Speaker
		case *Participant:
			name = p.Name
		}
		if n := foldPrefixLen(rest, name); n > m.End-m.Start && (n == len(rest) || !alnumAt(rest, n)) {
			return true
		}
	}
	return false
}

// speakerNamed reports whether word is the first name of one of the recent
// speakers: a typo of the bot's name that is someone's name ("hey baxter"
// with Baxter in the channel) is theirs. It does not allocate.
func speakerNamed(recent []ContextLine, word string) bool {
	word, _ = trimWord(word)
	for i := range recent {
		if !recent[i].Bot && strings.EqualFold(firstWord(recent[i].Speaker), word) {
			return true
		}
	}
	return false
}

// alnumAt reports whether a letter or digit starts at s[i].
func alnumAt(s string, i int) bool {
	if s[i] < utf8.RuneSelf {
		return isAlnum(s[i])
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
