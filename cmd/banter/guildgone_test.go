package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/store"
)

// TestRemovedGuildForgotten: with store.forgetRemovedGuildAfterDays 0, banter forgets a
// server it is removed from. Removed while running (GUILD_DELETE without unavailable), the
// server's messages go at once; removed while banter is stopped, the next process's READY
// does not list it and they go then. A server in an outage (GUILD_DELETE with unavailable
// true, then listed in READY as unavailable with no GUILD_CREATE after it) is never taken for
// removed: its messages stay. With a grace period (30 days), a server that removes banter and
// adds it back is recorded, then cleared (guild_returned), and keeps its messages.
func TestRemovedGuildForgotten(t *testing.T) {
	ctx := context.Background()
	var gone1, gone2, back discordsim.GuildID
	var ch1, ch2, ch3 discordsim.ChannelID
	o := newOSBot(t, ctx, banterBinary(t), "", func(b *botProcess) {
		// Owned by alice: the bot, a plain member, can be removed (an owner cannot).
		gone1 = b.dsim.CreateGuildOwnedBy("gone-while-running", b.alice)
		ch1 = b.dsim.CreateTextChannel(gone1, "general")
		gone2 = b.dsim.CreateGuildOwnedBy("gone-while-stopped", b.alice)
		ch2 = b.dsim.CreateTextChannel(gone2, "general")
		back = b.dsim.CreateGuildOwnedBy("comes-back", b.alice)
		ch3 = b.dsim.CreateTextChannel(back, "general")
		b.storeExtra = "  forgetRemovedGuildAfterDays: 0\n"
	})
	o.waitCaughtUp(t, ctx, 0, o.ch, ch1, ch2, ch3)
	g, cancel := guard(ctx)
	defer cancel()
	said := map[discordsim.GuildID]discordsim.MessageID{}
	for gid, ch := range map[discordsim.GuildID]discordsim.ChannelID{o.guild: o.ch, gone1: ch1, gone2: ch2, back: ch3} {
		said[gid] = o.postIn(t, ctx, ch, "I took up sailing this summer")
		if _, err := simtest.WaitMessage(g, o.dsim, func(m discordsim.Message) bool { return m.ReplyTo() == said[gid] }); err != nil {
			t.Fatalf("no reply in %s: %v\n%s", gid, err, o.logs.String())
		}
	}

	// An outage of the main guild, then the bot removed from gone1: gone1 is purged (the
	// outage came first on the same shard, so it was handled by then) and the main guild not.
	if err := o.dsim.SetGuildAvailable(o.guild, false); err != nil {
		t.Fatal(err)
	}
	if err := o.dsim.RemoveMember(gone1, o.dsim.BotID()); err != nil {
		t.Fatal(err)
	}
	o.waitLine(t, ctx, 0, 1, "guild_removed", map[string]string{"guild_id": string(gone1), "via": "guild_delete"})
	o.waitLine(t, ctx, 0, 1, "guild_data_purged", map[string]string{"guild_id": string(gone1)})

	// Stopped; removed from gone2 meanwhile; started again with the main guild still in its
	// outage (READY lists it as unavailable, no GUILD_CREATE follows).
	if err := o.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := o.dsim.RemoveMember(gone2, o.dsim.BotID()); err != nil {
		t.Fatal(err)
	}
	off := o.logs.Len()
	o.start(t, ctx)
	o.waitLine(t, ctx, off, 1, "guild_removed", map[string]string{"guild_id": string(gone2), "via": "ready"})
	o.waitLine(t, ctx, off, 1, "guild_data_purged", map[string]string{"guild_id": string(gone2)})

	// A grace period of 30 days: removed and added back, a server keeps everything.
	if err := o.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(o.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.Replace(cfg, []byte("forgetRemovedGuildAfterDays: 0"), []byte("forgetRemovedGuildAfterDays: 30"), 1)
	if err := os.WriteFile(o.cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	off = o.logs.Len()
	o.start(t, ctx)
	o.waitCaughtUp(t, ctx, off, ch3)
	if err := o.dsim.RemoveMember(back, o.dsim.BotID()); err != nil {
		t.Fatal(err)
	}
	o.waitLine(t, ctx, off, 1, "guild_removed", map[string]string{"guild_id": string(back)})
	if err := o.dsim.AddMember(back, o.dsim.BotID()); err != nil {
		t.Fatal(err)
	}
	o.waitLine(t, ctx, off, 1, "guild_returned", map[string]string{"guild_id": string(back)})
	if err := o.stop(); err != nil {
		t.Errorf("bot: %v", err)
	}
	if n := o.logs.count(off, "guild_data_purged"); n != 0 {
		t.Errorf("%d purges within the grace period:\n%s", n, o.logs.String())
	}
	for _, line := range o.logs.since(0) {
		if line.msg() == "guild_removed" && line.str("guild_id") == string(o.guild) {
			t.Errorf("the guild in an outage was taken for removed:\n%s", o.logs.String())
		}
	}

	st, err := store.Open(ctx, filepath.Join(filepath.Dir(o.cfgPath), "banter.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, gid := range []discordsim.GuildID{gone1, gone2} {
		if _, err := st.Message(ctx, string(said[gid])); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("what alice said in removed guild %s is still stored (err %v)", gid, err)
		}
	}
	for gid, what := range map[discordsim.GuildID]string{o.guild: "in an outage", back: "that added banter back"} {
		if _, err := st.Message(ctx, string(said[gid])); err != nil {
			t.Errorf("what alice said in the guild %s is gone: %v", what, err)
		}
	}
	want := []string{string(o.guild), string(back)}
	slices.Sort(want)
	if gs, err := st.GuildsWithData(ctx); err != nil || !slices.Equal(gs, want) {
		t.Errorf("guilds with data = %v, %v; want %v", gs, err, want)
	}
	if l, err := st.LeftGuilds(ctx); err != nil || !l[string(back)].IsZero() {
		t.Errorf("the guild that added banter back is still recorded as left: %v, %v", l, err)
	}
}
