package guildwatch

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/store"
)

// guildOf returns the nth guild id (a snowflake) that shard `shard` of `shards` owns.
func guildOf(t *testing.T, shard, shards, nth int) string {
	t.Helper()
	for i := uint64(1); i < 1000; i++ {
		id := strconv.FormatUint(i<<22|7, 10)
		if s, _ := discord.ShardOf(id, shards); s == shard {
			if nth == 0 {
				return id
			}
			nth--
		}
	}
	t.Fatal("no guild id found")
	return ""
}

// TestReadyOnlyOwnShard: a READY of shard 0 of 2 that lists no guild records as left only the
// stored guilds shard 0 owns, never another shard's (whose READY another process receives);
// a recorded guild a READY lists is cleared. With a negative grace period nothing is purged.
func TestReadyOnlyOwnShard(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mine, theirs, listed := guildOf(t, 0, 2, 0), guildOf(t, 1, 2, 0), guildOf(t, 0, 2, 1)
	for i, g := range []string{mine, theirs, listed} {
		if err := st.SaveMessage(ctx, store.Message{ID: strconv.Itoa(i + 1), ChannelID: "c" + g, GuildID: g, AuthorID: "alice",
			Content: "hi", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.GuildLeft(ctx, listed, time.Now()); err != nil {
		t.Fatal(err)
	}
	w := New(Options{Store: st, AfterDays: -1})
	w.handle(ctx, event{kind: eventReady, shard: 0, shards: 2, listed: map[string]bool{listed: true}})
	left, err := st.LeftGuilds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(maps.Keys(left)); !slices.Equal(got, []string{mine}) {
		t.Errorf("left after shard 0's READY = %v, want [%s] (not %s of shard 1; %s listed)", got, mine, theirs, listed)
	}
	w.Purge(ctx)
	if _, err := st.Message(ctx, "1"); err != nil {
		t.Errorf("purged with forgetRemovedGuildAfterDays -1: %v", err)
	}
}
