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

	// A deletion is final: a later save of the same message (the bot's own record of a reply it
	// sent, racing the gateway's delete event) does not bring it back.
	if err := s.SaveMessage(ctx, Message{ID: "13", ChannelID: "c1", AuthorID: "u1", Content: "late save", CreatedAt: base.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Message(ctx, "13"); !m.Deleted || m.Content != "late save" {
		t.Errorf("re-saved deleted message = %+v, want still deleted with the new content", m)
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
		s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: "u1", Kind: PromptExplicit, At: now.Add(-time.Duration(i) * 20 * time.Minute)})
	}
	s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: "u1", Kind: PromptInitiative, At: now.Add(-2 * time.Hour)})
	s.RecordPrompt(ctx, Prompt{ChannelID: "c2", UserID: "u1", Kind: PromptInitiative, At: now})
	if err := s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: "u1", Kind: PromptUnknown, At: now}); err == nil {
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
func TestLedgerStaysSmallWithoutPrune(t *testing.T) {
	forEachDriver(t, testLedgerStaysSmallWithoutPrune)
}

func testLedgerStaysSmallWithoutPrune(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := range 10 {
		if err := s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: "u1", Kind: PromptExplicit, At: now.Add(time.Duration(i-10) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	s.RecordPrompt(ctx, Prompt{ChannelID: "c2", UserID: "u1", Kind: PromptInitiative, At: now.Add(-5 * time.Hour)})
	s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: "u1", Kind: PromptInitiative, At: now.Add(-30 * time.Minute)})
	s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: "u1", Kind: PromptExplicit, At: now})
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

// TestPromptLedgerPerUser: the ledger counts each user's reply attempts in a channel over the
// window, apart from other users and other channels; rows without a user (recorded before the
// per-user column existed) count for the channel only.
func TestPromptLedgerPerUser(t *testing.T) { forEachDriver(t, testPromptLedgerPerUser) }

