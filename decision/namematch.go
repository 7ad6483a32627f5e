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
	PositionVocative          // closing or interrupting a clause: "thoughts, banter?", "thanks for the help banter"
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
	// Nickname is true when the bot's guild nickname matched (see
	// NameMatcher.WithNickname).
	Nickname bool
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
	confAt         = 0.95
	confGreeting   = 0.95
	confLeadPunct  = 0.95 // "banter, ..." / "banter?"
	confLeadClause = 0.9  // "banter can you ...", "banter what's ..."
	confLead       = 0.8  // "banter night was fun": a bare name, then a content word
	confVocative   = 0.9
	confMerged     = 0.9
	confMention    = 0.3 // talked about, or maybe addressed: the classifier may tell
	confTopic      = 0.1 // plainly a topic ("banter is slow", "the banter", code): no classifier needed
)

// nameForm is one compiled name or alias.
type nameForm struct {
	words   []string // the words, lower-cased where that folds to the same letter (foldLower)
	compact string   // words joined without separators, for merged forms
	key     [keyMax]byte
	keyLen  int
	alias   bool
	nick    bool // the bot's guild nickname
	// Byte lengths of the words as they may be written (case folding may
	// change a letter's length: "K", U+212A, is "k"): the first word's
	// shortest and longest, and the compact form's shortest.
	min0, max0, minC int
	// anchor is the longest ASCII run of the first word (the whole word
	// when it is ASCII), "" when it has none of 2 bytes: a text without it
	// (ASCII case-insensitively) cannot hold the name (containsAnyForm).
	// anchorKS: it has a k or an s, which may be written "K" or "ſ".
	anchor   string
	anchorKS bool
}

// prepare computes the length bounds and the anchor of f from its words.
// It does not allocate.
func (f *nameForm) prepare() {
	f.min0, f.max0 = foldLenBounds(f.words[0])
	f.minC = f.min0
	if len(f.words) > 1 {
		f.minC, _ = foldLenBounds(f.compact)
	}
	w := f.words[0]
	f.anchor = ""
	for i := 0; i < len(w); {
		j := i
		for j < len(w) && w[j] < utf8.RuneSelf {
			j++
		}
		if j-i > len(f.anchor) {
			f.anchor = w[i:j]
		}
		for j < len(w) && w[j] >= utf8.RuneSelf {
			j++
		}
		i = j
	}
	if len(f.anchor) < 2 && len(f.anchor) < len(w) {
		f.anchor = ""
	}
	f.anchorKS = strings.ContainsAny(f.anchor, "kKsS")
}

// firstWordMay reports whether word is as long as the first word of f may
// be under case folding: the cheap check before strings.EqualFold.
func (f *nameForm) firstWordMay(word string) bool {
	return len(word) >= f.min0 && len(word) <= f.max0
}

// NameMatcher finds the bot's name and aliases in text and transcripts. It
// is immutable after construction and safe for concurrent use; matching does
// not allocate.
type NameMatcher struct {
	forms []nameForm
}

// NewNameMatcher compiles the bot's name and its aliases. Names are matched
// as whole words, case-insensitively under Unicode simple case folding
// (strings.EqualFold: "STRAẞE" is "Straße", "\u212Aai" with the Kelvin
// sign is "Kai"; a name with "İ" also matches its lower-case spelling:
// "İlkay" is "İLKAY", "ilkay" and "ILKAY"); multi-word names must appear
// with only spaces between their words. Empty names are ignored.
func NewNameMatcher(name string, aliases ...string) *NameMatcher {
	m := &NameMatcher{}
	m.add(name, false)
	for _, a := range aliases {
		m.add(a, true)
	}
	return m
}

func (m *NameMatcher) add(name string, alias bool) {
	m.addForm(name, alias, false)
}

func (m *NameMatcher) addForm(name string, alias, nick bool) {
	m.addSpelling(name, alias, nick, foldLower)
	// Simple folding leaves a letter whose lower case is another letter
	// ("İ", lower case "i") equal to itself only; people also write the
	// name with that lower case ("ilkay" for "İlkay"): match that spelling
	// too.
	if l := strings.ToLower(name); !strings.EqualFold(l, name) {
		m.addSpelling(l, alias, nick, foldLower)
	}
}

