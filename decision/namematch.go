package decision

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MatchKind says how a name occurs in a text.
type MatchKind uint8

// Match kinds, weakest first. The zero value is MatchNone.
const (
	MatchNone    MatchKind = iota // the name does not occur as a word
	MatchMention                  // the name occurs, but is talked about ("I asked banter")
	MatchAddress                  // the name is used to address the bot ("hey banter, ...")
)

// String returns "none", "mention" or "address".
func (k MatchKind) String() string {
	switch k {
	case MatchMention:
		return "mention"
	case MatchAddress:
		return "address"
	}
	return "none"
}

// Position says where an addressing name stood.
type Position uint8

// Positions. The zero value is PositionNone.
const (
	PositionNone     Position = iota
	PositionAt                // "@banter" typed as plain text
	PositionGreeting          // after a greeting at the start of a sentence: "hey banter"
	PositionLeading           // first word of a sentence: "banter, tell us a joke"
	PositionVocative          // after a comma, before punctuation or the end: "thoughts, banter?"
	PositionMerged            // glued to a greeting: "heybanter"
	PositionMention           // anywhere else: talked about, not addressed
)

var positionNames = [...]string{"none", "at", "greeting", "leading", "vocative", "merged", "mention"}

// String returns the position name, e.g. "greeting".
func (p Position) String() string {
	if int(p) < len(positionNames) {
		return positionNames[p]
	}
	return "none"
}

// NameMatch is the best occurrence of the bot's name (or an alias) in a text.
type NameMatch struct {
	Kind     MatchKind
	Position Position
	// Alias is true when a configured alias matched rather than the name.
	Alias bool
	// Variant is true when a speech-recognition variant matched ("banner"
	// for "banter"), never for text.
	Variant bool
	// Confidence in [0,1] that the text addresses the bot by this name.
	Confidence float64
	// Start and End are the byte offsets of the matched words in the text.
	Start, End int
}

// Addressed reports whether the match addresses the bot.
func (m NameMatch) Addressed() bool { return m.Kind == MatchAddress }

// Confidence values of the name matcher, by position. Variants scale these
// by their similarity to the name.
const (
	confAt        = 0.95
	confGreeting  = 0.95
	confLeadPunct = 0.95 // "banter, ..." / "banter?"
	confLead      = 0.8  // "banter tell us a joke"
	confVocative  = 0.9
	confMerged    = 0.9
	confMention   = 0.3
)

// nameForm is one compiled name or alias.
type nameForm struct {
	words   []string // lower-case words
	compact string   // words joined without separators, for merged forms
	key     [keyMax]byte
	keyLen  int
	alias   bool
}

// NameMatcher finds the bot's name and aliases in text and transcripts. It
// is immutable after construction and safe for concurrent use; matching does
// not allocate.
type NameMatcher struct {
	forms []nameForm
}

// NewNameMatcher compiles the bot's name and its aliases. Names are matched
// case-insensitively as whole words; multi-word names must appear with
// only spaces between their words. Empty names are ignored.
func NewNameMatcher(name string, aliases ...string) *NameMatcher {
	m := &NameMatcher{}
	m.add(name, false)
	for _, a := range aliases {
		m.add(a, true)
	}
	return m
}

func (m *NameMatcher) add(name string, alias bool) {
	var f nameForm
	f.alias = alias
	tz := tokenizer{s: name}
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		w := strings.ToLower(name[tok.start:tok.end])
		f.words = append(f.words, w)
		f.compact += w
	}
	if len(f.words) == 0 {
		return
	}
	for _, existing := range m.forms {
		if existing.compact == f.compact {
			return
		}
	}
	f.keyLen = phoneticKey(f.compact, &f.key)
	m.forms = append(m.forms, f)
}

// Empty reports whether the matcher has no names at all.
func (m *NameMatcher) Empty() bool { return m == nil || len(m.forms) == 0 }

// MatchText finds the bot's name in a chat message: exact words only, so
// "bantering" never matches.
func (m *NameMatcher) MatchText(s string) NameMatch {
	if m == nil {
		return NameMatch{}
	}
	return scanNames(s, m.forms, false, false)
}

// MatchVoice finds the bot's name in a speech transcript. Besides exact
// words it accepts speech-recognition variants (phonetic key and edit
// distance), but only where the word stands in an addressing position, and
// with a confidence scaled by the similarity: "hey banner, what's the
// weather" addresses the bot, "pass me the banner" does not.
func (m *NameMatcher) MatchVoice(s string) NameMatch {
	if m == nil {
		return NameMatch{}
	}
	return scanNames(s, m.forms, true, false)
}

// addressesName reports whether s addresses someone called name (its first
// word) in an addressing position, exact words only. It does not allocate.
func addressesName(s, name string) bool {
	first := firstWord(name)
	if len(first) < 2 {
		return false
	}
	var words [1]string
	words[0] = first
	var forms [1]nameForm
	forms[0].words = words[:]
	forms[0].compact = first
	return scanNames(s, forms[:], false, true).Kind == MatchAddress
}

// firstWord returns the first run of letters in a display name
// ("~Mike_92 (he/him)" → "Mike").
func firstWord(s string) string {
	start := -1
	for i, r := range s {
		isL := unicode.IsLetter(r)
		if start < 0 && isL {
			start = i
		} else if start >= 0 && !isL {
			return s[start:i]
		}
	}
	if start < 0 {
		return ""
	}
	return s[start:]
}

