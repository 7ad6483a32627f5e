package post

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSplitMessage(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"short", "hello there", 20, []string{"hello there"}},
		{"empty", "  ", 20, []string{""}},
		{"paragraph", "first para.\n\nsecond para is here", 20, []string{"first para.", "second para is here"}},
		{"sentence", "One two three. Four five six seven", 20, []string{"One two three.", "Four five six seven"}},
		{"word", "alpha beta gamma delta epsilon", 12, []string{"alpha beta", "gamma delta", "epsilon"}},
		{"hard cut", "abcdefghijklmnopqrstuvwxyz", 10, []string{"abcdefghij", "klmnopqrst", "uvwxyz"}},
		{"runes not bytes", strings.Repeat("é", 12), 5, []string{"ééééé", "ééééé", "éé"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.in, tt.limit)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Split(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
		})
	}
}

func FuzzSplitMessage(f *testing.F) {
	f.Add("One two three. Four five six seven", 20)
	f.Add("first para.\n\nsecond para is here", 12)
	f.Add(strings.Repeat("ünïcödé ", 50), 7)
	f.Add("\xff\xfe abc", 2)
	f.Fuzz(func(t *testing.T, in string, limit int) {
		if limit < 1 || limit > 4000 || !utf8.ValidString(in) {
			return
		}
		parts := Split(in, limit)
		var joined strings.Builder
		for _, p := range parts {
			if n := utf8.RuneCountInString(p); n > limit {
				t.Fatalf("part of %d runes > limit %d", n, limit)
			}
			if p == "" && len(parts) > 1 {
				t.Fatalf("empty part among %q", parts)
			}
			joined.WriteString(p)
		}
		// Nothing but whitespace is lost or added.
		strip := func(s string) string {
			return strings.Map(func(r rune) rune {
				if unicode.IsSpace(r) {
					return -1
				}
				return r
			}, s)
		}
		if strip(joined.String()) != strip(in) {
			t.Fatalf("parts %q lose text of %q", parts, in)
		}
	})
}

// BenchmarkSplitLong splits a 100 KB reply into small parts: the work is linear in the reply
// (it was quadratic: every cut recounted the rest).
func BenchmarkSplitLong(b *testing.B) {
	in := strings.Repeat("word ", 20000)
	for b.Loop() {
		Split(in, 20)
	}
}
