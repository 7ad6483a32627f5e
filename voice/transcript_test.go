package voice

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCheckTranscript(t *testing.T) {
	cases := []struct {
		name string
		text string
		clip time.Duration
		want DropReason
		out  string
	}{
		{"kept", "  hey banter, what's up?  ", 2 * time.Second, DropNone, "hey banter, what's up?"},
		{"empty", "   ", time.Second, DropEmpty, ""},
		{"punctuation", "...?!", time.Second, DropPunctuation, ""},
		{"thank you", "Thank you.", time.Second, DropHallucination, ""},
		{"you", "you", 800 * time.Millisecond, DropHallucination, ""},
		{"thanks for watching", "Thanks for watching!", 2 * time.Second, DropHallucination, ""},
		{"thank you in a sentence", "Thank you, banter, that was great.", 2 * time.Second, DropNone, "Thank you, banter, that was great."},
		{"implausible", "ok", 10 * time.Second, DropImplausible, ""},
		{"long clip with words", "so yesterday I went to the store and they were out of everything", 10 * time.Second, DropNone,
			"so yesterday I went to the store and they were out of everything"},
		{"short word short clip", "yes", time.Second, DropNone, "yes"},
		{"digits count", "42", time.Second, DropNone, "42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, r := CheckTranscript(c.text, c.clip)
			if r != c.want || out != c.out {
				t.Errorf("CheckTranscript(%q, %v) = %q, %v; want %q, %v", c.text, c.clip, out, r, c.out, c.want)
			}
		})
	}
}

func TestDropReasonString(t *testing.T) {
	for r := DropNone; r <= DropImplausible; r++ {
		if s := r.String(); s == "unknown" || s == "" {
			t.Errorf("%d has no name", r)
		}
	}
	if DropReason(200).String() != "unknown" {
		t.Error("out of range reason")
	}
}

func TestMergeTranscripts(t *testing.T) {
	if got := mergeTranscripts([]string{" so yesterday ", "", "I went out. "}); got != "so yesterday I went out." {
		t.Errorf("merge = %q", got)
	}
}

// FuzzCheckTranscript: transcripts are untrusted server text. A kept
// transcript is trimmed, non-empty and has a letter or digit.
func FuzzCheckTranscript(f *testing.F) {
	for _, s := range []string{"Thank you.", "", "...", "hey banter", "\xff\xfe", "you you", "ok"} {
		f.Add(s, int64(time.Second))
	}
	f.Fuzz(func(t *testing.T, s string, clip int64) {
		out, r := CheckTranscript(s, time.Duration(clip))
		if r == DropNone {
			if out == "" || out != strings.TrimSpace(out) {
				t.Fatalf("kept %q as %q", s, out)
			}
		} else if out != "" {
			t.Fatalf("dropped %q (%v) but returned %q", s, r, out)
		}
		_ = utf8.ValidString(out)
	})
}