func testPromptLedgerPerUser(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	record := func(ch, user string, kind PromptKind, at time.Time) {
		t.Helper()
		if err := s.RecordPrompt(ctx, Prompt{ChannelID: ch, UserID: user, Kind: kind, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	record("c1", "alice", PromptExplicit, now.Add(-50*time.Minute))
	record("c1", "alice", PromptInitiative, now.Add(-10*time.Minute))
	record("c1", "alice", PromptExplicit, now.Add(-90*time.Minute)) // outside the window
	record("c1", "bob", PromptExplicit, now.Add(-5*time.Minute))
	record("c2", "alice", PromptExplicit, now.Add(-5*time.Minute))
	record("c1", "", PromptExplicit, now.Add(-time.Minute))
	since := now.Add(-time.Hour)
	tests := []struct {
		channel, user string
		want          int
	}{
		{"c1", "alice", 2},
		{"c1", "bob", 1},
		{"c2", "alice", 1},
		{"c2", "bob", 0},
		{"c1", "carol", 0},
	}
	for _, tt := range tests {
		n, err := s.CountUserPrompts(ctx, tt.channel, tt.user, since)
		if err != nil || n != tt.want {
			t.Errorf("CountUserPrompts(%s, %s) = %d, %v; want %d", tt.channel, tt.user, n, err, tt.want)
		}
	}
	counts, err := s.CountPrompts(ctx, "c1", since)
	if err != nil || counts[PromptExplicit] != 3 || counts[PromptInitiative] != 1 {
		t.Errorf("channel counts = %v, %v; want 3 explicit (alice, bob, no user), 1 initiative", counts, err)
	}
}

func TestSearchMessages(t *testing.T) { forEachDriver(t, testSearchMessages) }

func testSearchMessages(t *testing.T, s Store) {
	ctx := context.Background()
	lastWeek := time.Date(2026, 11, 14, 18, 0, 0, 0, time.UTC)
	msgs := []Message{
		{ID: "1", GuildID: "g1", ChannelID: "c1", AuthorID: "alice", Content: "The new pizza place on Main Street is great", CreatedAt: lastWeek},
		{ID: "2", GuildID: "g1", ChannelID: "c1", AuthorID: "bob", Content: "pizza again? sure", CreatedAt: lastWeek.Add(time.Hour)},
		{ID: "3", GuildID: "g1", ChannelID: "c2", AuthorID: "carol", Content: "secret pizza plans in the mods channel", CreatedAt: lastWeek},
		{ID: "4", GuildID: "g2", ChannelID: "c9", AuthorID: "dave", Content: "pizza in another server", CreatedAt: lastWeek},
		{ID: "5", GuildID: "g1", ChannelID: "c1", AuthorID: "troll", Content: "pizza pizza pizza", CreatedAt: lastWeek},
		{ID: "6", GuildID: "g1", ChannelID: "c1", AuthorID: "alice", Content: "deleted pizza thought", CreatedAt: lastWeek},
		{ID: "7", GuildID: "g1", ChannelID: "c1", AuthorID: "alice", Content: "Crème brûlée at the café", CreatedAt: lastWeek},
	}
	for _, m := range msgs {
		if err := s.SaveMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteMessage(ctx, "6"); err != nil {
		t.Fatal(err)
	}
	ids := func(ms []Message) string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name string
		q    SearchQuery
		want string
	}{
		{"same channel, best match first", SearchQuery{GuildID: "g1", ChannelIDs: []string{"c1"}, Text: "pizza place", ExcludeAuthorIDs: []string{"troll"}}, "1,2"},
		{"other channel not searched", SearchQuery{GuildID: "g1", ChannelIDs: []string{"c1"}, Text: "mods plans", ExcludeAuthorIDs: []string{"troll"}}, ""},
		{"whole guild when asked", SearchQuery{GuildID: "g1", Text: "plans"}, "3"},
		{"never another guild", SearchQuery{GuildID: "g2", Text: "main street"}, ""},
		{"excluded author", SearchQuery{GuildID: "g1", ChannelIDs: []string{"c1"}, Text: "pizza", ExcludeAuthorIDs: []string{"troll", "bob"}}, "1"},
		{"case and accents", SearchQuery{GuildID: "g1", Text: "CREME BRULEE"}, "7"},
		{"query syntax is read as words", SearchQuery{GuildID: "g1", ChannelIDs: []string{"c1"}, Text: `"pizza" OR NOT street* AND (x`, ExcludeAuthorIDs: []string{"troll", "bob"}}, "1"},
		{"only punctuation", SearchQuery{GuildID: "g1", Text: `*"()^:`}, ""},
		{"before bound", SearchQuery{GuildID: "g1", ChannelIDs: []string{"c1"}, Text: "pizza", Before: lastWeek.Add(time.Minute), ExcludeAuthorIDs: []string{"troll"}}, "1"},
		{"limit", SearchQuery{GuildID: "g1", Text: "pizza", Limit: 1}, "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SearchMessages(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("found %q, want %q", ids(got), tt.want)
			}
		})
	}
	// An edit is searchable at once, and the old words no longer match.
	if err := s.EditMessage(ctx, "2", "actually tacos tonight", lastWeek.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.SearchMessages(ctx, SearchQuery{GuildID: "g1", Text: "tacos"}); ids(got) != "2" {
		t.Errorf("after edit, tacos finds %q", ids(got))
	}
	if got, _ := s.SearchMessages(ctx, SearchQuery{GuildID: "g1", ChannelIDs: []string{"c1"}, Text: "again"}); ids(got) != "" {
		t.Errorf("after edit, the old text still matches: %q", ids(got))
	}
	if _, err := s.SearchMessages(ctx, SearchQuery{Text: "pizza"}); err == nil {
		t.Error("a search without a guild was allowed")
	}
}

func TestMessageImages(t *testing.T) { forEachDriver(t, testMessageImages) }

// testMessageImages: a message keeps the images it shows; saving it again (a REST re-fetch
// with freshly signed URLs) replaces them; a message without images has none.
func testMessageImages(t *testing.T, s Store) {
	ctx := context.Background()
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	cat := Image{Source: "attachment", URL: "https://cdn.discordapp.com/attachments/1/2/cat.png?ex=1&is=0&hm=a",
		ProxyURL: "https://media.discordapp.net/attachments/1/2/cat.png?ex=1&is=0&hm=a", Filename: "cat.png", ContentType: "image/png", Size: 4821}
	meme := Image{Source: "embed", ProxyURL: "https://images-ext-1.discordapp.net/external/x/meme.jpg", Filename: "meme.jpg"}
	m := Message{ID: "1", ChannelID: "c", GuildID: "g", AuthorID: "u", Content: "look", CreatedAt: at, Images: []Image{cat, meme}}
	if err := s.SaveMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMessage(ctx, Message{ID: "2", ChannelID: "c", GuildID: "g", AuthorID: "u", Content: "plain", CreatedAt: at.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Message(ctx, "1")
	if err != nil || len(got.Images) != 2 || got.Images[0] != cat || got.Images[1] != meme {
		t.Fatalf("images = %+v, %v; want cat then meme", got.Images, err)
	}
	recent, err := s.RecentMessages(ctx, "c", time.Time{}, 5)
	if err != nil || len(recent) != 2 || len(recent[0].Images) != 2 || recent[1].Images != nil {
		t.Fatalf("recent = %+v, %v", recent, err)
	}
	fresh := cat
	fresh.URL = strings.Replace(cat.URL, "ex=1", "ex=2", 1)
	m.Images = []Image{fresh}
	if err := s.SaveMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Message(ctx, "1"); len(got.Images) != 1 || got.Images[0].URL != fresh.URL {
		t.Errorf("after a re-save, images = %+v; want the fresh URL only", got.Images)
	}
}

// TestRequestBudget: a provider's request budget books slots an interval apart and declines a
// request whose slot is further away than it may wait; providers are independent. (An interval
// of an hour: the slots do not depend on how fast the test runs.)
func TestRequestBudget(t *testing.T) { forEachDriver(t, testRequestBudget) }

func testRequestBudget(t *testing.T, s Store) {
	ctx := context.Background()
	const interval, maxWait = time.Hour, 90 * time.Minute
	a := NewRequestBudget(s, "a", interval)
	steps := []struct {
		budget   Budget
		ok       bool
		waitNear time.Duration // the wait, to the nearest minute
	}{
		{a, true, 0},
		{a, true, time.Hour},
		{a, false, 0}, // its slot is two hours away
		{NewRequestBudget(s, "b", interval), true, 0},
	}
	for i, st := range steps {
		wait, ok, err := st.budget.Reserve(ctx, maxWait)
		if err != nil {
			t.Fatal(err)
		}
		if ok != st.ok || (ok && wait.Round(time.Minute) != st.waitNear) {
			t.Errorf("reservation %d: ok=%v wait=%v, want ok=%v wait≈%v", i, ok, wait, st.ok, st.waitNear)
		}
	}
}
