package store

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Facts are found by words: those of a query that can tell facts apart (factTerms), matched in
// their other forms (sameWord), weighed by how rare they are among the candidates (rankFacts).

// RankFacts keeps the facts of fs sharing a meaningful word with text, best first, at most
// limit: what Facts does with FactQuery.Text, for facts already read (a cache of them).
func RankFacts(fs []Fact, text string, limit int) []Fact {
	return rankFacts(fs, factTerms(text), limit)
}

// rankFacts keeps the facts sharing a word with terms, best first (newest first on ties), at
// most limit. A shared word weighs more the fewer facts have it (inverse document frequency
// over fs): a name outweighs "is". One-letter words (the s of "alice's") count for nothing.
func rankFacts(fs []Fact, terms []string, limit int) []Fact {
	if len(terms) == 0 {
		return nil
	}
	stems := make([]string, len(terms))
	for j, t := range terms {
		stems[j] = stem(t)
	}
	hits := make([]bool, len(fs)*len(terms)) // hits[i*len(terms)+j]: fact i has term j
	df := make([]int, len(terms))
	for i := range fs {
		words := fs[i].words
		if words == nil {
			words = wordsOf(factSearchText(fs[i]))
		}
		for j, t := range terms {
			if slices.ContainsFunc(words, func(w string) bool { return w == t || strings.HasPrefix(w, stems[j]) && sameWord(t, w) }) {
				hits[i*len(terms)+j] = true
				df[j]++
			}
		}
	}
	type scored struct {
		i     int
		score float64
	}
	var out []scored
	for i := range fs {
		score := 0.0
		for j := range terms {
			if hits[i*len(terms)+j] {
				score += math.Log(1 + float64(len(fs))/float64(df[j]))
			}
		}
		if score > 0 {
			out = append(out, scored{i, score})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return fs[b.i].CreatedAt.Compare(fs[a.i].CreatedAt)
	})
	res := make([]Fact, 0, min(len(out), limit))
	for _, s := range out[:min(len(out), limit)] {
		res = append(res, fs[s.i])
	}
	return res
}

// factTerms are the words of a fact query that can tell facts apart: its search terms without
// one-letter words (the s of "alice's") and the commonest English function words, which
// nearly every statement has.
func factTerms(text string) []string {
	return slices.DeleteFunc(searchTerms(text), func(t string) bool {
		return utf8.RuneCountInString(t) < 2 || isStopWord(t)
	})
}

// isStopWord reports whether w is an English function word (questions' and statements' glue).
func isStopWord(w string) bool {
	switch w {
	case "a", "an", "the", "is", "are", "was", "were", "be", "been", "am", "do", "does", "did", "doing", "have", "has",
		"had", "of", "to", "in", "on", "at", "by", "for", "from", "with", "about", "as", "into", "and", "or", "but", "if",
		"so", "not", "no", "what", "who", "whom", "whose", "which", "where", "when", "why", "how", "this", "that", "these",
		"those", "it", "its", "my", "your", "our", "their", "his", "her", "me", "you", "we", "they", "he", "she", "him",
		"them", "i", "now", "then", "there", "here", "any", "some", "all", "can", "could", "would", "should", "will",
		"just", "very", "too", "also":
		return true
	}
	return false
}

// sameWord reports whether a query word and a fact's word are one word in another form: equal,
// or, for words of four letters or more, sharing their stem ("live", "lives", "lived"). The
// stem is the word without its last letters, up to three, keeping four ("works" → "work").
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	if utf8.RuneCountInString(a) < 4 || utf8.RuneCountInString(b) < 4 {
		return false
	}
	return strings.HasPrefix(b, stem(a)) && strings.HasPrefix(a, stem(b))
}

// stem is a word without up to three of its last letters, keeping at least four.
func stem(w string) string {
	r := []rune(w)
	if len(r) <= 4 {
		return w
	}
	return string(r[:len(r)-min(3, len(r)-4)])
}

// wordsOf splits folded text (foldText) into its words of letters and digits.
func wordsOf(folded string) []string {
	return strings.FieldsFunc(folded, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
