package voice

import (
	"strings"
	"testing"
	"time"
)

func TestSentencer(t *testing.T) {
	cases := []struct {
		name   string
		deltas []string
		want   []string // chunks, the last one from Finish
	}{
		{"two sentences", []string{"It is sunny", " today. Take", " a hat!"}, []string{"It is sunny today.", "Take a hat!"}},
		{"early first clause", []string{"Well, that is a very good question, ", "and the answer is no."},
			[]string{"Well, that is a very good question,", "and the answer is no."}},
		{"short clause waits", []string{"Hi, there. Bye."}, []string{"Hi, there.", "Bye."}},
		{"decimal", []string{"It costs 3.5 dollars. Cheap."}, []string{"It costs 3.5 dollars.", "Cheap."}},
		{"abbreviation", []string{"Ask Dr. Smith about it. Now."}, []string{"Ask Dr. Smith about it.", "Now."}},
		{"question run", []string{"Really?! Yes."}, []string{"Really?!", "Yes."}},
		{"no end", []string{"no punctuation at all"}, []string{"no punctuation at all"}},
		{"end needs next char", []string{"Done."}, []string{"Done."}},
		{"newline", []string{"line one\nline two"}, []string{"line one", "line two"}},
		{"long run cut at space", []string{strings.Repeat("word ", 60)}, []string{strings.TrimSpace(strings.Repeat("word ", 48)), strings.TrimSpace(strings.Repeat("word ", 12))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Sentencer
			var got []string
			for _, d := range c.deltas {
				got = s.Push(got, d)
			}
			if rest := s.Finish(); rest != "" {
				got = append(got, rest)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("chunks\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// FuzzSentencer: however the text is split into deltas, the chunks put
// together hold every non-space character in order, and none is empty.
func FuzzSentencer(f *testing.F) {
	f.Add("Hello there. How are you? Fine, thanks!", 3)
	f.Add("3.5 e.g. Dr. Who… ok\n\nyes", 1)
	f.Add(strings.Repeat("x", 300), 7)
	f.Fuzz(func(t *testing.T, text string, step int) {
		if step <= 0 || step > 64 {
			step = 5
		}
		var s Sentencer
		var got []string
		for i := 0; i < len(text); i += step {
			got = s.Push(got, text[i:min(i+step, len(text))])
		}
		if rest := s.Finish(); rest != "" {
			got = append(got, rest)
		}
		for _, c := range got {
			if c == "" {
				t.Fatal("empty chunk")
			}
		}
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if squash(strings.Join(got, " ")) != squash(text) {
			t.Fatalf("text changed: %q → %q", text, got)
		}
	})
}

func TestStripDirectives(t *testing.T) {
	cases := map[string]string{
		"Sure thing.":                  "Sure thing.",
		"[laughs] That's *great*.":     "That's great.",
		"[[voice:calm]] Okay [SKIP]":   "Okay",
		"[SKIP]":                       "",
		"use `code` and _emphasis_ ok": "use code and emphasis ok",
	}
	for in, want := range cases {
		if got := stripDirectives(in); got != want {
			t.Errorf("stripDirectives(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPartial(t *testing.T) {
	text := "one two three four five six seven eight nine ten"
	second := 48000 // bytes of one second of 24 kHz mono pcm16
	// The text is 49 characters: about 3.2 s to say (speechPerRune).
	cases := []struct {
		played time.Duration
		got    int
		broken bool
		want   string
	}{
		{0, second, false, ""},
		{500 * time.Millisecond, second, false, "one two three four five —"},
		{time.Second, second, false, text + " —"},
		{2 * time.Second, second, false, text + " —"},
		{time.Second, 0, false, ""},
		// The audio broke off after one second: the sentence is longer than
		// what arrived, so one second carried only about a third of it.
		{time.Second, second, true, "one two three —"},
		{time.Second, 0, true, "one two three —"},
		// More audio arrived than the text's estimate: the audio counts.
		{time.Second, 8 * second, true, "one —"},
	}
	for _, c := range cases {
		if got := partial(text, c.played, c.got, c.broken); got != c.want {
			t.Errorf("partial(%v of %d bytes, broken %v) = %q, want %q", c.played, c.got, c.broken, got, c.want)
		}
	}
}
