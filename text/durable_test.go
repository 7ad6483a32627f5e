package text_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/store"
)

// errDead is what the store answers a process that has crashed.
var errDead = errors.New("process killed")

// crashStore kills the process at its first write of a message or a turn once armed: that
// write is done, then the call hangs until the process is stopped (its context cancelled),
// and every later write of a message or a turn fails: nothing more reaches the database.
type crashStore struct {
	store.Store
	mu     sync.Mutex
	armed  bool
	dead   bool
	killed chan struct{} // closed at the kill
	first  string        // the write that was done: "save_message" or "open_turn"
}

// write runs a message or turn write, killing the process at the first one once armed.
func (c *crashStore) write(ctx context.Context, op string, do func() error) error {
	c.mu.Lock()
	dead, kill := c.dead, c.armed && !c.dead
	if kill {
		c.dead, c.first = true, op
	}
	c.mu.Unlock()
	if dead {
		return errDead
	}
	if err := do(); err != nil || !kill {
		return err
	}
	close(c.killed)
	<-ctx.Done()
	return errDead
}

func (c *crashStore) SaveMessage(ctx context.Context, m store.Message) error {
	return c.write(ctx, "save_message", func() error { return c.Store.SaveMessage(ctx, m) })
}

func (c *crashStore) OpenTurn(ctx context.Context, t store.Turn) error {
	return c.write(ctx, "open_turn", func() error { return c.Store.OpenTurn(ctx, t) })
}

func (c *crashStore) CloseTurns(ctx context.Context, ids []string, outcome string, at time.Time) error {
	c.mu.Lock()
	dead := c.dead
	c.mu.Unlock()
	if dead {
		return errDead
	}
	return c.Store.CloseTurns(ctx, ids, outcome, at)
}

// TestCrashBetweenStoreAndTurn: a process killed right after the first of the two writes an
// addressed message makes (its message, its durable turn) leaves a state the next process
// answers it from, once: the catch-up starts after the newest stored message, so the turn must
// be recorded first.
func TestCrashBetweenStoreAndTurn(t *testing.T) {
	h := newHarness(t, nil)
	cs := &crashStore{killed: make(chan struct{})}
	h.wrapStore = func(st store.Store) store.Store { cs.Store = st; return cs }
	h.restart()
	before := h.post(h.bob, "morning all")
	h.waitStored(before.ID, "saved", func(store.Message) bool { return true })
	cs.mu.Lock()
	cs.armed = true
	cs.mu.Unlock()
	asked := h.post(h.alice, mention(h.dsim.BotID())+" are you there?")
	select {
	case <-cs.killed:
	case <-h.ctx.Done():
		t.Fatalf("the addressed message was never written; logs:\n%s", h.tail())
	}
	// The kill: the process's context is cancelled at once (the hung write returns, nothing
	// more reaches Discord or the model), then it is stopped. (The gateway's handlers run one
	// at a time: detaching them waits for the hung one.)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_ = h.svc.Shutdown(gone) // "in-flight replies cancelled" when any
	h.shutdown()
	h.wrapStore = nil
	h.start()
	h.waitBot(1)
	h.waitLog(`"msg":"sent_reply"`, string(asked.ID))
	h.shutdown()
	replies := 0
	for _, r := range h.botMessages() {
		if r.ReplyTo() == asked.ID {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d replies to the message addressed before the crash (killed after %s), want 1", replies, cs.first)
	}
	open, err := reopen(t, h).OpenTurns(h.ctx, string(h.guild))
	if err != nil || len(open) != 0 {
		t.Errorf("open turns after the answer: %v, %v; want none", open, err)
	}
}
