package main

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/store"
)

// TestMemoryCommandOnceAcrossRestart: a member runs `!banter memory forget-me`, is answered,
// then speaks again in another channel; banter run is stopped and started again on the same
// database. The command is newer than anything stored in its channel (it is not stored, nor is
// its answer), so the startup catch-up reads it back: it must not run again, neither answered
// twice nor forgetting what the member said after it.
func TestMemoryCommandOnceAcrossRestart(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx := context.Background()
	var other discordsim.ChannelID
	o := newOSBot(t, ctx, banterBinary(t), "", func(b *botProcess) { other = b.dsim.CreateTextChannel(b.guild, "other") })
	o.waitCaughtUp(t, ctx, 0, o.ch, other)
	g, cancel := guard(ctx)
	defer cancel()
	cmd, err := o.dsim.Post(ctx, o.alice, o.ch, "!banter memory forget-me")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitMessage(g, o.dsim, func(m discordsim.Message) bool { return m.ReplyTo() == cmd.ID }); err != nil {
		t.Fatalf("forget-me never answered: %v\n%s", err, o.logs.String())
	}
	later := o.postIn(t, ctx, other, "I took up sailing this summer, what do you think?")
	if _, err := simtest.WaitMessage(g, o.dsim, func(m discordsim.Message) bool { return m.ReplyTo() == later }); err != nil {
		t.Fatalf("the later message never answered: %v\n%s", err, o.logs.String())
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := o.end(sig); err != nil {
			t.Fatalf("%v: %v\n%s", sig, err, o.logs.String())
		}
		off := o.logs.Len()
		o.start(t, ctx)
		o.waitCaughtUp(t, ctx, off, o.ch, other)
	}
	if err := o.stop(); err != nil {
		t.Errorf("bot: %v", err)
	}
	if n := o.replies()[cmd.ID]; n != 1 {
		t.Errorf("the forget-me command was answered %d times, want once", n)
	}
	st, err := store.Open(ctx, filepath.Join(filepath.Dir(o.cfgPath), "banter.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Message(ctx, string(later)); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			t.Errorf("what the member said after forget-me was forgotten by a restart")
		} else {
			t.Fatal(err)
		}
	}
}
