package openaisim

import "unicode"

// manner is how a phone is made: what sounds (the voice, breath, hiss) and how
// it starts and stops.
type manner uint8

const (
	vowel     manner = iota // voiced, open: the syllable's nucleus
	glide                   // l r w y: voiced, weaker, formants moving
	nasal                   // m n ng: a low murmur
	fricative               // s z f v sh th: hiss shaped by a band, voiced or not
	aspirate                // h: breath through the next vowel's formants
	stop                    // p b t d k g: closure, burst, then (unvoiced) breath
)

// hiss is the band noise of a fricative or a stop's burst: centre and
// bandwidth in Hz, and its level against a vowel's.
type hiss struct{ centre, bw, level float64 }

// phone is one sound of a word, as its letters are read.
type phone struct {
	manner manner
	voiced bool
	// formants are the targets F1..F3 in Hz (of a male voice): the vowel's,
	// the glide's or the nasal's; a stop's F2 locus in formants[1].
	formants [3]float64
	hiss     hiss
	weight   float64 // share of the word's time, before stress and lengthening
}

// Formant targets (F1, F2, F3 in Hz, after Peterson and Barney's men's
// averages) and the consonants' bands, by letter.
var (
	schwa = phone{manner: vowel, voiced: true, formants: [3]float64{500, 1500, 2500}, weight: 1.5}
	// letterPhones are the phones of a-z read alone; digraphs are in digraphPhone.
	letterPhones = [26]phone{
		'a' - 'a': {manner: vowel, voiced: true, formants: [3]float64{660, 1720, 2410}, weight: 1.7},
		'b' - 'a': {manner: stop, voiced: true, formants: [3]float64{0, 900, 0}, hiss: hiss{900, 1500, 0.25}, weight: 0.9},
		'c' - 'a': {manner: stop, formants: [3]float64{0, 2000, 0}, hiss: hiss{2300, 1200, 0.5}, weight: 1},
		'd' - 'a': {manner: stop, voiced: true, formants: [3]float64{0, 1800, 0}, hiss: hiss{4200, 2500, 0.35}, weight: 0.9},
		'e' - 'a': {manner: vowel, voiced: true, formants: [3]float64{530, 1840, 2480}, weight: 1.6},
		'f' - 'a': {manner: fricative, hiss: hiss{6500, 7000, 0.14}, weight: 1},
		'g' - 'a': {manner: stop, voiced: true, formants: [3]float64{0, 2000, 0}, hiss: hiss{2300, 1200, 0.35}, weight: 0.9},
		'h' - 'a': {manner: aspirate, weight: 0.7},
		'i' - 'a': {manner: vowel, voiced: true, formants: [3]float64{390, 1990, 2550}, weight: 1.5},
		'j' - 'a': {manner: fricative, voiced: true, formants: [3]float64{280, 2100, 2900}, hiss: hiss{3000, 1600, 0.35}, weight: 1},
		'k' - 'a': {manner: stop, formants: [3]float64{0, 2000, 0}, hiss: hiss{2300, 1200, 0.5}, weight: 1},
		'l' - 'a': {manner: glide, voiced: true, formants: [3]float64{360, 1050, 2700}, weight: 0.9},
		'm' - 'a': {manner: nasal, voiced: true, formants: [3]float64{250, 1000, 2200}, weight: 0.9},
		'n' - 'a': {manner: nasal, voiced: true, formants: [3]float64{250, 1600, 2600}, weight: 0.9},
		'o' - 'a': {manner: vowel, voiced: true, formants: [3]float64{590, 900, 2450}, weight: 1.7},
		'p' - 'a': {manner: stop, formants: [3]float64{0, 900, 0}, hiss: hiss{900, 1500, 0.35}, weight: 1},
		'q' - 'a': {manner: stop, formants: [3]float64{0, 2000, 0}, hiss: hiss{2300, 1200, 0.5}, weight: 1},
		'r' - 'a': {manner: glide, voiced: true, formants: [3]float64{420, 1250, 1650}, weight: 0.9},
		's' - 'a': {manner: fricative, hiss: hiss{5500, 2500, 0.45}, weight: 1.2},
		't' - 'a': {manner: stop, formants: [3]float64{0, 1800, 0}, hiss: hiss{4200, 2500, 0.5}, weight: 1},
		'u' - 'a': {manner: vowel, voiced: true, formants: [3]float64{640, 1190, 2390}, weight: 1.5},
		'v' - 'a': {manner: fricative, voiced: true, formants: [3]float64{300, 1200, 2300}, hiss: hiss{6500, 7000, 0.1}, weight: 0.9},
		'w' - 'a': {manner: glide, voiced: true, formants: [3]float64{300, 650, 2200}, weight: 0.8},
		'x' - 'a': {manner: fricative, hiss: hiss{5500, 2500, 0.45}, weight: 1.3}, // after a k, see phonesOf
		'y' - 'a': {manner: vowel, voiced: true, formants: [3]float64{300, 2200, 2950}, weight: 1.5},
		'z' - 'a': {manner: fricative, voiced: true, formants: [3]float64{300, 1500, 2500}, hiss: hiss{5500, 2500, 0.3}, weight: 1.1},
	}
	yGlide   = phone{manner: glide, voiced: true, formants: [3]float64{270, 2100, 3000}, weight: 0.8}
	shPhone  = phone{manner: fricative, hiss: hiss{2900, 1600, 0.5}, weight: 1.3}
	thPhone  = phone{manner: fricative, voiced: true, formants: [3]float64{350, 1500, 2500}, hiss: hiss{6500, 7000, 0.08}, weight: 0.9}
	ngPhone  = phone{manner: nasal, voiced: true, formants: [3]float64{250, 2000, 2700}, weight: 1}
	digitVow = [10]byte{'i', 'u', 'u', 'i', 'o', 'a', 'i', 'e', 'e', 'a'}
)

