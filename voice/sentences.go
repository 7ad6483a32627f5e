package voice

import (
	"strings"
	"unicode/utf8"
)

// Sentencer cuts streamed reply text into chunks for speech: the first chunk
// goes out early (at the first clause break once FirstMin bytes are in, or at
// a sentence end), later ones at sentence ends, so the first words play while
// the rest is still being generated. The zero value uses the defaults. It is
// not safe for concurrent use.
type Sentencer struct {
	// FirstMin is the shortest first chunk cut at a clause break (",", ";",
	// ":", a dash) [24 bytes]; sentence ends cut at any length.
	FirstMin int
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
	if len(text) >= maxChunk {
		if sp := strings.LastIndexByte(text[:maxChunk], ' '); sp > 0 {
			return sp + 1
		}
		return maxChunk
	}
	return 0
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