// scanNames walks the words of s once and returns the best match of any
// form. With addressOnly it looks only at words that could be addressing
// (sentence starts, after commas, after '@') and never reports mentions.
func scanNames(s string, forms []nameForm, voice, addressOnly bool) NameMatch {
	var best NameMatch
	if !containsAnyForm(s, forms) {
		if !voice {
			return best // no exact word, no merged form: nothing to find
		}
		addressOnly = true // only variants in addressing positions remain
	}
	tz := tokenizer{s: s}
	lead, greeted, prevThank := true, false, false
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		if tok.pre == sepSentence {
			lead, greeted, prevThank = true, false, false
		}
		if addressOnly && !lead && !tok.at && tok.pre != sepComma {
			continue // cannot address anyone, and mentions are not wanted
		}
		word, possessive := trimWord(s[tok.start:tok.end])
		if !addressOnly || lead || tok.at || tok.pre == sepComma {
			addrPos := lead || tok.at || tok.pre == sepComma
			for i := range forms {
				f := &forms[i]
				// Cheap length pre-check: exact word, merged greeting, or a
				// variant in an addressing position.
				if d := len(word) - len(f.words[0]); d != 0 && !(lead && len(word) > len(f.compact)) && !(voice && addrPos && d >= -2 && d <= 2) {
					continue
				}
				nm := matchFormAt(s, tz, tok, word, possessive, f, lead, greeted, voice)
				if nm.Kind > best.Kind || (nm.Kind == best.Kind && nm.Kind != MatchNone && nm.Confidence > best.Confidence) {
					best = nm
				}
			}
			if addressOnly && best.Kind == MatchAddress {
				return best
			}
		}
		if !lead {
			continue
		}
		isGreeting := lookupWord(word)&flagGreeting != 0 || (prevThank && strings.EqualFold(word, "you"))
		prevThank = strings.EqualFold(word, "thank")
		if isGreeting {
			greeted = true
		} else {
			lead = false
		}
	}
	if addressOnly && best.Kind != MatchAddress {
		return NameMatch{}
	}
	return best
}

// matchFormAt tries form f at token tok, whose trimmed text is word. tz is
// positioned right after tok.
func matchFormAt(s string, tz tokenizer, tok token, word string, possessive bool, f *nameForm, lead, greeted, voice bool) NameMatch {
	variant := false
	end := tok.end
	switch {
	case len(word) == len(f.words[0]) && strings.EqualFold(word, f.words[0]):
		// Multi-word names: the following words must match, spaces only.
		for _, w := range f.words[1:] {
			nt, ok := tz.next()
			if !ok || nt.pre != sepSpace {
				return NameMatch{}
			}
			nw, pos := trimWord(s[nt.start:nt.end])
			if !strings.EqualFold(nw, w) {
				return NameMatch{}
			}
			possessive = pos
			end = nt.end
		}
	case lead && !possessive && mergedGreeting(word, f.compact):
		return NameMatch{Kind: MatchAddress, Position: PositionMerged, Alias: f.alias,
			Confidence: confMerged, Start: tok.start, End: tok.end}
	case voice && len(f.words) == 1 && !possessive && (lead || tok.at || tok.pre == sepComma) && maybeVariant(word, f):
		// Only words in a possible addressing position can be variants;
		// the similarity is computed once the position is confirmed.
		variant = true
	default:
		return NameMatch{}
	}
	nm := NameMatch{Alias: f.alias, Variant: variant, Start: tok.start, End: end}
	post := tz.peekSep()
	switch {
	case possessive:
		nm.Kind, nm.Position, nm.Confidence = MatchMention, PositionMention, confMention
	case tok.at:
		nm.Kind, nm.Position, nm.Confidence = MatchAddress, PositionAt, confAt
	case lead && greeted:
		nm.Kind, nm.Position, nm.Confidence = MatchAddress, PositionGreeting, confGreeting
	case lead && post >= sepComma:
		nm.Kind, nm.Position, nm.Confidence = MatchAddress, PositionLeading, confLeadPunct
	case lead:
		nt, _ := tz.next()
		if nw, _ := trimWord(s[nt.start:nt.end]); lookupWord(nw)&flagAbout != 0 {
			nm.Kind, nm.Position, nm.Confidence = MatchMention, PositionMention, confMention
		} else {
			nm.Kind, nm.Position, nm.Confidence = MatchAddress, PositionLeading, confLead
		}
	case tok.pre == sepComma && post >= sepComma:
		nm.Kind, nm.Position, nm.Confidence = MatchAddress, PositionVocative, confVocative
	default:
		nm.Kind, nm.Position, nm.Confidence = MatchMention, PositionMention, confMention
	}
	if variant {
		if nm.Kind != MatchAddress {
			// A look-alike word that is not addressing anyone is just a word.
			return NameMatch{}
		}
		sim := variantSimilarity(word, f)
		if sim == 0 {
			return NameMatch{}
		}
		nm.Confidence *= sim
	}
	return nm
}

// containsAnyForm reports whether the compact form or the first word of any
// form occurs in s (ASCII case-insensitive substring): a cheap pre-check
// before the word walk.
func containsAnyForm(s string, forms []nameForm) bool {
	for i := range forms {
		if !isASCII(forms[i].compact) {
			return true // the ASCII pre-check cannot fold it: walk the words
		}
		if indexFold(s, forms[i].words[0]) >= 0 || (len(forms[i].words) > 1 && indexFold(s, forms[i].compact) >= 0) {
			return true
		}
	}
	return false
}

// mergedGreeting reports whether word is a greeting glued to the name:
// "heybanter", "yo_banter".
func mergedGreeting(word, compact string) bool {
	if len(word) <= len(compact) || !hasSuffixFold(word, compact) {
		return false
	}
	head := word[:len(word)-len(compact)]
	for len(head) > 0 && head[len(head)-1] == '_' {
		head = head[:len(head)-1]
	}
	return lookupWord(head)&flagMergedGreeting != 0
}

// isASCII reports whether s is plain ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
