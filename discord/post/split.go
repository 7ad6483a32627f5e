package post

import (
	"strings"
	"unicode"
)

// Defuse breaks mass mentions and role mentions in text so that even a client ignoring
// allowed_mentions shows them as plain text. allowed_mentions is the real guard.
func Defuse(s string) string {
	r := strings.NewReplacer("@everyone", "@\u200beveryone", "@here", "@\u200bhere", "<@&", "<@\u200b&")
	return r.Replace(s)
}

// Split cuts text into parts of at most limit characters, preferring paragraph, line,
// sentence and word boundaries, in that order. Empty text is one empty part.
func Split(text string, limit int) []string {
	text = strings.TrimSpace(text)
	limit = max(limit, 1) // a part holds at least one character, or the loop never ends
	var parts []string
	for {
		// Only the next limit runes are counted, not the whole rest: a long reply with a
		// small limit stays linear.
		cut := byteIndexOfRune(text, limit)
		if cut == len(text) {
			break
		}
		window := text[:cut]
		at := -1
		for _, sep := range []string{"\n\n", "\n"} {
			if i := strings.LastIndex(window, sep); i > cut/3 {
				at = i + len(sep)
				break
			}
		}
		if at < 0 {
			at = lastSentenceEnd(window, cut/3)
		}
		if at < 0 {
			if i := strings.LastIndexFunc(window, unicode.IsSpace); i > cut/3 {
				at = i + 1
			}
		}
		if at < 0 {
			at = cut
		}
		parts = append(parts, strings.TrimSpace(text[:at]))
		text = strings.TrimSpace(text[at:])
	}
	if text != "" || len(parts) == 0 {
		parts = append(parts, text)
	}
	return parts
}

// lastSentenceEnd finds the end of the last sentence in s that ends after byte min.
func lastSentenceEnd(s string, min int) int {
	for i := len(s) - 2; i > min; i-- {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && unicode.IsSpace(rune(s[i+1])) {
			return i + 1
		}
	}
	return -1
}

// byteIndexOfRune returns the byte offset of the n-th rune of s (len(s) if s is shorter).
func byteIndexOfRune(s string, n int) int {
	i := 0
	for pos := range s {
		if i == n {
			return pos
		}
		i++
	}
	return len(s)
}
