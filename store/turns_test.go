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
