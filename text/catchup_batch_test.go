package text_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/store"
)

// missedPages posts, while the bot is down, what catchUpPages reads back: 250 messages older
// than text.catchUpMaxAgeMinutes, then 150 fresh ones with a message addressed to the bot 121
// messages into them: four pages of 100 (the last cut at the addressed message), and an empty
// one. It returns the addressed message.
func missedPages(h *harness) discordsim.Message {
	h.t.Helper()
	for i := range 250 {
		h.post(h.bob, "old filler "+strconv.Itoa(i))
	}
	h.clock.Advance(20 * time.Minute)
	for i := range 120 {
		h.post(h.bob, "new filler "+strconv.Itoa(i))
	}
	asked := h.post(h.alice, mention(h.dsim.BotID())+" did you miss all that?")
	for i := range 29 {
		h.post(h.bob, "later filler "+strconv.Itoa(i))
	}
	return asked
}

// caughtUp waits for the catch-up of missedPages to be done and answered, and checks that every
// missed message was stored and that the addressed one's turn was recorded and closed.
func caughtUp(t *testing.T, h *harness, asked discordsim.Message) {
	t.Helper()
	r := h.waitBot(2)
	if r.ReplyTo() != asked.ID {
		t.Errorf("reply references %q, want %q", r.ReplyTo(), asked.ID)
	}
	h.waitStored(r.ID, "saved", func(store.Message) bool { return true }) // saved after it is sent
	h.waitLog(`"msg":"catch_up"`, `"from":"stored"`, `"new":400`, `"stale":250`, `"skipped":false`)
	stored, err := h.st.RecentMessages(h.ctx, string(h.general), time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// The message of the first process and its reply, what was missed, and the reply to it.
	if len(stored) != 2+400+1 {
		t.Errorf("%d messages stored, want %d", len(stored), 2+400+1)
	}
	h.waitLog(`"msg":"sent_reply"`, string(asked.ID))
	open, err := h.st.OpenTurns(h.ctx, string(h.guild))
	if err != nil || len(open) != 0 {
		t.Errorf("open turns after the answer: %+v, %v; want none", open, err)
	}
	// The pipeline is done with every message (the chatter declined by Stage A): none is left
	// marked for the next process to take up again.
	if marked, err := h.st.UnhandledMessages(h.ctx, string(h.general), time.Time{}, 1000); err != nil || len(marked) != 0 {
		t.Errorf("%d messages left marked unhandled (%v), want none", len(marked), err)
	}
}

// TestCatchUpStoresPagesInOneWrite: a catch-up stores the missed messages a page at a time, in
// one store write each (save_messages), not one write per message; the message addressed to
// the bot is stored on its own (after its durable turn, by the pipeline), and only the writes
// around it split its page. Counted by the store's own metrics
// (banter_store_operations_total), not timed.
func TestCatchUpStoresPagesInOneWrite(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.alice, mention(h.dsim.BotID())+" hello")
	h.waitBot(1)
	h.shutdown()
	asked := missedPages(h)
	h.wrapStore = func(st store.Store) store.Store { return store.Instrument(st, h.reg) }
	h.start()
	caughtUp(t, h, asked)
	ops := func(op string) float64 {
		return h.metric("banter_store_operations_total", map[string]string{"op": op, "result": "ok"})
	}
	// Pages: 100 stale, 100 stale, 50 stale and 50 fresh, then 70 fresh, the addressed message
	// and 29 fresh: five batches. One by one: the addressed message, and the bot's reply (saved
	// when sent, and again when its own MESSAGE_CREATE arrives, which may come after the reply
	// is logged).
	if batches, single := ops("save_messages"), ops("save_message"); batches != 5 || single < 2 || single > 3 {
		t.Errorf("store writes of messages: %v batches and %v single saves, want 5 and 2 or 3 (one by one: 401 or more saves); logs:\n%s",
			batches, single, h.tail())
	}
	// The unhandled marks of the fresh messages Stage A declined are cleared in one write per
	// batch that had any (the three with fresh messages), not one per message.
	if marks := ops("mark_handled"); marks != 3 {
		t.Errorf("mark_handled writes: %v, want 3 (one per batch with fresh messages)", marks)
	}
}

// failingBatches is a store whose batch writes fail (a database that refuses the transaction).
type failingBatches struct{ store.Store }

var errBatch = errors.New("batch refused")

func (failingBatches) SaveMessages(context.Context, []store.Message) ([]error, error) {
	return nil, errBatch
}

// TestCatchUpBatchFailsOver: when a catch-up's batch write fails, it is logged (store_failed
// op=save_messages) and every message is stored one by one as before: nothing is lost, and the
// addressed message is answered once.
func TestCatchUpBatchFailsOver(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.alice, mention(h.dsim.BotID())+" hello")
	h.waitBot(1)
	h.shutdown()
	asked := missedPages(h)
	h.wrapStore = func(st store.Store) store.Store { return failingBatches{st} }
	h.start()
	caughtUp(t, h, asked)
	h.waitLog(`"msg":"store_failed"`, `"op":"save_messages"`, errBatch.Error())
	if n := len(h.botMessages()); n != 2 {
		t.Errorf("bot sent %d messages, want 2", n)
	}
}
