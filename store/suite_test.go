package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The behaviour every driver must share. Each test runs once per driver (subtests "sqlite" and
// "postgres"); see drivers_test.go for how each store is opened.

func TestMessagesLifecycle(t *testing.T) { forEachDriver(t, testMessagesLifecycle) }

func testMessagesLifecycle(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"10", "11", "12", "13"} {
		m := Message{ID: id, ChannelID: "c1", AuthorID: "u1", AuthorName: "alice", Content: "m" + id,
			CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if id == "12" {
			m.ReplyToID = "11"
		}
		if err := s.SaveMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	s.SaveMessage(ctx, Message{ID: "99", ChannelID: "other", AuthorID: "u", CreatedAt: base})

	if err := s.EditMessage(ctx, "11", "edited", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMessage(ctx, "13"); err != nil {
		t.Fatal(err)
	}
	if err := s.EditMessage(ctx, "404", "x", base); !errors.Is(err, ErrNotFound) {
		t.Errorf("edit of unknown message: %v", err)
	}
	if err := s.DeleteMessage(ctx, "404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of unknown message: %v", err)
	}
	if _, err := s.Message(ctx, "404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("lookup of unknown message: %v", err)
	}

	got, err := s.RecentMessages(ctx, "c1", time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "10,11,12" {
		t.Errorf("recent = %v, want oldest-first 10,11,12 (13 deleted, 99 elsewhere)", ids)
	}
	if got[1].Content != "edited" || got[2].ReplyToID != "11" {
		t.Errorf("edit or reply link lost: %+v", got)
	}
	got, _ = s.RecentMessages(ctx, "c1", base.Add(2*time.Minute), 1)
	if len(got) != 1 || got[0].ID != "11" {
		t.Errorf("before+limit = %+v, want [11]", got)
	}
	m, _ := s.Message(ctx, "13")
	if !m.Deleted {
		t.Error("deleted message not flagged")
	}

	// Re-saving a bot message without a persona keeps the persona stored earlier.
	s.SaveMessage(ctx, Message{ID: "50", ChannelID: "c1", AuthorID: "bot", IsSelf: true, Persona: "pirate", CreatedAt: base})
	s.SaveMessage(ctx, Message{ID: "50", ChannelID: "c1", AuthorID: "bot", IsSelf: true, Content: "synced", CreatedAt: base})
	if m, _ := s.Message(ctx, "50"); m.Persona != "pirate" || m.Content != "synced" {
		t.Errorf("persona lost on re-save: %+v", m)
	}

	n, err := s.Prune(ctx, base.Add(90*time.Second), base)
	if err != nil || n != 4 { // 10, 11, 99, 50
		t.Errorf("prune removed %d, %v; want 4", n, err)
	}
}

func TestPersonasAndLedger(t *testing.T) { forEachDriver(t, testPersonasAndLedger) }

func testPersonasAndLedger(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	s.SavePersona(ctx, UserPersona{UserID: "u1", PreferredName: "Al", Pronouns: "she/her", UpdatedAt: now})
	s.SavePersona(ctx, UserPersona{UserID: "u1", PreferredName: "Alice", Pronouns: "she/her", UpdatedAt: now})
	p, err := s.Personas(ctx, []string{"u1", "u2"})
	if err != nil || len(p) != 1 || p["u1"].PreferredName != "Alice" {
		t.Errorf("personas = %+v, %v", p, err)
	}

	for i := range 3 {
		s.RecordPrompt(ctx, "c1", PromptExplicit, now.Add(-time.Duration(i)*20*time.Minute))
	}
	s.RecordPrompt(ctx, "c1", PromptInitiative, now.Add(-2*time.Hour))
	s.RecordPrompt(ctx, "c2", PromptInitiative, now)
	if err := s.RecordPrompt(ctx, "c1", PromptUnknown, now); err == nil {
		t.Error("unknown kind recorded")
	}
	counts, err := s.CountPrompts(ctx, "c1", now.Add(-time.Hour))
	if err != nil || counts[PromptExplicit] != 3 || counts[PromptInitiative] != 0 {
		t.Errorf("counts = %v, %v", counts, err)
	}
	if _, err := s.Prune(ctx, time.Time{}, now); err != nil {
		t.Fatal(err)
	}
	counts, _ = s.CountPrompts(ctx, "c1", time.Time{})
	if counts[PromptInitiative] != 0 || counts[PromptExplicit] != 3 {
		t.Errorf("ledger prune kept old rows or dropped recent ones: %v", counts)
	}
}

// TestLedgerStaysSmallWithoutPrune: recording a prompt drops the channel's rows older than the
// ledger's hour, so the table does not grow when retention pruning is off.
func TestLedgerStaysSmallWithoutPrune(t *testing.T) { forEachDriver(t, testLedgerStaysSmallWithoutPrune) }

func testLedgerStaysSmallWithoutPrune(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := range 10 {
		if err := s.RecordPrompt(ctx, "c1", PromptExplicit, now.Add(time.Duration(i-10)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	s.RecordPrompt(ctx, "c2", PromptInitiative, now.Add(-5*time.Hour))
	s.RecordPrompt(ctx, "c1", PromptInitiative, now.Add(-30*time.Minute))
	s.RecordPrompt(ctx, "c1", PromptExplicit, now)
	all, err := s.CountPrompts(ctx, "c1", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if rows := all[PromptExplicit] + all[PromptInitiative]; rows != 3 { // now-1h (exactly an hour old), now-30m, now
		t.Errorf("c1 ledger holds %d rows, want 3", rows)
	}
	counts, err := s.CountPrompts(ctx, "c2", time.Time{})
	if err != nil || counts[PromptInitiative] != 1 {
		t.Errorf("another channel's row was trimmed: %v, %v", counts, err)
	}
}

