package voice

import (
	"strings"
	"unicode"
)

// turnShape is how the words of an utterance so far end, for the adaptive end of turn.
type turnShape uint8

// Shapes.
const (
	// shapeOpen: no sign either way (no final punctuation, an ordinary last word).
	shapeOpen turnShape = iota
	// shapeComplete: a question, an exclamation or a sentence that ends ("banter, what time
	// is it?"): the turn may end after a shorter silence.
	shapeComplete
	// shapeTrailing: it stops mid-clause ("so I was thinking that…", "and then the"): the
	// speaker is likely to go on; wait longer.
	shapeTrailing
)

// String returns "open", "complete" or "trailing".
func (s turnShape) String() string {
	switch s {
	case shapeComplete:
		return "complete"
	case shapeTrailing:
		return "trailing"
	}
	return "open"
}

// shapeOf reads the shape of a transcript so far. Trailing: it ends with an ellipsis, a dash,
// a comma, a semicolon or a colon, or its last word is one that cannot end a clause (a
// conjunction, an article, a preposition, a possessive, a subject pronoun, a filler) even
// with a period after it (transcribers close trailing speech with one). Complete: it ends
// with "?" or "!", or with "." after any other word. Else open.
func shapeOf(text string) turnShape {
	t := strings.TrimSpace(text)
	if t == "" {
		return shapeOpen
	}
	for _, end := range []string{"...", "…", "-", "—", "–", ",", ";", ":"} {
		if strings.HasSuffix(t, end) {
			return shapeTrailing
		}
	}
	switch t[len(t)-1] {
	case '?', '!': // "where are you from?" ends a clause whatever its last word
		return shapeComplete
	}
	fields := strings.Fields(t)
	last := strings.ToLower(strings.TrimFunc(fields[len(fields)-1], func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	}))
	switch {
	case danglingWord(last):
		return shapeTrailing
	case t[len(t)-1] == '.':
		return shapeComplete
	}
	return shapeOpen
}

// danglingWord reports whether a clause cannot end with w.
func danglingWord(w string) bool {
	switch w {
	case "and", "but", "or", "nor", "so", "because", "cause", "since", "although", "though", "that", "which",
		"whose", "if", "unless", "until", "while", "whereas", "whether", "than",
		"the", "a", "an", "my", "your", "his", "our", "their", "its",
		"to", "of", "for", "from", "with", "without", "about", "into", "onto", "at", "by", "like",
		"i", "we", "they", "he", "she", "i'm", "we're", "they're",
		"um", "uh", "er", "erm", "uhm", "hmm", "mm":
		return true
	}
	return false
}
