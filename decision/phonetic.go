package decision

// Speech-recognition variants of the bot's name. A word is a variant of the
// name when, compared case-insensitively:
//
//   - both are ASCII, the name has at least 5 letters (shorter names have
//     too many look-alikes) and the lengths differ by at most 2;
//   - the letter edit distance (Levenshtein) is at most max(1, len(name)/3);
//   - their phonetic keys (below) start with the same sound and differ by at
//     most one edit.
//
// The similarity 1 - distance/len(name) scales the position confidence, so
// "hey banner" (distance 1 from "banter") scores 0.95 × 0.83 ≈ 0.79.

const (
	keyMax         = 32 // longest word considered, in bytes
	minVariantName = 5  // shortest name that gets speech-recognition variants
)

// phoneticKey writes a simplified Metaphone-style key of w into buf and
// returns its length: voiced/unvoiced pairs merge (b/p, d/t, g/k, f/v, s/z),
// m/n merge, vowels are kept only at the start, h/w/y are dropped and
// repeated sounds collapse. "banter" → "BNTR", "banner" → "BNR".
func phoneticKey(w string, buf *[keyMax]byte) int {
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
// length and the same first sound.
func maybeVariant(word string, f *nameForm) bool {
	if d := len(word) - len(f.compact); d > 2 || d < -2 || len(word) < 3 || f.keyLen == 0 {
		return false
	}
	var key [keyMax]byte
	if phoneticKey(word[:min(len(word), 3)], &key) == 0 {
		return false
	}
	return key[0] == f.key[0]
}

// variantSimilarity returns the similarity in (0,1) of word to the name
// form f when word is a speech-recognition variant of it, else 0. Exact
// matches are handled by the caller.
func variantSimilarity(word string, f *nameForm) float64 {
	name := f.compact
	if len(name) < minVariantName || len(word) < 3 || len(word) >= keyMax || len(name) >= keyMax || !isASCII(word) {
		return 0
	}
	if d := len(word) - len(name); d > 2 || d < -2 {
		return 0
	}
	limit := max(1, len(name)/3)
	dist := editDistance(word, name, true)
	if dist == 0 || dist > limit {
		return 0
	}
	var key [keyMax]byte
	n := phoneticKey(word, &key)
	if n == 0 || f.keyLen == 0 || key[0] != f.key[0] {
		return 0
	}
	if editDistance(key[:n], f.key[:f.keyLen], false) > 1 {
		return 0
	}
	return 1 - float64(dist)/float64(len(name))
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
