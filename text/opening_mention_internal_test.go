package text

import "testing"

// TestWithoutOpeningMention: recovery recognises a reply sent plain, opened by its addressee's
// mention (where the bot may not read history), by its text.
func TestWithoutOpeningMention(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<@1300000000000000200> Sunny tomorrow.", "Sunny tomorrow."},
		{"Sunny tomorrow.", "Sunny tomorrow."},
		{"<@&1300000000000000200> a role", "<@&1300000000000000200> a role"},
		{"<@!1300> legacy nick form", "<@!1300> legacy nick form"},
		{"<@> nothing", "<@> nothing"},
		{"<@12 34> not an id", "<@12 34> not an id"},
		{"<@123>no space", "<@123>no space"},
	}
	for _, tt := range tests {
		if got := withoutOpeningMention(tt.in); got != tt.want {
			t.Errorf("withoutOpeningMention(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	reply := "Sunny tomorrow."
	sent := "<@1300000000000000200> " + reply
	first := firstPartContents(reply)
	found := false
	for _, f := range first {
		found = found || f == withoutOpeningMention(sent)
	}
	if !found {
		t.Errorf("a plain reply opened by its addressee's mention %q is not among the reply's first-part forms %q", sent, first)
	}
}
