package main

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/store"
)

// TestForgetMeGivenWhileDown: while banter run is stopped, alice runs `!banter memory
// forget-me`, then says something new. The next process's catch-up runs the command: what she
// said before it is forgotten, what she said after it is kept (the command's time is the
// watermark, not the time the process ran it).
func TestForgetMeGivenWhileDown(t *testing.T) {
	ctx := context.Background()
	// The simulator's clock (Discord's) runs 90 s behind banter's, as if the restart came 90 s
	// after the messages said while banter was down.
	var skew atomic.Int64
	skew.Store(int64(-90 * time.Second))
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	o := newOSBot(t, ctx, banterBinary(t), "", nil, discordsim.WithClock(clock))
	o.waitCaughtUp(t, ctx, 0, o.ch)
	g, cancel := guard(ctx)
	defer cancel()
	before := o.postIn(t, ctx, o.ch, "I have a dog named Rex, what do you think?")
	if _, err := simtest.WaitMessage(g, o.dsim, func(m discordsim.Message) bool { return m.ReplyTo() == before }); err != nil {
		t.Fatalf("the first message never answered: %v\n%s", err, o.logs.String())
	}
	if err := o.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd, err := o.dsim.Post(ctx, o.alice, o.ch, "!banter memory forget-me")
	if err != nil {
		t.Fatal(err)
	}
	skew.Add(int64(time.Second)) // said later than the command, not in its millisecond
	after, err := o.dsim.Post(ctx, o.alice, o.ch, "I took up sailing this summer")
	if err != nil {
		t.Fatal(err)
	}
	off := o.logs.Len()
	o.start(t, ctx)
	o.waitCaughtUp(t, ctx, off, o.ch)
	if _, err := simtest.WaitMessage(g, o.dsim, func(m discordsim.Message) bool { return m.ReplyTo() == cmd.ID }); err != nil {
		t.Fatalf("the forget-me given while down was never run: %v\n%s", err, o.logs.String())
	}
	if err := o.stop(); err != nil {
		t.Errorf("bot: %v", err)
	}
	st, err := store.Open(ctx, filepath.Join(filepath.Dir(o.cfgPath), "banter.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Message(ctx, string(before)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("what alice said before forget-me is still stored (err %v)", err)
	}
	if _, err := st.Message(ctx, string(after.ID)); err != nil {
		t.Errorf("what alice said after forget-me, while banter was down, was not kept: %v\n%s", err, o.logs.String())
	}
}
