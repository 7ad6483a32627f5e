package decision

// Speech-recognition variants of the bot's name. A word is a variant of the
// name when, compared case-insensitively:
//
//   - both are ASCII, the name has at least 5 letters (shorter names have
//     too many look-alikes), and the word has at most 2 letters more or 1
//     letter fewer;
//   - the word is not the name plus an ending ("banters", "bantering");
//   - the sound distance (a weighted edit distance, below) is at most
//     max(1, len(name)/3) edits;
//   - their phonetic keys (below) start with the same sound and differ by at
//     most one edit.
//
// The sound distance counts an edit that barely changes the sound as half
// an edit: one vowel for another, one consonant for its voiced or unvoiced
// twin (b/p, d/t, g/k/c/q, f/v, s/z/x/c, m/n), adding or dropping a vowel,
// an h, a doubled letter, the c of "ck", or a final r after a vowel (the
// non-rhotic "banta" for "banter"). Other edits count in full. The
// similarity 1 - 1.2 × distance/len(name) scales the position confidence:
// "hey banner" (one edit from "banter") scores 0.95 × 0.8 = 0.76, "hey
// bantor" (half an edit) 0.95 × 0.9 ≈ 0.86, "hey better" (one and a half)
// 0.95 × 0.7 ≈ 0.67, under the fast path.

const (
	keyMax         = 32 // longest word considered, in bytes
	minVariantName = 5  // shortest name that gets speech-recognition variants
)

// phoneticKey writes a simplified Metaphone-style key of w into buf and
// returns its length: voiced/unvoiced pairs merge (b/p, d/t, g/k, f/v, s/z),
// m/n merge, vowels are kept only at the start, h/w/y are dropped and
// repeated sounds collapse. "banter" → "BNTR", "banner" → "BNR".
func phoneticKey[T string | []byte](w T, buf *[keyMax]byte) int {
	n := 0
	var last byte
	for i := 0; i < len(w) && n < keyMax; i++ {
		c := lower(w[i])
		var next byte
		if i+1 < len(w) {
			next = lower(w[i+1])
		}
		var k byte
		switch c {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			if i == 0 {
				k = 'A'
			} else {
				last = 0 // a vowel separates repeated consonants ("banana" keeps both n)
				continue
			}
		case 'b', 'p':
			k = 'B'
			if c == 'p' && next == 'h' {
				k = 'F'
				i++
			}
		case 'c':
			k = 'K'
			if next == 'e' || next == 'i' || next == 'y' {
				k = 'S'
			}
		case 'g', 'k', 'q':
			k = 'K'
		case 'j':
			k = 'J'
		case 'd', 't':
			k = 'T'
			if c == 't' && next == 'h' {
				i++
			}
		case 'f', 'v':
			k = 'F'
		case 's', 'z', 'x':
			k = 'S'
		case 'm', 'n':
			k = 'N'
		case 'l':
			k = 'L'
		case 'r':
			k = 'R'
		default: // h, w, digits, apostrophes
			continue
		}
		if k == last {
			continue
		}
		buf[n] = k
		n++
		last = k
	}
	return n
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// maybeVariant is the cheap pre-check of variantSimilarity: plausible
// length, the same first sound, and not the name with an ending.
func maybeVariant(word string, f *nameForm) bool {
	if d := len(word) - len(f.compact); d > 2 || d < -1 || len(word) < 3 || f.keyLen == 0 {
		return false // a word two letters shorter ("band") is another word
	}
	if len(word) > len(f.compact) && foldPrefixLen(word, f.compact) >= 0 {
		return false // "banters", "zorviks": the name inflected, a different word
	}
	return firstSound(word) == f.key[0]
}

// firstSound returns the first letter of the phonetic key of w, or 0.
func firstSound(w string) byte {
	var key [keyMax]byte
	if phoneticKey(w[:min(len(w), 3)], &key) == 0 {
		return 0
	}
	return key[0]
}

// variantSimilarity returns the similarity in (0,1] of word to the name
// form f when word is a speech-recognition variant of it (1 when it only
// differs in case), else 0.
func variantSimilarity[T string | []byte](word T, f *nameForm) float64 {
	name := f.compact
	if len(name) < minVariantName || len(word) < 3 || len(word) >= keyMax || len(name) >= keyMax || !isASCII(word) {
		return 0
	}
	if d := len(word) - len(name); d > 2 || d < -1 {
		return 0
	}
	var key [keyMax]byte // the phonetic check first: it is the cheaper one
	n := phoneticKey(word, &key)
	if n == 0 || f.keyLen == 0 || key[0] != f.key[0] {
		return 0
	}
	if editDistance(key[:n], f.key[:f.keyLen], false) > 1 {
		return 0
	}
	half := soundDistance(word, name)
	if half > 2*max(1, len(name)/3) {
		return 0
	}
	return 1 - 1.2*float64(half)/float64(2*len(name))
}

// splitFactor discounts a name heard as two words ("ban ter").
const splitFactor = 0.95

// splitSimilarity returns the similarity to f of the two words a and b
// heard as one ("ban ter", "zor vick"), or 0.
func splitSimilarity(a, b string, f *nameForm) float64 {
	var buf [keyMax]byte
	if len(a)+len(b) >= keyMax || len(b) == 0 {
		return 0
	}
	n := copy(buf[:], a)
	n += copy(buf[n:], b)
	return splitFactor * variantSimilarity(buf[:n], f)
}

// hasMergedGreeting reports whether word starts with a greeting that may be
// glued to a name, followed by at least three more letters.
func hasMergedGreeting(word string) bool {
	for _, g := range mergedGreetings {
		if len(word) >= len(g)+3 && hasPrefixFold(word, g) {
			return true
		}
	}
	return false
}

// mergedVariant returns the similarity to f of word without a glued-on
// greeting ("heybanner"), or 0.
func mergedVariant(word string, f *nameForm) float64 {
	best := 0.0
	for _, g := range mergedGreetings {
		if len(word) < len(g)+3 || !hasPrefixFold(word, g) {
			continue
		}
		rest := word[len(g):]
		for len(rest) > 0 && rest[0] == '_' {
			rest = rest[1:]
		}
		if maybeVariant(rest, f) {
			best = max(best, variantSimilarity(rest, f))
		}
	}
	return best
}

func isVowel(c byte) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y'
}

