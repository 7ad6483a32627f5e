package post

import (
	"strings"
	"testing"
	"time"
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
	// Long texts with small limits (the 1 MB size guards are in TestSplitPartsLinear: as seeds
	// they would make every mutation slow).
	f.Add(strings.Repeat("word ", 2000), 3)
	f.Add(strings.Repeat("One. Two!\n", 1000), 7)
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

// TestSplitPartsLinear: the number of parts, and so of cuts, is what the text's length and the
// limit give, however long the text: a 1 MB text with a 1-character limit is a million parts.
// Each cut examines at most the next limit characters, so these take milliseconds; the quadratic
// split they guard against (every cut recounting the rest) takes hours on them, past any test
// timeout. BenchmarkSplitScaling shows the time is linear in the text.
func TestSplitPartsLinear(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		parts int
	}{
		{strings.Repeat("x", 1<<20), 1, 1 << 20},
		{strings.Repeat("x", 1<<20), 1000, (1<<20 + 999) / 1000},
		{strings.Repeat("word ", 100000), 4, 100000},
	} {
		if got := len(Split(c.in, c.limit)); got != c.parts {
			t.Errorf("Split(%d bytes, %d) = %d parts, want %d", len(c.in), c.limit, got, c.parts)
		}
	}
}

// BenchmarkSplitScaling splits a text and one 16 times longer in the same run, and reports the
// ratio of their times (x16: about 16 for linear work, with noise from a loaded machine; 256 for
// the quadratic split it once was).
func BenchmarkSplitScaling(b *testing.B) {
	small := strings.Repeat("word ", 1000)
	large := strings.Repeat(small, 16)
	var ts, tl time.Duration
	for b.Loop() {
		t0 := time.Now()
		Split(small, 20)
		t1 := time.Now()
		Split(large, 20)
		ts, tl = ts+t1.Sub(t0), tl+time.Since(t1)
	}
	b.ReportMetric(float64(tl)/float64(ts), "x16")
}

// BenchmarkSplitLong splits a 100 KB reply into small parts: the work is linear in the reply
// (it was quadratic: every cut recounted the rest).
func BenchmarkSplitLong(b *testing.B) {
	in := strings.Repeat("word ", 20000)
	for b.Loop() {
		Split(in, 20)
	}
}
