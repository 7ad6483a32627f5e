package text

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
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
			got := splitMessage(tt.in, tt.limit)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("splitMessage(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
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
		parts := splitMessage(in, limit)
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

func FuzzParsePrefixCommand(f *testing.F) {
	cfg := config.Default()
	cfg.Bot.Name, cfg.Bot.CommandPrefix = "banter", "!"
	f.Add("!banter(pirate) tell me a tale")
	f.Add("!banter what's up")
	f.Add("!banters nope")
	f.Add("!banter(unclosed")
	f.Add("!BANTER")
	f.Fuzz(func(t *testing.T, content string) {
		cmd := parsePrefixCommand(cfg, content)
		if cmd == nil {
			return
		}
		trimmed := strings.TrimSpace(content)
		if !strings.HasPrefix(strings.ToLower(trimmed), "!banter") {
			t.Fatalf("%q parsed as a command %+v", content, cmd)
		}
		if !strings.Contains(content, cmd.topic) || !strings.Contains(content, cmd.persona) {
			t.Fatalf("%q: command %+v holds text not in the message", content, cmd)
		}
	})
}

func FuzzScrubBanWords(f *testing.F) {
	f.Add("you are a Grommet, truly", "grommet")
	f.Add("grommets are fine, grommet is not", "grommet")
	f.Add("ÀÉÎ straße STRASSE", "straße")
	f.Add("a.b", "a")
	f.Fuzz(func(t *testing.T, s, word string) {
		if !utf8.ValidString(s) || !utf8.ValidString(word) {
			return
		}
		w := newWordList([]string{word})
		out := w.scrub(s)
		if !utf8.ValidString(out) {
			t.Fatalf("scrub(%q) = %q is not UTF-8", s, out)
		}
		if a, b := utf8.RuneCountInString(s), utf8.RuneCountInString(out); a != b {
			t.Fatalf("scrub(%q) = %q changed the rune count %d -> %d", s, out, a, b)
		}
		if w.contains(s) && out == s {
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
			w := newWordList([]string{tt.word})
			if got := w.contains(tt.in); got != tt.found {
				t.Errorf("contains(%q) = %v, want %v", tt.in, got, tt.found)
			}
			if got := w.scrub(tt.in); got != tt.want {
				t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// BenchmarkSplitMessageLong splits a 100 KB reply into small parts: the work
// is linear in the reply (it was quadratic: every cut recounted the rest).
func BenchmarkSplitMessageLong(b *testing.B) {
	in := strings.Repeat("word ", 20000)
	for b.Loop() {
		splitMessage(in, 20)
	}
}
