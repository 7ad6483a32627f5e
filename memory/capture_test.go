package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/banterbot/banter/store"
)

// TestCapture: a heard message (a voice transcript) is stored and extracted only when memory
// may take it: memory on for the guild, a member who has not paused it, no blocked member, no
// ban word, no bot; otherwise it is not even stored. A pause known to the process stops
// MayCapture at once, and a resume lets it through again.
func TestCapture(t *testing.T) {
	h := newHarness(t, 100) // one batch, sent by Flush
	ctx := context.Background()
	h.answer(`{"facts":[{"subject":"u1","statement":"u1 has a cat named Miso","source_message_ids":["voice-allowed"],"supersedes":0,"same_as":0}]}`)
	const on, off = "100000000000000001", "200000000000000002"
	h.cfg.Memory.GuildIDs = []string{on}
	h.cfg.Permissions.BlockedUserIDs = []string{"blocked"}
	h.st.SetMemoryPaused(ctx, on, "paused", true, h.base)
	for _, tc := range []struct {
		name, guild, author, content string
		bot, want                    bool
	}{
		{"allowed", on, "u1", "I have a cat named Miso", false, true},
		{"memory off in the guild", off, "u1", "I have a dog named Rex", false, false},
		{"paused", on, "paused", "I have a bird named Kiwi", false, false},
		{"blocked", on, "blocked", "I have a fish named Nemo", false, false},
		{"ban word", on, "u1", "I like forbiddenword", false, false},
		{"bot", on, "u9", "I have a robot named Bolt", true, false},
		{"blank", on, "u1", "  ", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.n++
			id := "voice-" + tc.name
			m := store.Message{ID: id, ChannelID: store.VoiceChannelID("vc"), GuildID: tc.guild, AuthorID: tc.author,
				AuthorName: tc.author, Content: tc.content, IsBot: tc.bot, CreatedAt: h.base}
			got, err := h.ex.Capture(ctx, m)
			if err != nil || got != tc.want {
				t.Fatalf("Capture = %v, %v; want %v", got, err, tc.want)
			}
			_, err = h.st.Message(ctx, id)
			if stored := err == nil; stored != tc.want || (!stored && !errors.Is(err, store.ErrNotFound)) {
				t.Errorf("stored = %v (%v), want %v", stored, err, tc.want)
			}
		})
	}
	h.ex.Flush()
	if got := h.current(on); got != "u1 has a cat named Miso" {
		t.Errorf("facts from the captured message = %q", got)
	}
	if n := len(h.memoryRequests()); n != 1 {
		t.Errorf("%d extraction calls, want 1 (the allowed message only)", n)
	}

	if !h.ex.MayCapture(on, "u2") {
		t.Error("MayCapture refuses a member whose pause is unknown")
	}
	h.ex.NotePause(on, "u2", true)
	if h.ex.MayCapture(on, "u2") {
		t.Error("MayCapture lets a member paused in this process through")
	}
	h.ex.NotePause(on, "u2", false)
	if !h.ex.MayCapture(on, "u2") {
		t.Error("MayCapture refuses a resumed member")
	}
}