// addSpelling compiles name, its words lower-cased by lowerWord, as a
// form, unless the matcher has it already.
func (m *NameMatcher) addSpelling(name string, alias, nick bool, lowerWord func(string) string) {
	var f nameForm
	f.alias, f.nick = alias, nick
	tz := tokenizer{s: name}
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		// Trimmed as the matcher trims the words it reads, so that the name
		// written in a text is the name ("'bant'" is "bant").
		w, _ := trimWord(name[tok.start:tok.end])
		if w == "" {
			continue
		}
		w = lowerWord(w)
		f.words = append(f.words, w)
		f.compact += w
	}
	if len(f.words) == 0 {
		return
	}
	for _, existing := range m.forms {
		if strings.EqualFold(existing.compact, f.compact) {
			return
		}
	}
	f.prepare()
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
	forms[0].prepare()
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
// form. With addressOnly it never reports mentions (and stops at the first
// address).
func scanNames(s string, forms []nameForm, voice, addressOnly bool) NameMatch {
	var best NameMatch
	if !containsAnyForm(s, forms) {
		if !voice && !typoCandidate(s, forms) {
			return best // no exact word, no compound, no word that could be a typo: nothing to find
		}
		// Only look-alikes, typos and cut names remain, and they only count
		// when addressing.
		addressOnly = true
	}
	first := voice // the first word of a transcript may be a cut name
	tz := tokenizer{s: s}
	var st sentence
	st.voice = voice
	st.newSentence()
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		if tok.pre == sepSentence {
			st.newSentence()
		}
		if tok.quote {
			st.inDouble = !st.inDouble
		}
		raw := s[tok.start:tok.end]
		st.openSingle(raw)
		word, possessive := trimWord(raw)
		for i := range forms {
			if !mayMatch(word, &forms[i], st.lead, voice, first) {
				continue
			}
			nm := matchFormAt(s, tz, tok, word, possessive, &forms[i], &st, voice, first)
			if nm.Kind > best.Kind || (nm.Kind == best.Kind && nm.Kind != MatchNone && nm.Confidence > best.Confidence) {
				best = nm
			}
		}
		if addressOnly && best.Kind == MatchAddress {
			return best
		}
		st.advance(s, tz, trimQuotes(raw))
		st.closeSingle(raw)
		first = false
	}
	if addressOnly && best.Kind != MatchAddress {
		return NameMatch{}
	}
	return best
}

// mayMatch is the cheap pre-check of matchFormAt: could word be form f,
// a greeting glued to it, or (voice) a variant or the first half of it?
func mayMatch(word string, f *nameForm, lead, voice, first bool) bool {
	d := len(word) - len(f.compact)
	switch {
	case f.firstWordMay(word), lead && len(word) > f.minC:
		return true // the name, or a greeting glued to it
	case len(f.words) == 1 && len(word) >= minTypoName-1 && (d >= -1 || len(word) >= f.minC+3) &&
		(lower(word[0]) == lower(f.compact[0]) || (word[0]|f.compact[0] >= utf8.RuneSelf && sameFirstRuneFold(word, f.compact))):
		return true // a typo, an elongation or a compound
	case first && d < 0 && len(word) >= minCutLen && foldSuffixStart(f.compact, word) >= 0:
		return true // a cut name
	case !voice || len(f.words) != 1 || len(word) < 2:
		return false
	case d >= -1 && d <= 2:
		return f.keyLen > 0 && firstSound(word) == f.key[0]
	}
	return d < 0 && lower(word[0]) == lower(f.compact[0])
}

