package safety

import (
	"testing"
	"unicode/utf8"
)

func FuzzScrubBanWords(f *testing.F) {
	f.Add("you are a Grommet, truly", "grommet")
	f.Add("grommets are fine, grommet is not", "grommet")
	f.Add("ÀÉÎ straße STRASSE", "straße")
	f.Add("a.b", "a")
	f.Fuzz(func(t *testing.T, s, word string) {
		if !utf8.ValidString(s) || !utf8.ValidString(word) {
			return
		}
		w := NewWordList([]string{word})
		out := w.Scrub(s)
		if !utf8.ValidString(out) {
			t.Fatalf("scrub(%q) = %q is not UTF-8", s, out)
		}
		if a, b := utf8.RuneCountInString(s), utf8.RuneCountInString(out); a != b {
			t.Fatalf("scrub(%q) = %q changed the rune count %d -> %d", s, out, a, b)
		}
		if w.Contains(s) && out == s {
			t.Fatalf("scrub(%q) kept the ban word %q", s, word)
		}
	})
}

func TestBanWordsFoldCase(t *testing.T) {
	tests := []struct {
		name, word, in, want string
		found                bool
	}{
		{"ascii", "spam", "no SPAM here", "no **** here", true},
		{"inside a word", "spam", "spammer", "spammer", false},
		{"rune grows when lowered", "spam", "İ SPAM", "İ ****", true},
		{"rune shrinks when lowered", "spam", "ẞ SPAM ẞ", "ẞ **** ẞ", true},
		{"non-ascii word", "straße", "STRAẞE ahead", "****** ahead", true},
		{"after invalid byte", "spam", "\xff SPAM", "\xff ****", true},
		{"NUL bytes kept", "spam", "a\x00 spam \x00b", "a\x00 **** \x00b", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWordList([]string{tt.word})
			if got := w.Contains(tt.in); got != tt.found {
				t.Errorf("contains(%q) = %v, want %v", tt.in, got, tt.found)
			}
			if got := w.Scrub(tt.in); got != tt.want {
				t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
