package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestDurableTurns: an opened turn is open until closed; a reopened one (a restarted process
// answering it again) is open again with its new AnswerID; OpenTurns lists one guild's, oldest
// first; DropTurn deletes one; Prune drops turns older than the cutoff; an unknown outcome is
// refused.
func TestDurableTurns(t *testing.T) { forEachDriver(t, testDurableTurns) }

func testDurableTurns(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for i, tr := range []Turn{
		{MessageID: "101", ChannelID: "c1", GuildID: "g1"},
		{MessageID: "102", ChannelID: "c1", GuildID: "g1", AnswerID: "103"},
		{MessageID: "103", ChannelID: "c1", GuildID: "g1"},
		{MessageID: "201", ChannelID: "c2", GuildID: "g2"},
	} {
		tr.AdmittedAt = base.Add(time.Duration(i) * time.Second)
		if err := s.OpenTurn(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	open := func(guild string) []string {
		t.Helper()
		ts, err := s.OpenTurns(ctx, guild)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tr := range ts {
			ids = append(ids, tr.MessageID+">"+tr.AnswerID)
		}
		return ids
	}
	steps := []struct {
		name string
		do   func() error
		want []string // g1's open turns after the step
	}{
		{"opened", func() error { return nil }, []string{"101>101", "102>103", "103>103"}},
		{"closed", func() error { return s.CloseTurns(ctx, []string{"102", "103"}, TurnSent, base.Add(time.Minute)) },
			[]string{"101>101"}},
		{"reopened", func() error {
			return s.OpenTurn(ctx, Turn{MessageID: "103", ChannelID: "c1", GuildID: "g1", AdmittedAt: base.Add(2 * time.Minute)})
		}, []string{"101>101", "103>103"}},
		{"unknown ids ignored", func() error { return s.CloseTurns(ctx, []string{"999"}, TurnFailed, base) },
			[]string{"101>101", "103>103"}},
		{"dropped (its message refused), an unknown one too", func() error {
			must := s.OpenTurn(ctx, Turn{MessageID: "104", ChannelID: "c1", GuildID: "g1", AdmittedAt: base})
			return errors.Join(must, s.DropTurn(ctx, "104"), s.DropTurn(ctx, "998"))
		}, []string{"101>101", "103>103"}},
		{"pruned", func() error { _, err := s.Prune(ctx, base.Add(time.Second), base); return err },
			[]string{"103>103"}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := open("g1"); !slices.Equal(got, st.want) {
			t.Errorf("%s: open turns of g1 = %v, want %v", st.name, got, st.want)
		}
	}
	if got := open("g2"); !slices.Equal(got, []string{"201>201"}) {
		t.Errorf("open turns of g2 = %v", got)
	}
	if err := s.CloseTurns(ctx, []string{"201"}, "maybe", base); err == nil {
		t.Error("an unknown outcome was accepted")
	}
}

// TestTurnReply: the text of a reply in several parts is kept on its open turn and listed with
// it; reopening the turn (answered again from scratch) or closing it clears it; a closed or
// unknown turn takes none.
func TestTurnReply(t *testing.T) { forEachDriver(t, testTurnReply) }

func testTurnReply(t *testing.T, s Store) {
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	replyOf := func(id string) (string, bool) {
		t.Helper()
		ts, err := s.OpenTurns(ctx, "g1")
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			if tr.MessageID == id {
				return tr.Reply, true
			}
		}
		return "", false
	}
	open := func(id string) {
		t.Helper()
		if err := s.OpenTurn(ctx, Turn{MessageID: id, ChannelID: "c1", GuildID: "g1", AdmittedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(id, reply string) {
		t.Helper()
		if err := s.SetTurnReply(ctx, id, reply); err != nil {
			t.Fatal(err)
		}
	}
	open("301")
	set("301", "part one\n\npart two")
	if got, _ := replyOf("301"); got != "part one\n\npart two" {
		t.Errorf("open turn's reply = %q", got)
	}
	open("301") // answered again from scratch
	if got, _ := replyOf("301"); got != "" {
		t.Errorf("reopened turn's reply = %q, want none", got)
	}
	set("301", "again")
	if err := s.CloseTurns(ctx, []string{"301"}, TurnSent, at); err != nil {
		t.Fatal(err)
	}
	set("301", "after the close")
	set("999", "unknown")
	open("301")
	if got, ok := replyOf("301"); !ok || got != "" {
		t.Errorf("closed then reopened turn's reply = %q (listed %v), want none", got, ok)
	}
	if _, ok := replyOf("999"); ok {
		t.Error("SetTurnReply created a turn")
	}
}
