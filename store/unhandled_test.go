package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestUnhandledMessages: the rows a batch writes with Unhandled stay marked, per channel and
// oldest first, until MarkHandled clears them; a later save of a marked message (the pipeline's
// own, a live duplicate's) keeps the mark, and a delete clears it.
func TestUnhandledMessages(t *testing.T) { forEachDriver(t, testUnhandledMessages) }

func testUnhandledMessages(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	msg := func(id, ch string, at int, unhandled bool) Message {
		return Message{ID: id, ChannelID: ch, GuildID: "g1", AuthorID: "u1", AuthorName: "bob", Content: "m " + id,
			CreatedAt: base.Add(time.Duration(at) * time.Second), Unhandled: unhandled}
	}
	want := func(ch string, limit int, ids ...string) {
		t.Helper()
		got, err := s.UnhandledMessages(ctx, ch, base, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("unhandled in %s = %v, want %v", ch, got, ids)
		}
	}
	mustSave(t, s, msg("100", "c1", 0, false)) // stored live: handled
	if _, err := s.SaveMessages(ctx, []Message{msg("101", "c1", 1, false), msg("103", "c1", 3, true),
		msg("102", "c1", 2, true), msg("104", "c1", 4, true), msg("201", "c2", 1, true)}); err != nil {
		t.Fatal(err)
	}
	want("c1", 10, "102", "103", "104")
	want("c1", 2, "102", "103")
	want("c2", 10, "201")
	want("c3", 10)
	if got, err := s.UnhandledMessages(ctx, "c1", base.Add(3*time.Second), 10); err != nil || !slices.Equal(got, []string{"103", "104"}) {
		t.Errorf("unhandled in c1 since 3 s = %v, %v; want [103 104]", got, err)
	}

	mustSave(t, s, msg("103", "c1", 3, false)) // saved again: the mark stays
	if _, err := s.SaveMessages(ctx, []Message{msg("100", "c1", 0, true)}); err != nil {
		t.Fatal(err)
	}
	want("c1", 10, "102", "103", "104") // 100 was stored handled: saved again, not marked

	if err := s.MarkHandled(ctx, []string{"102", "104", "404", "201"}); err != nil {
		t.Fatal(err)
	}
	want("c1", 10, "103")
	want("c2", 10)
	if err := s.MarkHandled(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMessage(ctx, "103"); err != nil {
		t.Fatal(err)
	}
	want("c1", 10)
	if got, err := s.Message(ctx, "102"); err != nil || got.Content != "m 102" {
		t.Errorf("message 102 after MarkHandled = %+v, %v", got, err)
	}
}
