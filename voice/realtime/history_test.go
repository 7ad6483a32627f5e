package realtime

import (
	"strings"
	"testing"
)

func TestHistorySummary(t *testing.T) {
	tests := []struct {
		name  string
		lines []historyLine
		max   int
		want  []string
		not   []string
	}{
		{name: "empty", want: nil},
		{name: "speaker and bot", max: 4,
			lines: []historyLine{{who: "Alice", text: "hey banter"}, {text: "hi Alice", cut: true}},
			want:  []string{"- Alice: hey banter", "- You: hi Alice (interrupted)"}},
		{name: "oldest dropped", max: 2,
			lines: []historyLine{{who: "A", text: "one"}, {who: "B", text: "two"}, {who: "C", text: "three"}},
			want:  []string{"- B: two", "- C: three"}, not: []string{"one"}},
		{name: "blank ignored", max: 2,
			lines: []historyLine{{who: "A", text: "  "}},
			want:  nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &history{max: tt.max, maxChars: 100}
			for _, l := range tt.lines {
				h.add(l.turn, l.who, l.text, l.cut)
			}
			got := h.summary()
			if tt.want == nil && got != "" {
				t.Fatalf("summary = %q, want empty", got)
			}
			checkSummary(t, got, tt.want, tt.not)
		})
	}
}

// checkSummary checks that summary has every line of want and nothing of not.
func checkSummary(t *testing.T, summary string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(summary, w) {
			t.Errorf("summary %q lacks %q", summary, w)
		}
	}
	for _, w := range not {
		if strings.Contains(summary, w) {
			t.Errorf("summary %q has %q", summary, w)
		}
	}
}

func TestHistoryLongLineCut(t *testing.T) {
	h := &history{max: 2, maxChars: 5}
	h.add("", "A", "abcdefghij", false)
	if got := h.summary(); !strings.Contains(got, "A: abcde…") {
		t.Fatalf("summary = %q", got)
	}
}

func TestCutText(t *testing.T) {
	tests := []struct {
		text          string
		played, total int
		want          string
	}{
		{"hello there my friend", 10, 10, "hello there my friend"},
		{"hello there my friend", 0, 10, ""},
		{"hello there my friend", 5, 10, "hello there"},
		{"hello there my friend", 1, 0, "hello there my friend"},
	}
	for _, tt := range tests {
		if got := cutText(tt.text, tt.played, tt.total); got != tt.want {
			t.Errorf("cutText(%q, %d, %d) = %q, want %q", tt.text, tt.played, tt.total, got, tt.want)
		}
	}
}

// TestHistoryTakeBack: after a false end the lines of the turn taken back (the member's, and the
// answer's) leave the summary; the other lines (other turns, the greeting) stay.
func TestHistoryTakeBack(t *testing.T) {
	tests := []struct {
		name       string
		lines      []historyLine
		forget     string // the turn taken back
		want, gone []string
	}{
		{name: "turn and answer", forget: "t3",
			lines: []historyLine{{turn: "t1", who: "Bob", text: "hi all"}, {turn: "t1", text: "hi Bob"},
				{turn: "t3", who: "Alice", text: "what's the weather like?"}, {turn: "t3", text: "Let me tell you", cut: true}},
			want: []string{"- Bob: hi all", "- You: hi Bob"}, gone: []string{"weather", "Let me"}},
		{name: "no answer line yet", forget: "t2",
			lines: []historyLine{{turn: "t1", who: "Alice", text: "first"}, {turn: "t1", text: "an answer"},
				{turn: "t2", who: "Alice", text: "what's the weather like?"}},
			want: []string{"- Alice: first", "- You: an answer"}, gone: []string{"weather"}},
		{name: "the greeting stays", forget: "t1",
			lines: []historyLine{{text: "hello all"}, {turn: "t1", who: "Alice", text: "go on"}},
			want:  []string{"- You: hello all"}, gone: []string{"go on"}},
		{name: "no turn named: nothing", forget: "",
			lines: []historyLine{{text: "hello all"}, {turn: "t1", who: "Alice", text: "hello"}},
			want:  []string{"- You: hello all", "- Alice: hello"}},
		{name: "an unknown turn: nothing", forget: "t9",
			lines: []historyLine{{turn: "t1", who: "Alice", text: "hello"}},
			want:  []string{"- Alice: hello"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &history{max: 10, maxChars: 100}
			for _, l := range tt.lines {
				h.add(l.turn, l.who, l.text, l.cut)
			}
			h.forget(tt.forget)
			checkSummary(t, h.summary(), tt.want, tt.gone)
		})
	}
}
