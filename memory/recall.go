package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/banterbot/banter/store"
)

// Recall picks the facts to show with a turn in a guild: first the facts sharing words with
// the turn's text (about anyone of the guild, or the server: a question about someone not in
// the conversation finds them), then the participants' own facts, newest first; as many as fit
// in tokens (about four characters a token). Nothing of another guild is read.
func Recall(ctx context.Context, c *Cache, guildID string, participants []string, text string, tokens int) ([]store.Fact, error) {
	if guildID == "" || tokens <= 0 {
		return nil, nil
	}
	current, err := c.Current(ctx, guildID)
	if err != nil {
		return nil, fmt.Errorf("memory: recall: %w", err)
	}
	candidates := store.RankFacts(current, text, maxWordMatches)
	for _, f := range current {
		if slices.Contains(participants, f.SubjectID) {
			candidates = append(candidates, f)
		}
	}
	var out []store.Fact
	seen := map[int64]bool{}
	used := 0
	for _, f := range candidates {
		if seen[f.ID] {
			continue
		}
		seen[f.ID] = true
		cost := factTokens(f)
		if used+cost > tokens {
			continue // a shorter one further down may still fit
		}
		used += cost
		out = append(out, f)
	}
	return out, nil
}

// maxWordMatches bounds the facts found by words that recall considers.
const maxWordMatches = 20

// factTokens estimates a rendered fact line's tokens.
func factTokens(f store.Fact) int {
	return (len(f.Statement)+len(f.SubjectName))/4 + 8
}

// Render writes facts for a reply prompt, or "" for none.
func Render(fs []store.Fact, now time.Time) string {
	if len(fs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("What you remember from earlier conversations in this server (what people told you; it may be out of date):\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "- %s (%s, %s)\n", f.Statement, about(f), since(now, f.CreatedAt))
	}
	return b.String()
}

func about(f store.Fact) string {
	if f.SubjectID == store.FactServer {
		return "about this server"
	}
	if f.SubjectName == "" {
		return "about user id " + f.SubjectID
	}
	return "about " + f.SubjectName
}

// since says how long ago a fact was noted, in days at most.
func since(now, t time.Time) string {
	switch d := now.Sub(t); {
	case d < 24*time.Hour:
		return "noted today"
	case d < 48*time.Hour:
		return "noted yesterday"
	default:
		return fmt.Sprintf("noted %d days ago", int(d.Hours()/24))
	}
}
