package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store/storetest"
)

// TestKill9BeforeExtraction: alice tells a fact; its memory extraction is on its way to the
// model when banter run is killed (-9). The next process extracts it (the channel's memory
// cursor is before it), and the one after that, started after a clean stop, does not extract it
// again.
func TestKill9BeforeExtraction(t *testing.T) {
	ctx := context.Background()
	var hold atomic.Bool
	hold.Store(true)
	arrived, released := make(chan struct{}, 8), make(chan struct{})
	t.Cleanup(func() {
		if hold.Load() {
			close(released)
		}
	})
	var calls atomic.Int32
	o := newOSBot(t, ctx, banterBinary(t), `memoryLlm:
  model: memory-model
memory:
  enabled: true
  batchMessages: 1
  quietSeconds: 86400
`, func(b *botProcess) {
		b.osim.AddRule(openaisim.Rule{Name: "memory", Match: openaisim.Match{Model: "memory-model"}, Respond: func(r openaisim.Request) openaisim.Reply {
			calls.Add(1)
			if hold.Load() {
				arrived <- struct{}{}
				<-released // answers a process that is gone
			}
			return memoryExtraction(r)
		}})
	})
	o.waitCaughtUp(t, ctx, 0, o.ch)
	g, cancel := guard(ctx)
	defer cancel()
	cat := o.postIn(t, ctx, o.ch, "I have a cat named Miso")
	select {
	case <-arrived:
	case <-g.Done():
		t.Fatalf("the extraction never reached the model\n%s", o.logs.String())
	}
	if err := o.end(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	hold.Store(false)
	close(released)

	off := o.logs.Len()
	o.start(t, ctx)
	o.waitLine(t, ctx, off, 1, "memory_requeued", map[string]string{"channel_id": string(o.ch)})
	if !o.logs.wait(g, func() bool {
		for _, l := range o.logs.since(off) {
			if ids, _ := l["message_ids"].([]any); l.msg() == "memory_extracted" && slices.Contains(ids, any(string(cat))) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the message was never extracted after the restart\n%s", o.logs.String())
	}
	dsn := filepath.Join(filepath.Dir(o.cfgPath), "banter.db")
	if hits, err := storetest.Scan(ctx, "sqlite", dsn, []string{"named Miso"}); err != nil || !inTable(hits, "facts") {
		t.Errorf("the fact was not stored after the restart: %+v, %v", hits, err)
	}

	if err := o.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	off = o.logs.Len()
	o.start(t, ctx)
	o.waitCaughtUp(t, ctx, off, o.ch)
	for _, l := range o.logs.since(off) {
		if l.msg() == "memory_requeued" {
			t.Errorf("the third process queued extracted messages again: %v", l)
		}
	}
	if err := o.stop(); err != nil {
		t.Errorf("bot: %v", err)
	}
	n := 0
	for _, r := range o.osim.Requests() {
		if r.Model == "memory-model" && strings.Contains(r.LastUserText, "named Miso") {
			n++
		}
	}
	if n != 2 || calls.Load() != 2 {
		t.Errorf("the message went to the memory model %d times (%d calls), want twice: the killed process's and the next one's\n%s", n, calls.Load(), o.logs.String())
	}
}
