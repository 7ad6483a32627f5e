package text_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/storetest"
)

// pauseAfterForgot is the real store, except that the worker's first read of one member's
// forget watermark (store.Forgot), once done, waits until the test releases it: the test runs
// /memory forget-me in between, so that it lands after the worker read the watermark and
// before the attempt's writes.
type pauseAfterForgot struct {
	store.Store
	userID  string
	once    sync.Once
	read    chan struct{} // closed when the watermark has been read
	release chan struct{} // closed by the test
}

func (p *pauseAfterForgot) Forgot(ctx context.Context, guildID, userID string, at time.Time) (bool, error) {
	gone, err := p.Store.Forgot(ctx, guildID, userID, at)
	if userID == p.userID {
		p.once.Do(func() {
			close(p.read)
			select {
			case <-p.release:
			case <-ctx.Done():
			}
		})
	}
	return gone, err
}

// TestForgetMeAfterTheWatermarkRead: bob's question is with the model while alice and bob ask
// more (queued behind it). The next attempt takes both queued turns together; alice runs
// /memory forget-me just after it read her watermark (her turn was not forgotten then), so her
// turn is still answered or covered by the reply, as one being answered. But nothing naming
// her is written after she asked: when her turn is the one answered, the attempt's rate-limit
// ledger row is refused (bob's coalesced turn is kept); when it is coalesced into bob's, its
// durable turn is refused (bob's ledger row is kept). Each refusal is logged
// (memory_write_refused, by message). On the code before, the ledger row and the turn were
// written, naming her (user_id) or her message.
func TestForgetMeAfterTheWatermarkRead(t *testing.T) {
	for _, c := range []struct {
		name      string
		aliceLast bool   // alice asks after bob: her turn is the one answered
		refused   string // what is refused
	}{
		{"her turn answered", true, "prompt_ledger"},
		{"her turn coalesced", false, "turn"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gate := openaitest.NewGate()
			held := toolReply("joke", "reply", "", "Why did the cat sit on the keyboard?")
			held.Latency = openaisim.Latency{TimeToFirstToken: openaitest.HeldDelay}
			h := newHarnessSims(t, false, nil, []openaisim.Option{gate.Option()}, func(c *config.Config) { memoryOn(c) },
				noFacts(), toolReply("Rex", "reply", "", "Rex will be fine, keep him warm."), held)
			ps := &pauseAfterForgot{userID: string(h.alice), read: make(chan struct{}), release: make(chan struct{})}
			h.wrapStore = func(st store.Store) store.Store { ps.Store = st; return ps }
			h.restart()

			h.post(h.bob, "bants, tell me a joke")
			if !gate.Arrived(h.ctx) {
				t.Fatalf("the first reply never reached the model; logs:\n%s", h.tail())
			}
			var hers, his discordsim.Message
			if c.aliceLast {
				his = h.post(h.bob, "bants, how do I keep Rex warm?")
				hers = h.post(h.alice, "bants, my dog Rex is sick, what should I do?")
			} else {
				hers = h.post(h.alice, "bants, my dog Rex is sick, what should I do?")
				his = h.post(h.bob, "bants, how do I keep Rex warm?")
			}
			h.waitQueued(3)
			gate.Release()
			select {
			case <-ps.read:
			case <-h.ctx.Done():
				t.Fatalf("the worker never read her watermark; logs:\n%s", h.tail())
			}
			if text, _ := h.slashMemory(h.alice, "forget-me"); !strings.Contains(text, "I forgot") {
				t.Fatalf("forget-me = %q", text)
			}
			close(ps.release)
			h.waitLog(`"msg":"turn_coalesced"`)
			h.waitLog(`"msg":"memory_write_refused"`, `"what":"`+c.refused+`"`, string(hers.ID))
			h.waitBot(2)
			// What is bob's is written as before.
			wantBob := 1 + boolInt(!c.aliceLast)
			if n, err := h.st.CountUserPrompts(h.ctx, string(h.general), string(h.bob), time.Time{}); err != nil || n != wantBob {
				t.Errorf("bob's ledger rows = %d (%v), want %d", n, err, wantBob)
			}
			h.shutdown()

			hits, err := storetest.Scan(context.Background(), "sqlite", h.dbPath, []string{string(h.alice), string(hers.ID), "Rex is sick"})
			if err != nil {
				t.Fatal(err)
			}
			for _, hit := range hits {
				t.Errorf("%s holds %s after forget-me: %s", hit.Table, hit.Needle, hit.Row)
			}
			if hits, _ := storetest.Scan(context.Background(), "sqlite", h.dbPath, []string{string(his.ID)}); !scanned(hits, "turns") {
				t.Errorf("bob's turn %s is not in the turns table: %v", his.ID, hits)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func scanned(hits []storetest.Hit, table string) bool {
	for _, h := range hits {
		if h.Table == table {
			return true
		}
	}
	return false
}

// waitQueued waits until n turns have been queued (banter_text_queue_depth observed n times).
func (h *harness) waitQueued(n uint64) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a failure guard, not a timing assertion
	for {
		families, err := h.reg.Gather()
		if err != nil {
			h.t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "banter_text_queue_depth" && len(f.GetMetric()) == 1 && f.GetMetric()[0].GetHistogram().GetSampleCount() >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%d turns never queued; logs:\n%s", n, h.tail())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
