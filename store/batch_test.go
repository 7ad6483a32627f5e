package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSaveMessages: a batch save stores what the same saves one by one store, row for row: a
// duplicate id inside a batch or across batches replaces the row as a later SaveMessage would
// (a persona kept, a deletion final), a message a forget-me watermark covers is refused in its
// own result (ErrForgotten, naming it) while the rest of the batch is stored, and banter's reply
// to forgotten words is refused, another member's loses its link.
func TestSaveMessages(t *testing.T) { forEachDriver(t, testSaveMessages) }

func testSaveMessages(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	const alice, bob = "424242424242", "434343434343"
	if _, err := s.ForgetMember(ctx, "g1", alice, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Two runs of the same writes, one by SaveMessage, one by SaveMessages, each in its own
	// channel with its own ids (prefix).
	msg := func(prefix, id, author string, at time.Duration, content string) Message {
		return Message{ID: prefix + id, ChannelID: "c-" + prefix, GuildID: "g1", AuthorID: author, AuthorName: author,
			Content: content, CreatedAt: base.Add(at)}
	}
	batches := func(prefix string) [][]Message {
		self := msg(prefix, "self", "bot", 3*time.Hour, "with a persona")
		self.IsSelf, self.IsBot, self.Persona = true, true, "pirate"
		selfAgain := self
		selfAgain.Persona, selfAgain.Content = "", "saved again without one"
		botReply := msg(prefix, "r-bot", "bot", 2*time.Hour, "re old")
		botReply.IsSelf, botReply.ReplyToID, botReply.ReplyToOrigin = true, prefix+"old", Origin{AuthorID: alice, At: base}
		bobReply := msg(prefix, "r-bob", bob, 2*time.Hour, "re old")
		bobReply.ReplyToID, bobReply.ReplyToOrigin = prefix+"old", Origin{AuthorID: alice, At: base}
		withImage := msg(prefix, "img", bob, 4*time.Hour, "look")
		withImage.Images = []Image{{Source: "attachment", URL: "https://cdn.example/a.png", Filename: "a.png"}}
		return [][]Message{{
			msg(prefix, "a", bob, 2*time.Hour, "first words"),
			msg(prefix, "old", alice, 0, "said before her forget-me"),
			msg(prefix, "a", bob, 2*time.Hour, "first words, edited in the same batch"),
			msg(prefix, "new", alice, 2*time.Hour, "said after it"),
			self, botReply, bobReply, withImage,
		}, {
			msg(prefix, "a", bob, 2*time.Hour, "first words, saved again by the next batch"),
			msg(prefix, "gone", bob, 5*time.Hour, "deleted between the batches: stays deleted"),
			selfAgain,
		}}
	}
	refused := map[string]bool{"old": true, "r-bot": true}
	for i, b := range batches("one-") {
		for _, m := range b {
			err := s.SaveMessage(ctx, m)
			if want := refused[strings.TrimPrefix(m.ID, "one-")]; errors.Is(err, ErrForgotten) != want || (err != nil && !want) {
				t.Fatalf("SaveMessage %s: %v, want refused %v", m.ID, err, want)
			}
		}
		if i == 0 {
			mustSave(t, s, msg("one-", "gone", bob, 5*time.Hour, "first"))
			if err := s.DeleteMessage(ctx, "one-gone"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, b := range batches("batch-") {
		results, err := s.SaveMessages(ctx, b)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if len(results) != len(b) {
			t.Fatalf("batch %d: %d results for %d messages", i, len(results), len(b))
		}
		for j, r := range results {
			id := b[j].ID
			want := refused[strings.TrimPrefix(id, "batch-")]
			if errors.Is(r, ErrForgotten) != want || (r != nil && !want) {
				t.Errorf("batch %d: %s: %v, want refused %v", i, id, r, want)
			}
			if r != nil && !strings.Contains(r.Error(), id) {
				t.Errorf("batch %d: the refusal of %s does not name it: %v", i, id, r)
			}
		}
		if i == 0 {
			mustSave(t, s, msg("batch-", "gone", bob, 5*time.Hour, "first"))
			if err := s.DeleteMessage(ctx, "batch-gone"); err != nil {
				t.Fatal(err)
			}
		}
	}
	one, err := s.RecentMessages(ctx, "c-one-", time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "old", "new", "self", "r-bot", "r-bob", "img", "gone"} {
		single, serr := s.Message(ctx, "one-"+id)
		batched, berr := s.Message(ctx, "batch-"+id)
		if (serr == nil) != (berr == nil) {
			t.Errorf("%s: saved one by one: %v; in batches: %v", id, serr, berr)
			continue
		}
		if serr != nil {
			continue
		}
		if single.ReplyToID != "" {
			single.ReplyToID = "batch-" + strings.TrimPrefix(single.ReplyToID, "one-")
		}
		single.ID, single.ChannelID = batched.ID, batched.ChannelID
		if !reflect.DeepEqual(single, batched) {
			t.Errorf("%s: saved one by one\n%+v\nin batches\n%+v", id, single, batched)
		}
	}
	if len(one) != 5 { // a, new, r-bob, self, img ("gone" is deleted; "old" and "r-bot" refused)
		t.Errorf("one by one: %d messages stored, want 5: %+v", len(one), one)
	}
	if m, _ := s.Message(ctx, "batch-a"); m.Content != "first words, saved again by the next batch" {
		t.Errorf("a duplicate id across batches: %q, want the later batch's words", m.Content)
	}
	if m, _ := s.Message(ctx, "batch-self"); m.Persona != "pirate" || m.Content != "saved again without one" {
		t.Errorf("banter's message saved again without a persona: %+v, want the persona kept", m)
	}
	if m, _ := s.Message(ctx, "batch-r-bob"); m.ReplyToID != "" {
		t.Errorf("bob's reply to forgotten words keeps its link to %q", m.ReplyToID)
	}
	if results, err := s.SaveMessages(ctx, nil); results != nil || err != nil {
		t.Errorf("an empty batch: %v, %v", results, err)
	}
}

// TestSaveMessagesFailed: a batch whose transaction fails saves none of its messages and says
// why, naming the batch: a cancelled context (both drivers), and on Postgres a message its
// server refuses (a NUL in the text) after one it would have stored.
func TestSaveMessagesFailed(t *testing.T) {
	forEachDriverAt(t, func(t *testing.T, s Store, driver, _ string) {
		base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		ok := Message{ID: "ok", ChannelID: "c", GuildID: "g", AuthorID: "u", Content: "fine", CreatedAt: base}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		results, err := s.SaveMessages(cancelled, []Message{ok})
		if err == nil || results != nil || !strings.Contains(err.Error(), "save 1 messages") {
			t.Errorf("cancelled: %v, %v; want an error naming the batch", results, err)
		}
		if driver == "postgres" {
			bad := Message{ID: "bad", ChannelID: "c", GuildID: "g", AuthorID: "u", Content: "nul \x00 byte", CreatedAt: base}
			if results, err := s.SaveMessages(context.Background(), []Message{ok, bad}); err == nil || results != nil ||
				!strings.Contains(err.Error(), "save message bad") {
				t.Errorf("a refused message: %v, %v; want an error naming it", results, err)
			}
		}
		if _, err := s.Message(context.Background(), "ok"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a message of a failed batch: %v, want not stored", err)
		}
	})
}

func mustSave(t *testing.T, s Store, m Message) {
	t.Helper()
	if err := s.SaveMessage(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}
