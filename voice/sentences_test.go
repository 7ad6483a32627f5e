package voice

import (
	"slices"
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
		{"long first sentence cut before a conjunction", words("The quickest way from here is the number nine bus to the station and then a short walk. Easy."),
			[]string{"The quickest way from here is the number nine bus to the station", "and then a short walk.", "Easy."}},
		{"conjunction too early", words("So the quickest way from here is the number nine bus to the station. Easy."),
			[]string{"So the quickest way from here is the number nine bus to the station.", "Easy."}},
		{"only the first chunk", words("Yes. The quickest way from here is the number nine bus to the station and then a walk."),
			[]string{"Yes.", "The quickest way from here is the number nine bus to the station and then a walk."}},
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

// words splits text into word deltas (" word"), as a model streams it.
func words(text string) []string {
	ws := strings.Split(text, " ")
	for i := 1; i < len(ws); i++ {
		ws[i] = " " + ws[i]
	}
	return ws
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

// replyCorpus is a set of spoken replies as a voice model writes them: short answers, long
// first sentences with and without commas.
var replyCorpus = []string{
	"Yes, loud and clear.",
	"It is sunny and warm today, around twenty degrees.",
	"The quickest way from here is the number nine bus to the station and then a short walk along the river.",
	"I think the new album is a lot better than the last one because the songs feel more honest and less produced.",
	"Honestly I would wait until the weekend since the forecast says the rain stops on Friday afternoon.",
	"That depends on how much time you have, but the museum is worth at least a couple of hours.",
	"Sure thing.",
	"I have no idea what the score is right now but I can guess that it is close.",
	"The film starts at eight so if we leave at seven thirty we should make it with time for popcorn.",
	"Good question! The short answer is no.",
	"Paris in the spring is lovely when the chestnut trees are in bloom and the cafés put their tables outside.",
	"My favourite part of the game was the last level where everything falls apart and you have to run.",
	"You could try turning it off and on again, which fixes more problems than anyone likes to admit.",
	"Mike said he would be late tonight because his train was cancelled again.",
	"We talked about that yesterday and decided to go with the blue one after all.",
	"Not really, no.",
	"The easiest recipe I know is pasta with garlic and olive oil and a lot of black pepper on top.",
	"If you want my honest opinion the second season drags a bit in the middle but the ending makes up for it.",
	"Three hundred and sixty five days, unless it is a leap year.",
	"It was built in the eighteen hundreds by a family who made their money in the wool trade.",
}

// firstChunkBytes streams text word by word through s and returns how much of it had been
// generated when the first chunk was cut (the whole text if only Finish cut it).
func firstChunkBytes(s *Sentencer, text string) int {
	var out []string
	n := 0
	for _, w := range words(text) {
		n += len(w)
		if out = s.Push(out[:0], w); len(out) > 0 {
			return n
		}
	}
	return len(text)
}

// BenchmarkFirstChunk measures how much reply text must be generated before the first chunk
// goes to speech: with the conjunction cut of long first sentences (FirstMax 48) against the
// rule before it (clause breaks and sentence ends only, FirstMax -1), over replyCorpus. At a
// model's ~4 bytes a token and 50 tokens a second, 20 bytes are 100 ms of generation.
func BenchmarkFirstChunk(b *testing.B) {
	var before, after []float64
	for b.Loop() {
		before, after = before[:0], after[:0]
		for _, text := range replyCorpus {
			before = append(before, float64(firstChunkBytes(&Sentencer{FirstMax: -1}, text)))
			after = append(after, float64(firstChunkBytes(&Sentencer{}, text)))
		}
	}
	q := func(v []float64, p float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	b.ReportMetric(q(before, 0.5), "sentence-bytes-median")
	b.ReportMetric(q(after, 0.5), "phrase-bytes-median")
	b.ReportMetric(q(before, 0.9), "sentence-bytes-p90")
	b.ReportMetric(q(after, 0.9), "phrase-bytes-p90")
	b.ReportMetric(q(after, 0.5)/q(before, 0.5), "phrase/sentence-median")
}