// digraphPhone is the phone of two letters read together, if they are one.
func digraphPhone(a, b rune) (phone, bool) {
	switch string([]rune{a, b}) {
	case "sh", "ch":
		return shPhone, true
	case "th":
		return thPhone, true
	case "ph":
		return letterPhones['f'-'a'], true
	case "ng":
		return ngPhone, true
	case "ck":
		return letterPhones['k'-'a'], true
	case "wh":
		return letterPhones['w'-'a'], true
	}
	return phone{}, false
}

// asciiLetter maps a letter or digit to a-z or 0-9: ASCII as is, any other
// letter to one of a-z by its code point (deterministic, not a reading).
func asciiLetter(r rune) rune {
	r = unicode.ToLower(r)
	switch {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		return r
	case unicode.IsDigit(r):
		return '0' + r%10
	default:
		return 'a' + r%26
	}
}

// phonesOf reads a word (letters and digits) as phones, roughly as English
// spelling sounds: digraphs (sh, th, ng, ...), doubled letters as one, c
// before e/i/y as s, x as k+s, y before a vowel as a glide, a final silent e,
// digits as syllables. A word without a vowel gets one in front ("s" → "es").
func phonesOf(word []rune) []phone {
	w := make([]rune, len(word))
	for i, r := range word {
		w[i] = asciiLetter(r)
	}
	out := make([]phone, 0, len(w)+1)
	for i := 0; i < len(w); i++ {
		r := w[i]
		if r >= '0' && r <= '9' {
			out = append(out, letterPhones['n'-'a'], letterPhones[digitVow[r-'0']-'a'])
			continue
		}
		if i+1 < len(w) {
			if p, ok := digraphPhone(r, w[i+1]); ok {
				out = append(out, p)
				i++
				continue
			}
		}
		p := letterPhones[r-'a']
		switch {
		case r == 'e' && i == len(w)-1 && i >= 2 && !isVowelLetter(w[i-1]) && hasVowelLetter(w[:i-1]):
			continue // silent final e: "like", "there"
		case r == 'c' && i+1 < len(w) && (w[i+1] == 'e' || w[i+1] == 'i' || w[i+1] == 'y'):
			p = letterPhones['s'-'a']
		case r == 'y' && i+1 < len(w) && isVowelLetter(w[i+1]):
			p = yGlide
		case r == 'x':
			out = append(out, letterPhones['k'-'a'])
		}
		if i+1 < len(w) && w[i+1] == r && p.manner != vowel {
			p.weight *= 1.3 // a doubled consonant is one, a little longer
			i++
		}
		out = append(out, p)
	}
	for _, p := range out {
		if p.manner == vowel {
			return out
		}
	}
	return append([]phone{schwa}, out...)
}

func isVowelLetter(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func hasVowelLetter(w []rune) bool {
	for _, r := range w {
		if isVowelLetter(r) {
			return true
		}
	}
	return false
}
