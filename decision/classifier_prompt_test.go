package decision

import (
	"strings"
	"testing"
)

// TestDirectAddressPromptShowsNames: the classifier reads the message as people see it (Shown,
// when the caller gives it) and is told how the bot's name appears, also when the cue is a
// mention of the bot rather than its name in the text.
func TestDirectAddressPromptShowsNames(t *testing.T) {
	tp := DefaultTextPolicy("banter")
	tests := []struct {
		name      string
		turn      TextTurn
		match     NameMatch
		want      []string
		wantNotIn []string
	}{
		{
			name:      "mention shown as the bot's name",
			turn:      TextTurn{AuthorName: "alice", Content: "why is <@42> so slow", Shown: "why is @banter so slow", MentionsBot: true},
			match:     NameMatch{Kind: MatchMention, Confidence: 0.5},
			want:      []string{"from alice:\nwhy is @banter so slow\n", `The name appears as "@banter".`},
			wantNotIn: []string{"<@42>", `appears as ""`},
		},
		{
			name:  "no Shown: the content as written",
			turn:  TextTurn{AuthorName: "alice", Content: "why is <@42> so slow", MentionsBot: true},
			match: NameMatch{Kind: MatchMention, Confidence: 0.5},
			want:  []string{"from alice:\nwhy is <@42> so slow\n", `The name appears as "@banter".`},
		},
		{
			name:  "the name in the text",
			turn:  TextTurn{AuthorName: "bob", Content: "I told banter about it", Shown: "I told banter about it"},
			match: NameMatch{Kind: MatchMention, Start: 7, End: 13},
			want:  []string{`The name appears as "banter".`},
		},
		{
			name:      "no match: no name line",
			turn:      TextTurn{AuthorName: "bob", Content: "hello"},
			wantNotIn: []string{"The name appears"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := directAddressUserPrompt(tp, &tt.turn, tt.match)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("prompt lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNotIn {
				if strings.Contains(got, w) {
					t.Errorf("prompt holds %q:\n%s", w, got)
				}
			}
		})
	}
}
