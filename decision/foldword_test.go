package decision

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestFoldWord: the word lists' fold lower-cases capitals of any script into the fixed buffer,
// whatever their small letter's length, and refuses (0) a word whose fold does not fit.
func TestFoldWord(t *testing.T) {
	long := strings.Repeat("a", maxListWord-1)
	tests := []struct {
		name, in, want string
	}{
		{"ascii", "HeLLo", "hello"},
		{"latin-1", "OLÁ", "olá"},
		{"turkish", "SAĞOL", "sağol"},
		{"dotted capital i", "İYİ", "iyi"},
		{"cyrillic", "ПРИВЕТ", "привет"},
		{"greek", "ΓΕΙΑ", "γεια"},
		{"apostrophe", "WHAT’S", "what's"},
		{"small letter longer than its capital", "Ⱥ", "ⱥ"}, // 2 bytes → 3
		{"fits to the last byte", long + "B", long + "b"},
		{"a capital past the last byte", long + "Á", ""},                // 23 + 2 bytes
		{"longer once folded", long[:21] + "Ⱥ", long[:21] + "ⱥ"},        // 21 + 3 bytes: fits
		{"longer once folded, past the last byte", long[:22] + "Ⱥ", ""}, // 22 + 3 bytes
		{"too long", strings.Repeat("a", maxListWord+1), ""},            // never in a list
		{"empty", "", ""},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf [maxListWord]byte
			n := foldWord(tc.in, &buf)
			if got := string(buf[:n]); got != tc.want {
				t.Errorf("foldWord(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzFoldWord: for any input the fold stays inside its buffer, and when it folds a valid word
// it is the word lower-cased rune by rune (’ as ').
func FuzzFoldWord(f *testing.F) {
	for _, s := range []string{"HEY", "OLÁ", "SAĞOL", "ПРИВЕТ", "Ⱥ", "WHAT’S", "a\xffb", strings.Repeat("Ⱥ", 9), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		var buf [maxListWord]byte
		n := foldWord(w, &buf)
		if n < 0 || n > len(buf) {
			t.Fatalf("foldWord(%q) = %d: outside its buffer", w, n)
		}
		if n == 0 || !utf8.ValidString(w) {
			return
		}
		want := strings.Map(func(r rune) rune {
			if r == '’' {
				return '\''
			}
			return unicode.ToLower(r)
		}, w)
		if got := string(buf[:n]); got != want {
			t.Fatalf("foldWord(%q) = %q, want %q", w, got, want)
		}
	})
}
