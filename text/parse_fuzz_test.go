package text

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
)

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
