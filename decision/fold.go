package decision

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Case folding of names. Names, aliases and nicknames match rune by rune
// under Unicode simple case folding (strings.EqualFold): "K" (U+212A KELVIN
// SIGN) is "k", "ẞ" is "ß", "Ω" (U+2126 OHM SIGN) is "ω", "İ" is only
// itself. A letter and its other case may differ in byte length, so the
// matcher never assumes that a word and the name it folds to have the same
// length: it compares runes and measures where the match ends in the text.
// Full case folding ("ß" = "ss") is not done.

// foldEq reports whether r and q are equal under simple case folding, as
// strings.EqualFold compares runes.
func foldEq(r, q rune) bool {
	if r == q {
		return true
	}
	if q < r {
		r, q = q, r
	}
	if q < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z' && q == r+'a'-'A'
	}
	// The orbit of a rune under SimpleFold is a cycle of increasing runes
	// (wrapping once): walk it from the smaller one.
	f := unicode.SimpleFold(r)
	for f != r && f < q {
		f = unicode.SimpleFold(f)
	}
	return f == q
}

// foldPrefixLen returns the length in bytes of the prefix of s that is
// prefix under simple case folding, or -1 when s does not start with it.
// It does not allocate.
func foldPrefixLen(s, prefix string) int {
	i, j := 0, 0
	for j < len(prefix) {
		if i >= len(s) {
			return -1
		}
		if a, b := s[i], prefix[j]; a|b < utf8.RuneSelf {
			if a != b && lower(a) != lower(b) {
				return -1
			}
			i, j = i+1, j+1
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		q, m := utf8.DecodeRuneInString(prefix[j:])
		if !foldEq(r, q) {
			return -1
		}
		i, j = i+n, j+m
	}
	return i
}

// foldSuffixStart returns where the suffix of s that is suffix under simple
// case folding starts, or -1 when s does not end with it. It does not
// allocate.
func foldSuffixStart(s, suffix string) int {
	i, j := len(s), len(suffix)
	for j > 0 {
		if i == 0 {
			return -1
		}
		if a, b := s[i-1], suffix[j-1]; a|b < utf8.RuneSelf {
			if a != b && lower(a) != lower(b) {
				return -1
			}
			i, j = i-1, j-1
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s[:i])
		q, m := utf8.DecodeLastRuneInString(suffix[:j])
		if !foldEq(r, q) {
			return -1
		}
		i, j = i-n, j-m
	}
	return i
}

// sameFirstRuneFold reports whether a and b start with the same letter
// under simple case folding.
func sameFirstRuneFold(a, b string) bool {
	r, _ := utf8.DecodeRuneInString(a)
	q, _ := utf8.DecodeRuneInString(b)
	return foldEq(r, q)
}

// foldLenBounds returns the shortest and longest byte length of a string
// equal to s under simple case folding ("kai": 3 and 5, for "\u212Aai").
// It does not allocate.
func foldLenBounds(s string) (lo, hi int) {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// The only non-ASCII letters that fold to ASCII ones are "K"
			// (U+212A, 3 bytes) and "ſ" (2 bytes).
			lo, hi, i = lo+1, hi+1, i+1
			switch c | 0x20 {
			case 'k':
				hi += 2
			case 's':
				hi++
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		l, h := n, n
		if r != utf8.RuneError || n > 1 { // an invalid byte folds to nothing else
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				k := utf8.RuneLen(f)
				l, h = min(l, k), max(h, k)
			}
		}
		lo, hi, i = lo+l, hi+h, i+n
	}
	return lo, hi
}

// foldLower returns s with each letter lower-cased where its lower case is
// the same letter under simple case folding ("STRAẞE" → "straße", but "İ"
// stays "İ": its lower case "i" folds to "I", not to it).
func foldLower(s string) string {
	return strings.Map(func(r rune) rune {
		if l := unicode.ToLower(r); l != r && foldEq(r, l) {
			return l
		}
		return r
	}, s)
}

// Non-ASCII letters that fold to ASCII ones: U+212A KELVIN SIGN ("k") and
// U+017F LATIN SMALL LETTER LONG S ("s"). An ASCII name with a k or an s
// may occur in a text the ASCII pre-check (indexFold) cannot find it in.
const (
	kelvinSign = "\u212a"
	longS      = "\u017f"
)

// foldsToASCII reports whether r is one of the non-ASCII letters that fold
// to an ASCII one.
func foldsToASCII(r rune) bool { return r == '\u212a' || r == '\u017f' }

// hasFoldToASCII reports whether s holds a letter that folds to an ASCII
// one without being ASCII.
func hasFoldToASCII(s string) bool {
	return strings.Contains(s, kelvinSign) || strings.Contains(s, longS)
}
