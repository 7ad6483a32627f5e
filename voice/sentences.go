package voice

import (
	"strings"
	"unicode/utf8"
)

// Sentencer cuts streamed reply text into chunks for speech: the first chunk
// goes out early (at the first clause break once FirstMin bytes are in, or at
// a sentence end, or — in a long first sentence with neither — before a
// conjunction once FirstMax bytes are in), later ones at sentence ends, so the
// first words play while the rest is still being generated. The zero value
// uses the defaults. It is not safe for concurrent use.
type Sentencer struct {
	// FirstMin is the shortest first chunk cut at a clause break (",", ";",
	// ":", a dash) or before a conjunction [24 bytes]; sentence ends cut at
	// any length.
	FirstMin int
	// FirstMax: a first sentence that has no clause break after this many
	// bytes is cut before its last conjunction or relative word ("and",
	// "because", "which"…) past FirstMin, so that the first chunk is still
	// a phrase (its intonation holds) [48 bytes; negative: never].
	FirstMax int
	// MaxChunk forces a cut at the last space once a chunk grows this long
	// without a sentence end [240 bytes].
	MaxChunk int

	buf    strings.Builder
	chunks int
}

// Push adds a text delta and appends every chunk that is complete now to
// out, returning it.
func (s *Sentencer) Push(out []string, delta string) []string {
	s.buf.WriteString(delta)
	for {
		text := s.buf.String()
		cut := s.cut(text)
		if cut <= 0 {
			return out
		}
		chunk := strings.TrimSpace(text[:cut])
		rest := text[cut:]
		s.buf.Reset()
		s.buf.WriteString(rest)
		if chunk != "" {
			out = append(out, chunk)
			s.chunks++
		}
	}
}

// Finish returns what is left (trimmed; may be empty) and resets s.
func (s *Sentencer) Finish() string {
	rest := strings.TrimSpace(s.buf.String())
	s.buf.Reset()
	s.chunks = 0
	return rest
}

// cut returns the end of the first complete chunk in text, or 0.
func (s *Sentencer) cut(text string) int {
	firstMin, maxChunk := s.FirstMin, s.MaxChunk
	if firstMin <= 0 {
		firstMin = 24
	}
	if maxChunk <= 0 {
		maxChunk = 240
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		end := i + n
		switch r {
		case '\n':
			return end
		case '.', '!', '?', '…':
			// A sentence end needs the next character to be known: "3.5" and
			// "e.g." must not cut, and "?!" runs stay together.
			if end >= len(text) {
				return 0
			}
			next, _ := utf8.DecodeRuneInString(text[end:])
			if next == ' ' || next == '\n' || next == '"' || next == ')' {
				if r == '.' && abbreviation(text[:i]) {
					break
				}
				return end
			}
		case ',', ';', ':', '—':
			if s.chunks == 0 && i >= firstMin && end < len(text) {
				next, _ := utf8.DecodeRuneInString(text[end:])
				if next == ' ' {
					return end
				}
			}
		}
		i = end
	}
	firstMax := s.FirstMax
	if firstMax == 0 {
		firstMax = 48
	}
	if s.chunks == 0 && firstMax > 0 && len(text) >= firstMax {
		if at := phraseCut(text, firstMin); at > 0 {
			return at
		}
	}
	if len(text) >= maxChunk {
		if sp := strings.LastIndexByte(text[:maxChunk], ' '); sp > 0 {
			return sp + 1
		}
		return maxChunk
	}
	return 0
}

// phraseCut returns where the last complete conjunction or relative word of text starts
// (after at least min bytes), or 0: the first chunk ends before it ("…the station | and
// then walk"), at a phrase boundary.
func phraseCut(text string, min int) int {
	end := strings.LastIndexByte(text, ' ') // the word after it may still be growing
	for end > min {
		start := strings.LastIndexByte(text[:end], ' ')
		if start < min {
			return 0
		}
		prev := strings.LastIndexByte(text[:max(start, 0)], ' ')
		if phraseWord(strings.ToLower(text[start+1:end])) && !phraseWord(strings.ToLower(text[prev+1:start])) {
			return start + 1 // not between two of them: "…eight | so if we leave"
		}
		end = start
	}
	return 0
}

// phraseWord reports whether w starts a new phrase (a conjunction or a relative word): a
// chunk may end before it.
func phraseWord(w string) bool {
	switch w {
	case "and", "but", "or", "so", "because", "since", "which", "who", "where", "when", "while", "if",
		"unless", "until", "although", "though", "whereas":
		return true
	}
	return false
}

// abbreviation reports whether the word before a period is a common
// abbreviation or a single letter ("Mr.", "e.g.", "U.S.").
func abbreviation(before string) bool {
	w := before
	if sp := strings.LastIndexAny(before, " \n("); sp >= 0 {
		w = before[sp+1:]
	}
	if len(w) == 1 {
		return true
	}
	switch strings.ToLower(w) {
	case "mr", "mrs", "ms", "dr", "st", "vs", "etc", "e.g", "i.e", "prof", "jr", "sr":
		return true
	}
	return false
}