// matchFormAt tries form f at token tok, whose trimmed text is word: the
// name itself (all its words), a greeting glued to it, and in voice a
// speech-recognition variant or the name split in two ("ban ter"). tz is
// positioned right after tok; st describes the sentence up to tok.
func matchFormAt(s string, tz tokenizer, tok token, word string, possessive bool, f *nameForm, st *sentence, voice, firstWord bool) NameMatch {
	sim := 1.0 // similarity of a variant to the name
	variant, cut := false, false
	end := tok.end
	first := f.words[0]
	switch {
	case f.firstWordMay(word) && strings.EqualFold(word, first):
		if len(f.words) == 1 {
			end, possessive = botAfter(s, &tz, end, possessive) // "banter bot"
		}
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
	case compoundOf(word, f):
		// "banterbot", "banter-bot": the name itself.
	case possessive || len(word) < 2:
		return NameMatch{}
	case st.lead && len(word) > f.minC && mergedGreeting(word, f.compact):
		return NameMatch{Kind: MatchAddress, Position: PositionMerged, Alias: f.alias, Nickname: f.nick,
			Confidence: confMerged, Start: tok.start, End: tok.end}
	case voice && firstWord && cutName(word, f):
		sim, variant, cut = cutSim, true, true
	case typoOf(word, f, voice, &sim):
		variant = true
	case !voice || len(f.words) != 1:
		return NameMatch{}
	case st.lead && len(word) > len(f.compact)-2 && hasMergedGreeting(word):
		// "heybanner": a greeting glued to a look-alike.
		if sim = mergedVariant(word, f); sim == 0 {
			return NameMatch{}
		}
		return NameMatch{Kind: MatchAddress, Position: PositionMerged, Alias: f.alias, Nickname: f.nick, Variant: true,
			Confidence: confMerged * sim, Start: tok.start, End: tok.end}
	default:
		var ok bool
		if sim, end, possessive, ok = voiceVariant(s, &tz, tok.end, word, f); !ok {
			return NameMatch{}
		}
		variant = true
	}
	pos, conf := st.position(s, tok, tz, end, possessive, variant)
	if variant && pos == PositionMention {
		return NameMatch{} // a look-alike word that addresses no one is just a word
	}
	if cut && (pos != PositionLeading || conf < confLeadClause) {
		return NameMatch{} // "ter that we went home": the end of another word
	}
	if sim < 0 {
		if sim = variantSimilarity(word, f); sim == 0 {
			return NameMatch{}
		}
	}
	nm := NameMatch{Kind: MatchAddress, Position: pos, Alias: f.alias, Nickname: f.nick, Variant: variant, Confidence: conf * sim,
		Start: tok.start, End: end}
	if pos == PositionMention {
		nm.Kind = MatchMention
	}
	return nm
}

// voiceVariant reports whether word (at a token followed by tz) is a
// speech-recognition form of the single-word name f: the name split in two
// ("ban ter", "zor vick") or a look-alike ("banner", "banta"). It returns
// the similarity (-1 for a look-alike: not computed yet), where the name ends (tokEnd unless it was split: tz then
// moves past the second part) and whether it ends in 's.
func voiceVariant(s string, tz *tokenizer, tokEnd int, word string, f *nameForm) (sim float64, end int, possessive, ok bool) {
	if len(word) < len(f.compact) && foldPrefixLen(f.compact, word) >= 0 {
		t2 := *tz
		if nt, ok := t2.next(); ok && nt.pre == sepSpace {
			nw, pos := trimWord(s[nt.start:nt.end])
			if sim := splitSimilarity(word, nw, f); sim > 0 {
				*tz = t2
				return sim, nt.end, pos, true
			}
		}
	}
	if !maybeVariant(word, f) {
		return 0, 0, false, false
	}
	return -1, tokEnd, false, true // the similarity is computed once the position addresses
}

// containsAnyForm reports whether the anchor of any form (its first word,
// or the longest ASCII part of it) occurs in s (ASCII case-insensitive
// substring): a cheap pre-check before the word walk. The first word of a
// form is a prefix of its compact form, so this finds merged forms too.
func containsAnyForm(s string, forms []nameForm) bool {
	for i := range forms {
		f := &forms[i]
		if f.anchor == "" {
			return true // nothing ASCII to look for: walk the words
		}
		if indexFold(s, f.anchor) >= 0 {
			return true
		}
		if f.anchorKS && hasFoldToASCII(s) {
			return true // a k or an s of the name may be written "K" (U+212A) or "ſ"
		}
	}
	return false
}

// mergedGreeting reports whether word is a greeting glued to the name:
// "heybanter", "yo_banter".
func mergedGreeting(word, compact string) bool {
	i := foldSuffixStart(word, compact)
	if i <= 0 {
		return false
	}
	head := word[:i]
	for len(head) > 0 && head[len(head)-1] == '_' {
		head = head[:len(head)-1]
	}
	return lookupWord(head)&flagMergedGreeting != 0
}

// isASCII reports whether s is plain ASCII.
func isASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
