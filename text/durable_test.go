package text_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
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

// replySavedCrashStore kills the process at the first write after the bot's reply was stored
// (the save that follows its send): the turns stay open with the reply in the channel.
type replySavedCrashStore struct {
	crashStore
	bot string
}

func (c *replySavedCrashStore) SaveMessage(ctx context.Context, m store.Message) error {
	if m.AuthorID != c.bot {
		return c.crashStore.SaveMessage(ctx, m)
	}
	c.mu.Lock()
	c.armed = true // the bot's reply: the kill comes at this very write, once it is done
	c.mu.Unlock()
	return c.crashStore.SaveMessage(ctx, m)
}

// TestCrashAfterCoalescedBroadcast: two addressed messages coalesced into one reply that
// carries no reference (a channel message: initiativeReplyShare 0); a crash after its send and
// before the close leaves both turns open. The next process recognises the reply for both, the
// coalesced one through its main turn's kept text: no model call and no second post, past
// Discord's nonce window.
func TestCrashAfterCoalescedBroadcast(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 60 // the burst closes at two messages
		c.Activity.ReplyCoalesceMaxMessages = 2
	}, toolReply("and you", "reply", "", "Ahoy to the both of you!"))
	h.reconfigure(func(c *config.Config) {
		c.Permissions.AllowInitiativeReplies = true
		c.Permissions.InitiativeChannelIDs = []string{string(h.general)}
		c.Activity.InitiativeReplyShare = 0 // every addressed turn there is a channel message
	})
	cs := &replySavedCrashStore{crashStore: crashStore{killed: make(chan struct{})}, bot: string(h.dsim.BotID())}
	h.wrapStore = func(st store.Store) store.Store { cs.Store = st; return cs }
	h.restart()
	first := h.post(h.alice, mention(h.dsim.BotID())+" hello there")
	second := h.post(h.bob, mention(h.dsim.BotID())+" and you?")
	select {
	case <-cs.killed:
	case <-h.ctx.Done():
		t.Fatalf("the reply was never sent; logs:\n%s", h.tail())
	}
	h.waitLog(`"msg":"turn_coalesced"`, string(first.ID), `"into":"`+string(second.ID)+`"`)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_ = h.svc.Shutdown(gone)
	h.shutdown()
	if bot := h.botMessages(); len(bot) != 1 || bot[0].ReplyTo() != "" {
		t.Fatalf("bot messages at the kill: %+v; want one channel message", bot)
	}
	asks := len(h.generations())
	h.clock.Advance(6 * time.Minute) // past the nonce window, within text.catchUpMaxAgeMinutes
	h.wrapStore = nil
	h.start()
	for _, m := range []discordsim.Message{first, second} {
		h.waitLog(`"msg":"turn_recovered"`, string(m.ID), `"result":"already_answered"`)
	}
	h.shutdown()
	if n := len(h.botMessages()); n != 1 {
		t.Errorf("%d bot messages after the restart, want the one reply", n)
	}
	if n := len(h.generations()); n != asks {
		t.Errorf("the model was asked %d more times after the restart, want 0", n-asks)
	}
	open, err := reopen(t, h).OpenTurns(h.ctx, string(h.guild))
	if err != nil || len(open) != 0 {
		t.Errorf("open turns after the recovery: %v, %v; want none", open, err)
	}
}
