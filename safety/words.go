package safety

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// WordList matches whole words or phrases case-insensitively (ban words). The zero value
// matches nothing.
type WordList struct {
	words []string // lower-cased
}

// NewWordList returns a list matching words (blank entries are ignored).
func NewWordList(words []string) WordList {
	var w WordList
	for _, s := range words {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			w.words = append(w.words, s)
		}
	}
	return w
}

// find returns the byte ranges in s where a listed word occurs as a whole word.
func (w WordList) find(s string) [][2]int {
	if len(w.words) == 0 {
		return nil
	}
	lower, span := foldCase(s)
	var out [][2]int
	for _, word := range w.words {
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], word)
			if i < 0 {
				break
			}
			start, end := from+i, from+i+len(word)
			if boundary(lower, start-1, true) && boundary(lower, end, false) {
				out = append(out, span(start, end))
			}
			from = start + 1
		}
	}
	return out
}

// foldCase lower-cases s. span maps a byte range of the result back to the range of s it came
// from, widened to whole runes: lower-casing may change a rune's length ("İ" becomes "i̇").
// Invalid bytes are kept as they are.
func foldCase(s string) (lower string, span func(start, end int) [2]int) {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		return strings.ToLower(s), func(start, end int) [2]int { return [2]int{start, end} }
	}
	var b strings.Builder
	from := make([][2]int, 0, len(s)) // for each byte of lower: its source rune's range in s
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+n] // an invalid byte stays as it is
		if r != utf8.RuneError || n > 1 {
			piece = string(unicode.ToLower(r))
		}
		b.WriteString(piece)
		for range len(piece) {
			from = append(from, [2]int{i, i + n})
		}
		i += n
	}
	return b.String(), func(start, end int) [2]int { return [2]int{from[start][0], from[end-1][1]} }
}

// boundary reports whether the rune ending at (before) or starting at (after) byte i is not part
// of a word.
func boundary(s string, i int, before bool) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	var r rune
	if before {
		r, _ = utf8.DecodeLastRuneInString(s[:i+1])
	} else {
		r, _ = utf8.DecodeRuneInString(s[i:])
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// Contains reports whether s contains a listed word.
func (w WordList) Contains(s string) bool { return len(w.find(s)) > 0 }

// Scrub replaces every listed word in s with one asterisk per character.
func (w WordList) Scrub(s string) string {
	ranges := w.find(s)
	if len(ranges) == 0 {
		return s
	}
	masked := make([]bool, len(s))
	for _, r := range ranges {
		for i := r[0]; i < r[1]; i++ {
			masked[i] = true
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		if masked[i] {
			b.WriteByte('*')
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
