package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestMemoryCursors(t *testing.T) { forEachDriver(t, testMemoryCursors) }

// testMemoryCursors: a cursor starts once (a later start leaves it), advances only forward,
// belongs to its guild, and MessagesAfter lists what follows it, oldest first, without the
// deleted ones.
func testMemoryCursors(t *testing.T, s Store) {
	ctx := context.Background()
	c, ok := NewMemoryCursors(s)
	if !ok {
		t.Fatalf("%T keeps no memory cursors", s)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	through := func(guild string) map[string]time.Time {
		t.Helper()
		cs, err := c.GuildMemoryCursors(ctx, guild)
		must(err)
		out := map[string]time.Time{}
		for _, x := range cs {
			out[x.ChannelID] = x.Through.UTC()
		}
		return out
	}

	must(c.StartMemoryCursor(ctx, "g1", "c1", t0))
	must(c.StartMemoryCursor(ctx, "g1", "c1", t0.Add(time.Hour))) // a second process's start
	if got := through("g1")["c1"]; !got.Equal(t0) {
		t.Errorf("after two starts c1 = %v, want the first, %v", got, t0)
	}
	must(c.AdvanceMemoryCursor(ctx, "g1", "c1", t0.Add(3*time.Second)))
	must(c.AdvanceMemoryCursor(ctx, "g1", "c1", t0.Add(2*time.Second))) // an older batch, later
	if got := through("g1")["c1"]; !got.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("c1 = %v, want it never moved back from %v", got, t0.Add(3*time.Second))
	}
	must(c.AdvanceMemoryCursor(ctx, "g1", VoiceChannelID("v1"), t0)) // advance without a start
	must(c.StartMemoryCursor(ctx, "g2", "c2", t0))
	g1 := through("g1")
	if len(g1) != 2 || !g1[VoiceChannelID("v1")].Equal(t0) {
		t.Errorf("g1 cursors = %v, want c1 and the voice channel's", g1)
	}

	for i, id := range []string{"m1", "m2", "m3", "m4"} {
		must(s.SaveMessage(ctx, Message{ID: id, ChannelID: "c1", GuildID: "g1", AuthorID: "u", Content: id,
			CreatedAt: t0.Add(time.Duration(i+2) * time.Second)}))
	}
	must(s.SaveMessage(ctx, Message{ID: "other", ChannelID: "c9", GuildID: "g1", AuthorID: "u", Content: "x", CreatedAt: t0.Add(9 * time.Second)}))
	must(s.DeleteMessage(ctx, "m3"))
	ids := func(ms []Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	after, err := c.MessagesAfter(ctx, "c1", g1["c1"], 10)
	must(err)
	if got := ids(after); !slices.Equal(got, []string{"m4"}) {
		t.Errorf("after the cursor: %v, want [m4] (m2 at the cursor, m3 deleted)", got)
	}
	after, err = c.MessagesAfter(ctx, "c1", t0, 1)
	must(err)
	if got := ids(after); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("the first after t0: %v, want [m1] (oldest first)", got)
	}
}
