package decision

// How the name matcher hears the name the way people write it: typos and
// elongations ("bantr", "banetr", "banterrr", "baaanter"), compounds
// ("banterbot", "banter-bot", "banter_bot") and, in speech transcripts, the
// name cut at the start of the recording ("…ter, what time is it").

const (
	minTypoName = 5    // shortest name that gets typos
	typoSim     = 0.9  // a typo one edit away
	elongSim    = 0.95 // the name with letters held ("banterrr")
	cutSim      = 0.8  // the end of the name at the start of a transcript
	minCutLen   = 3    // shortest cut name ("ter")
)

// typoGuard are real words one edit from a name people give bots: they are
// never read as typos ("the banner is up", "we could barter").
var typoGuard = []string{
	"banner", "banners", "banker", "batter", "barter", "banger", "bantam", "butter", "better", "bather", "baiter",
	"bander", "barker", "canter", "center", "enter", "after", "water", "matter", "letter", "later", "hunter",
	"painter", "panther", "winter", "bantry", "banty", "santer", "ranter", "panter", "bunter",
}

// collapse writes w lower-cased with runs of one letter held to one
// ("baaanterrr" → "banter") into buf and returns its length; 0 when w is
// not ASCII or too long.
func collapse[T string | []byte](w T, buf *[keyMax]byte) int {
	if len(w) >= 2*keyMax {
		return 0
	}
	n := 0
	for i := 0; i < len(w); i++ {
		c := lower(w[i])
		if c >= 0x80 {
			return 0
		}
		if n > 0 && buf[n-1] == c {
			continue
		}
		if n == keyMax {
			return 0
		}
		buf[n] = c
		n++
	}
	return n
}

// typoSimilarity returns the similarity of word to the single-word name
// form f when word is the name typed with held letters (elongSim) or one
// edit away (typoSim: a letter added, dropped, changed or two letters
// swapped, after held letters collapse); 0 otherwise. With elongOnly only
// held letters count. The first letter
// must agree, the name have at least minTypoName letters, and word must be
// neither a guarded real word nor the name with an ending ("banters").
func typoSimilarity(word string, f *nameForm, elongOnly bool) float64 {
	name := f.compact
	if len(f.words) != 1 || len(name) < minTypoName || len(word) < minTypoName-1 || lower(word[0]) != lower(name[0]) {
		return 0
	}
	var wb, nb [keyMax]byte
	wn, nn := collapse(word, &wb), collapse(name, &nb)
	if wn == 0 || nn == 0 || wn+1 < nn || wn > nn+1 {
		return 0
	}
	if wn == nn && string(wb[:wn]) == string(nb[:nn]) {
		if len(word) == len(name) {
			return 0 // the name itself (matched exactly elsewhere)
		}
		return elongSim
	}
	if elongOnly {
		return 0
	}
	if wn > nn && string(wb[:nn]) == string(nb[:nn]) {
		return 0 // "banters": the name with an ending
	}
	for _, g := range typoGuard {
		if len(g) == len(word) && isWord(word, g) {
			return 0
		}
	}
	if lookupWord(word) != 0 {
		return 0
	}
	if osaDistance(wb[:wn], nb[:nn]) > 1 {
		return 0
	}
	return typoSim
}

// osaDistance is the optimal-string-alignment (restricted
// Damerau-Levenshtein) distance of two byte strings shorter than keyMax:
// insertions, deletions, substitutions and swaps of neighbours. It does not
// allocate.
func osaDistance(a, b []byte) int {
	var prev2, prev, cur [keyMax + 1]int
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev = prev, cur
	}
	return prev[len(b)]
}

// compoundOf reports whether word is the single-word name form f with
// "bot" attached ("banterbot", "banter-bot", "banter_bot").
func compoundOf(word string, f *nameForm) bool {
	if len(f.words) != 1 || len(word) < f.minC+3 {
		return false
	}
	n := foldPrefixLen(word, f.compact)
	if n < 0 || len(word) < n+3 {
		return false
	}
	rest := word[n:]
	if rest[0] == '-' || rest[0] == '_' {
		rest = rest[1:]
	}
	return len(rest) == 3 && isWord(rest, "bot")
}

// cutName reports whether word, the first word of a speech transcript, is
// the end of the single-word name form f: the recording started late
// ("ter", "nter", "anter" for "banter"). List words ("her", "after") are
// words, not cut names.
func cutName(word string, f *nameForm) bool {
	name := f.compact
	return len(f.words) == 1 && len(name) >= minTypoName && len(word) >= minCutLen && len(word) < len(name) &&
		foldSuffixStart(name, word) >= 0 && lookupWord(word) == 0 && isASCII(word)
}

// typoOf reports whether word is a typo or an elongation of f, setting
// sim. A speech recognizer makes no keyboard typos: in voice only held
// letters count (its own look-alikes are read in phonetic.go).
func typoOf(word string, f *nameForm, voice bool, sim *float64) bool {
	v := typoSimilarity(word, f, voice)
	if v > 0 {
		*sim = v
	}
	return v > 0
}

// botAfter extends a single-word name that ends at end with a following
// "bot" ("banter bot, what's …"): tz moves past it. It returns where the
// name ends and whether it ends in 's.
func botAfter(s string, tz *tokenizer, end int, possessive bool) (int, bool) {
	if possessive {
		return end, possessive
	}
	t2 := *tz
	nt, ok := t2.next()
	if !ok || nt.pre != sepSpace {
		return end, possessive
	}
	w, pos := trimWord(s[nt.start:nt.end])
	if len(w) != 3 || !isWord(w, "bot") {
		return end, possessive
	}
	*tz = t2
	return nt.end, pos
}

// typoCandidate is the cheap pre-check for typos in a text without the
// name: a word that starts with the first letter of a single-word name of
// at least minTypoName letters and is long enough to be a typo of it.
func typoCandidate(s string, forms []nameForm) bool {
	for i := range forms {
		f := &forms[i]
		if len(f.words) != 1 || len(f.compact) < minTypoName {
			continue
		}
		lo := lower(f.compact[0])
		for j := 0; j < len(s); j++ {
			if lower(s[j]) != lo || (j > 0 && isAlnum(s[j-1])) {
				continue
			}
			k := j + 1
			for k < len(s) && isAlnum(s[k]) {
				k++
			}
			if k-j >= len(f.compact)-1 {
				return true
			}
			j = k
		}
	}
	return false
}
