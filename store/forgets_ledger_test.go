package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestForgetWatermarkLedgerAndTurns: after forget-me, a rate-limit ledger row and a durable
// turn naming the member, for words said at or before it, are refused (ErrForgotten) and
// nothing is written; a reopened (coalesced) turn of theirs is not written back; rows for
// another member, for their words after forget-me, or in another guild are kept. Another
// member's turn coalesced into one of theirs loses the link (answers itself), whether it was
// opened before forget-me or after. On the code before, RecordPrompt and OpenTurn wrote them.
func TestForgetWatermarkLedgerAndTurns(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		forgot := base.Add(time.Hour)
		now := forgot.Add(time.Minute) // the reply attempt, after forget-me
		const alice = "424242424242"
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.SaveMessage(ctx, Message{ID: "m1", ChannelID: "c1", GuildID: "g1", AuthorID: alice, Content: "hi", CreatedAt: base}))
		must(s.OpenTurn(ctx, Turn{MessageID: "m1", ChannelID: "c1", GuildID: "g1", AdmittedAt: base, Author: Origin{AuthorID: alice, At: base}}))
		must(s.OpenTurn(ctx, Turn{MessageID: "b1", ChannelID: "c1", GuildID: "g1", AnswerID: "m1", AdmittedAt: base,
			Author: Origin{AuthorID: "bob", At: base}, AnswerAuthor: Origin{AuthorID: alice, At: base}}))
		if _, err := s.ForgetMember(ctx, "g1", alice, forgot); err != nil {
			t.Fatal(err)
		}

		prompt := func(guild, user string, said time.Time) Prompt {
			return Prompt{GuildID: guild, ChannelID: "c-" + guild, UserID: user, SaidAt: said, Kind: PromptExplicit, At: now}
		}
		turn := func(id, guild, user, answer string, said time.Time) Turn {
			return Turn{MessageID: id, ChannelID: "c-" + guild, GuildID: guild, AnswerID: answer, AdmittedAt: now,
				Author: Origin{AuthorID: user, At: said}}
		}
		for _, c := range []struct {
			name   string
			prompt Prompt
			turn   Turn
			want   error
		}{
			{"her words from before", prompt("g1", alice, base), turn("m1", "g1", alice, "m9", base), ErrForgotten},
			{"her words at the watermark", prompt("g1", alice, forgot), turn("m2", "g1", alice, "", forgot), ErrForgotten},
			{"her words after", prompt("g1", alice, forgot.Add(time.Millisecond)), turn("m3", "g1", alice, "", forgot.Add(time.Millisecond)), nil},
			{"bob's words from before", prompt("g1", "bob", base), turn("m4", "g1", "bob", "m9", base), nil},
			{"her words in another server", prompt("g2", alice, base), turn("m5", "g2", alice, "", base), nil},
		} {
			if err := s.RecordPrompt(ctx, c.prompt); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Errorf("RecordPrompt, %s: %v, want %v", c.name, err, c.want)
			}
			if err := s.OpenTurn(ctx, c.turn); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Errorf("OpenTurn, %s: %v, want %v", c.name, err, c.want)
			}
		}
		must(s.OpenTurn(ctx, Turn{MessageID: "b2", ChannelID: "c-g1", GuildID: "g1", AnswerID: "m1", AdmittedAt: now,
			Author: Origin{AuthorID: "bob", At: base}, AnswerAuthor: Origin{AuthorID: alice, At: base}}))
		for _, c := range []struct {
			guild, user string
			want        int
		}{{"g1", alice, 1}, {"g1", "bob", 1}, {"g2", alice, 1}} {
			if n, err := s.CountUserPrompts(ctx, "c-"+c.guild, c.user, base); err != nil || n != c.want {
				t.Errorf("ledger rows of %s in %s = %d (%v), want %d", c.user, c.guild, n, err, c.want)
			}
		}
		for guild, want := range map[string]string{"g1": "b1>b1 b2>b2 m3>m3 m4>m9", "g2": "m5>m5"} {
			open, err := s.OpenTurns(ctx, guild)
			must(err)
			if got := turnIDs(open); got != want {
				t.Errorf("open turns of %s = %q, want %q (turn>answer)", guild, got, want)
			}
		}
		if n := rawCount(t, s, `SELECT COUNT(*) FROM turns WHERE message_id IN ('m1', 'm2')`); n != 0 {
			t.Errorf("%d turns of her words from before written after forget-me", n)
		}
	})
}

// turnIDs lists turns as "id>answer".
func turnIDs(ts []Turn) string {
	var out string
	for i, t := range ts {
		if i > 0 {
			out += " "
		}
		out += t.MessageID + ">" + t.AnswerID
	}
	return out
}
