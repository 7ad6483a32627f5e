package text_test

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// countingStore is the real store, counting the reads the pipeline makes by method. Reads of
// a channel's messages with no time bound (the startup catch-up's) are not counted.
type countingStore struct {
	store.Store
	mu sync.Mutex
	n  map[string]int
}

func (c *countingStore) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[op]++
}

// take returns the counts since the last take.
func (c *countingStore) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.n)
	clear(c.n)
	return out
}

func (c *countingStore) Message(ctx context.Context, id string) (store.Message, error) {
	c.count("Message")
	return c.Store.Message(ctx, id)
}

func (c *countingStore) RecentMessages(ctx context.Context, ch string, before time.Time, limit int) ([]store.Message, error) {
	if !before.IsZero() {
		c.count("RecentMessages")
	}
	return c.Store.RecentMessages(ctx, ch, before, limit)
}

func (c *countingStore) CountPrompts(ctx context.Context, ch string, since time.Time) (map[store.PromptKind]int, error) {
	c.count("CountPrompts")
	return c.Store.CountPrompts(ctx, ch, since)
}

func (c *countingStore) CountUserPrompts(ctx context.Context, ch, user string, since time.Time) (int, error) {
	c.count("CountUserPrompts")
	return c.Store.CountUserPrompts(ctx, ch, user, since)
}

func (c *countingStore) Personas(ctx context.Context, ids []string) (map[string]store.UserPersona, error) {
	c.count("Personas")
	return c.Store.Personas(ctx, ids)
}

// TestTurnReadsTheStoreOnce: a turn carries what its stages need, so each kind of read happens
// at most once per turn: the message replied to (looked up at ingest, reused as the anchor or
// the chain's first hop), the channel's history (also the rest of a reply chain, and the
// classifier's context), the prompt ledger (read at admission, brought up to date from the
// channel's tally when answered) and the participants' personas.
func TestTurnReadsTheStoreOnce(t *testing.T) {
	cs := &countingStore{n: map[string]int{}}
	h := newHarness(t, func(c *config.Config) {
		c.Context.ClusterLookback = 3
		c.Activity.PerUserPromptShare = 1 // no per-user ledger read
		c.LLM.DirectAddressClassifier.Enabled = true
		c.LLM.DirectAddressClassifier.Model = "gpt-5-nano"
	}, openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-nano"}, Reply: openaisim.Reply{Text: "0.9"}})
	h.wrapStore = func(st store.Store) store.Store { cs.Store = st; return cs }
	h.restart()
	var pizza discordsim.MessageID
	for _, c := range []string{"morning all", "who's up for lunch?", "pizza place?"} {
		m := h.post(h.bob, c)
		h.waitStored(m.ID, "saved", func(store.Message) bool { return true })
		pizza = m.ID
	}
	want := func(what string, ops map[string]int) {
		t.Helper()
		got := cs.take()
		for op, n := range ops {
			if got[op] != n {
				t.Errorf("%s: %d %s reads, want %d (all: %v)", what, got[op], op, n, got)
			}
		}
	}
	cs.take()

	// A mention: the ledger, the history, the personas.
	m1 := h.post(h.alice, mention(h.dsim.BotID())+" what do you reckon?")
	b1 := h.waitBot(1)
	want("mention", map[string]int{"Message": 0, "RecentMessages": 1, "CountPrompts": 1, "Personas": 1})

	// A reply to the bot three messages deep, its whole chain in the history: the parent is
	// read once at ingest, the rest of the chain comes from the history.
	m2 := h.post(h.alice, "go on then", discordsim.ReplyTo(b1.ID))
	h.waitBot(2)
	want("direct reply", map[string]int{"Message": 1, "RecentMessages": 1, "CountPrompts": 1, "Personas": 1})
	p := h.lastPrompt()
	for _, id := range []discordsim.MessageID{m1.ID, b1.ID, m2.ID} {
		if !strings.Contains(p, string(id)) {
			t.Errorf("reply chain lacks %s:\n%s", id, p)
		}
	}

	// An addressed reply to bob's message: the anchor is the message read at ingest.
	h.post(h.alice, "banter, is this a good idea?", discordsim.ReplyTo(pizza))
	h.waitBot(3)
	want("anchor", map[string]int{"Message": 1, "RecentMessages": 1, "CountPrompts": 1, "Personas": 1})
	if p := h.lastPrompt(); !strings.Contains(p, "is replying to this message") {
		t.Errorf("no anchor in the prompt:\n%s", p)
	}

	// A message that only names the bot goes to the direct-address classifier, which is shown
	// the history the context then reuses.
	h.post(h.alice, "I wonder what does banter think about that")
	h.waitBot(4)
	want("classifier", map[string]int{"Message": 0, "RecentMessages": 1, "CountPrompts": 1, "Personas": 1})
}
