package safety

import (
	"testing"

	"github.com/banterbot/banter/config"
)

func TestExclude(t *testing.T) {
	f := New([]string{"frobnitz", "bad phrase"}, []string{"666"})
	tests := []struct {
		name            string
		author, content string
		self            bool
		want            Reason
	}{
		{"plain message", "1", "hello there", false, Allowed},
		{"ban word", "1", "say FROBNITZ now", false, BanWord},
		{"ban phrase", "1", "that is a Bad Phrase indeed", false, BanWord},
		{"ban word inside a longer word", "1", "frobnitzes", false, Allowed},
		{"blocked author", "666", "hello there", false, BlockedUser},
		{"blocked author with a ban word", "666", "frobnitz", false, BlockedUser},
		{"the bot's own message", "666", "frobnitz", true, Allowed},
		{"no author", "", "hello", false, Allowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.Exclude(tt.author, tt.content, tt.self); got != tt.want {
				t.Errorf("Exclude(%q, %q, %v) = %q, want %q", tt.author, tt.content, tt.self, got, tt.want)
			}
		})
	}
	if !f.Blocked("666") || f.Blocked("1") || f.Blocked("") {
		t.Error("Blocked disagrees with the list")
	}
	if got := f.Scrub("a frobnitz!"); got != "a ********!" {
		t.Errorf("Scrub = %q", got)
	}
}

func TestForConfig(t *testing.T) {
	c := config.Default()
	c.Safety.BanWords = []string{"grommet"}
	c.Permissions.BlockedUserIDs = []string{"42"}
	f := ForConfig(c)
	if f.Exclude("1", "a grommet", false) != BanWord || f.Exclude("42", "hi", false) != BlockedUser {
		t.Error("ForConfig does not apply the configuration's lists")
	}
	// The filter keeps its own copy: a later change to the configuration does not alter it.
	c.Permissions.BlockedUserIDs[0] = "43"
	if f.Exclude("42", "hi", false) != BlockedUser {
		t.Error("the filter shares the configuration's slice")
	}
}

// TestBlockedInAgreesWithFilter: the allocation-free check answers as the Filter does.
func TestBlockedInAgreesWithFilter(t *testing.T) {
	c := config.Default()
	c.Permissions.BlockedUserIDs = []string{"666", "42"}
	f := ForConfig(c)
	for _, id := range []string{"666", "42", "7", ""} {
		if got, want := BlockedIn(c, id), f.Blocked(id); got != want {
			t.Errorf("BlockedIn(%q) = %v, Filter.Blocked = %v", id, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { BlockedIn(c, "7") }); n != 0 {
		t.Errorf("BlockedIn allocates %v times", n)
	}
}