// soundClass groups consonants that speech recognition confuses.
func soundClass(c byte) byte {
	switch c {
	case 'b', 'p':
		return 1
	case 'd', 't':
		return 2
	case 'g', 'k', 'q', 'c':
		return 3
	case 'f', 'v':
		return 4
	case 's', 'z', 'x':
		return 5
	case 'm', 'n':
		return 6
	}
	return 0
}

// substitution costs half an edit (1) between like sounds, else a full
// edit (2).
func substitution(a, b byte) int {
	switch {
	case a == b:
		return 0
	case isVowel(a) && isVowel(b),
		soundClass(a) != 0 && soundClass(a) == soundClass(b),
		(a == 'c' && b == 's') || (a == 's' && b == 'c'):
		return 1
	}
	return 2
}

// indel is the cost of adding or dropping w[i]: half an edit (1) for a
// vowel, an h, a doubled letter, the c of "ck" or a final r after a vowel;
// else a full edit (2).
func indel[T string | []byte](w T, i int) int {
	c := lower(w[i])
	switch {
	case c == 'h' && i == len(w)-1 && i > 0 && isVowel(lower(w[i-1])):
		return 0 // a spelled-out final vowel: "bantah"
	case isVowel(c) || c == 'h':
		return 1
	case i > 0 && lower(w[i-1]) == c, i+1 < len(w) && lower(w[i+1]) == c:
		return 1
	case c == 'c' && i+1 < len(w) && lower(w[i+1]) == 'k':
		return 1
	case c == 'r' && i == len(w)-1 && i > 0 && isVowel(lower(w[i-1])):
		return 1
	}
	return 2
}

// soundDistance is the weighted edit distance of word to name in half
// edits (see the top of the file), ASCII case-insensitive. Both are shorter
// than keyMax bytes. It does not allocate.
func soundDistance[T string | []byte](word T, name string) int {
	var prev, cur [keyMax + 1]int
	for j := 1; j <= len(name); j++ {
		prev[j] = prev[j-1] + indel(name, j-1)
	}
	for i := 1; i <= len(word); i++ {
		cur[0] = prev[0] + indel(word, i-1)
		ca := lower(word[i-1])
		for j := 1; j <= len(name); j++ {
			cur[j] = min(prev[j]+indel(word, i-1), cur[j-1]+indel(name, j-1), prev[j-1]+substitution(ca, lower(name[j-1])))
		}
		prev = cur
	}
	return prev[len(name)]
}

// editDistance is the Levenshtein distance of two strings shorter than
// keyMax bytes, optionally ASCII case-insensitive. It does not allocate.
func editDistance[T string | []byte](a, b T, fold bool) int {
	var prev, cur [keyMax + 1]int
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		ca := a[i-1]
		if fold {
			ca = lower(ca)
		}
		for j := 1; j <= len(b); j++ {
			cb := b[j-1]
			if fold {
				cb = lower(cb)
			}
			cost := 1
			if ca == cb {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
