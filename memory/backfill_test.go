package memory

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
)

// backfillEnv is a harness (store, OpenAI simulator) with an embedder and a backfill worker
// on a client metered at embedPrice and admitted by the daily budgets (cfg.Budget).
type backfillEnv struct {
	*harness
	bf *Backfill
}

// embedPrice makes a call of a few texts cost about a cent.
const embedPrice = 1000 // US dollars per million input tokens

func newBackfillEnv(t *testing.T, driver string, simOpts ...openaisim.Option) *backfillEnv {
	t.Helper()
	h := newHarnessOn(t, 100, driver, simOpts...)
	h.base = time.Now().Add(-30 * 24 * time.Hour) // older than the backfill's settling hour
	h.cfg.Embeddings.Backfill = config.EmbeddingsBackfill{Enabled: true, BatchSize: 2, BatchesPerMinute: config.MaxBackfillBatchesPerMinute}
	ledger, ok := store.NewSpendLedger(h.st)
	if !ok {
		t.Fatal("the store keeps no spend ledger")
	}
	guard := budget.New(budget.Options{Config: func() *config.Config { return h.cfg }, Ledger: ledger})
	meter := llm.NewMeter(map[string]llm.Price{h.cfg.Embeddings.Model: {InputPerMTok: embedPrice}}, nil, nil)
	meter.SetSpender(guard)
	client, err := llm.New(llm.Options{BaseURL: h.sim.BaseURL(), APIKey: "sk", MaxRetries: -1, Meter: meter, Gate: guard})
	if err != nil {
		t.Fatal(err)
	}
	em, err := NewEmbedder(func() *config.Config { return h.cfg }, h.st, client, nil, NewMetrics(nil))
	if err != nil {
		t.Fatal(err)
	}
	h.ex.opts.Embedder, h.em = em, em
	bf, err := NewBackfill(BackfillOptions{Config: func() *config.Config { return h.cfg }, Store: h.st, Embedder: em, Budget: guard, Metrics: NewMetrics(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return &backfillEnv{harness: h, bf: bf}
}

// store saves a message as the text pipeline did, n minutes after the base time.
func (e *backfillEnv) store(id, author, name, content string, minute int, bot bool) {
	e.t.Helper()
	m := store.Message{ID: id, ChannelID: "c-g1", GuildID: "g1", AuthorID: author, AuthorName: name, IsBot: bot,
		Content: content, CreatedAt: e.base.Add(time.Duration(minute) * time.Minute)}
	if err := e.st.SaveMessage(context.Background(), m); err != nil {
		e.t.Fatal(err)
	}
}

// fact stores a fact noted n minutes after the base time.
func (e *backfillEnv) fact(subject, name, statement string, minute int) {
	e.t.Helper()
	if _, err := e.st.AddFact(context.Background(), store.Fact{GuildID: "g1", SubjectID: subject, SubjectName: name,
		Statement: statement, CreatedAt: e.base.Add(time.Duration(minute) * time.Minute)}); err != nil {
		e.t.Fatal(err)
	}
}

// newHeldEnv is newBackfillEnv with embeddings on and a gate that holds the simulator's
// answers a test asks it to.
func newHeldEnv(t *testing.T, driver string) (*backfillEnv, *openaitest.Gate) {
	t.Helper()
	g := openaitest.NewGate()
	e := newBackfillEnv(t, driver, g.Option())
	e.cfg.Embeddings.Enabled = true
	return e, g
}

// passHeld starts a pass whose first embeddings call the gate holds; it returns once the call
// is held, with what waits for the pass's report.
func (e *backfillEnv) passHeld(g *openaitest.Gate) (report func() BackfillReport) {
	e.t.Helper()
	ctx := context.Background()
	if err := e.sim.AddRule(openaisim.Rule{Name: "held", Match: openaisim.Match{Endpoint: openaisim.EndpointEmbeddings}, Times: 1,
		Latency: openaisim.Latency{TimeToFirstToken: openaitest.HeldDelay}}); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan BackfillReport, 1)
	go func() { done <- e.bf.Pass(ctx) }()
	g.Arrived(ctx)
	return func() BackfillReport { return <-done }
}

// embedded is the text of every embeddings request, in order.
func (e *backfillEnv) embedded() []string {
	var out []string
	for _, r := range e.sim.RequestsFor(openaisim.EndpointEmbeddings) {
		out = append(out, r.Prompt)
	}
	return out
}

// lookup is memory_lookup's search by meaning (and words) for a query: the facts, and the
// messages found by meaning.
func (e *backfillEnv) lookup(query string) (facts []string, msgs []string) {
	e.t.Helper()
	ctx := context.Background()
	qv, err := e.em.Query(ctx, "g1", query)
	if err != nil {
		e.t.Fatal(err)
	}
	fs, err := LookupFacts(ctx, e.st, "g1", query, qv, e.cfg.Embeddings.MeaningWeight, 5)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range fs {
		facts = append(facts, f.Statement)
	}
	ms, err := e.st.NearestMessages(ctx, store.VectorQuery{GuildID: "g1", Model: qv.Model, Vector: qv.Vector})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range ms {
		msgs = append(msgs, m.ID)
	}
	return facts, msgs
}

// TestBackfillFindsWhatCameBefore: messages and a fact stored while embeddings were off are
// not found by meaning when embeddings are turned on; the backfill embeds them, newest first
// (facts, then messages), and memory_lookup's search by meaning finds them. A paused member's
// words and a bot's are never sent; a second pass finds nothing left and makes no call.
func TestBackfillFindsWhatCameBefore(t *testing.T) {
	forEachStore(t, func(t *testing.T, driver string) {
		e := newBackfillEnv(t, driver)
		ctx := context.Background()
		e.cfg.Embeddings.Enabled = false
		e.store("1", "u2", "Bob", "my kitten Miso knocked my coffee over", 1, false)
		e.store("2", "u1", "Alice", "I work at the bakery on Main Street", 2, false)
		e.store("3", "u3", "Carol", "falconry is my secret hobby", 3, false)
		e.store("4", "bot1", "Helper", "kitten trivia from a bot", 4, true)
		e.store("5", "u1", "Alice", "off to the shops", 5, false)
		e.fact("u2", "Bob", "Bob has a kitten named Miso", 1)
		if err := e.st.SetMemoryPaused(ctx, "g1", "u3", true, e.base); err != nil {
			t.Fatal(err)
		}

		e.cfg.Embeddings.Enabled = true
		const query = "does anyone keep a feline?"
		if facts, msgs := e.lookup(query); len(facts) != 0 || len(msgs) != 0 {
			t.Fatalf("before the backfill, found %q and messages %v (want nothing: no word shared, no embedding)", facts, msgs)
		}
		calls := len(e.embedded())

		rep := e.bf.Pass(ctx)
		if rep.Facts != 1 || rep.Messages != 3 || len(rep.Stopped) != 0 {
			t.Fatalf("pass = %+v, want 1 fact and 3 messages, not stopped", rep)
		}
		sent := e.embedded()[calls:]
		want := []string{"Bob Bob has a kitten named Miso", "off to the shops\nI work at the bakery on Main Street", "my kitten Miso knocked my coffee over"}
		if !slices.Equal(sent, want) {
			t.Errorf("backfill calls = %q, want newest first, a page of 2 a call: %q", sent, want)
		}
		for _, s := range sent {
			if strings.Contains(s, "falconry") || strings.Contains(s, "trivia") {
				t.Errorf("sent to be embedded: %q (a paused member's or a bot's words)", s)
			}
		}
		facts, msgs := e.lookup(query)
		if len(facts) == 0 || facts[0] != "Bob has a kitten named Miso" {
			t.Errorf("facts found by meaning after the backfill = %q, want Bob's kitten", facts)
		}
		if len(msgs) == 0 || msgs[0] != "1" {
			t.Errorf("messages found by meaning after the backfill = %v, want message 1 first", msgs)
		}

		calls = len(e.embedded())
		if rep := e.bf.Pass(ctx); rep.Facts+rep.Messages != 0 || len(e.embedded()) != calls {
			t.Errorf("second pass = %+v with %d calls, want nothing left to do", rep, len(e.embedded())-calls)
		}
	})
}

// TestBackfillModelChange: vectors of another model (or length) are never compared with the
// current model's: after embeddings.model or .dimensions changes, what was embedded before is
// not found by meaning until the backfill embeds it again under the new model, replacing the
// old vector.
func TestBackfillModelChange(t *testing.T) {
	e := newBackfillEnv(t, "sqlite")
	ctx := context.Background()
	e.store("1", "u2", "Bob", "my kitten Miso knocked my coffee over", 1, false)
	e.cfg.Embeddings.Enabled = true
	if rep := e.bf.Pass(ctx); rep.Messages != 1 {
		t.Fatalf("first pass = %+v", rep)
	}
	for _, change := range []struct {
		name  string
		apply func(c *config.Embeddings)
	}{
		{"model", func(c *config.Embeddings) { c.Model = "text-embedding-3-large" }},
		{"dimensions", func(c *config.Embeddings) { c.Dimensions = 256 }},
	} {
		change.apply(&e.cfg.Embeddings)
		if _, msgs := e.lookup("a feline"); len(msgs) != 0 {
			t.Errorf("after the %s changed, found %v by meaning before the backfill (a vector of the old one compared)", change.name, msgs)
		}
		if rep := e.bf.Pass(ctx); rep.Messages != 1 {
			t.Errorf("pass after the %s changed = %+v, want the message again", change.name, rep)
		}
		if _, msgs := e.lookup("a feline"); !slices.Equal(msgs, []string{"1"}) {
			t.Errorf("after the %s changed and the backfill, found %v, want message 1", change.name, msgs)
		}
	}
}

// TestBackfillStopsAtTheBudget: the backfill stops a guild at its soft threshold (the cap
// here): one call's cost crosses it, and no other call is made, even with the embeddings slot
// allowed at the cap (which keeps memory_lookup's queries going, not the backfill).
func TestBackfillStopsAtTheBudget(t *testing.T) {
	forEachStore(t, func(t *testing.T, driver string) {
		e := newBackfillEnv(t, driver)
		e.cfg.Embeddings.Enabled = true
		e.cfg.Budget.GuildDailyUSD, e.cfg.Budget.SoftThreshold = 0.001, 1
		e.cfg.Budget.AllowAtCap = []string{"embeddings"}
		for i := range 6 {
			e.store(string(rune('a'+i)), "u1", "Alice", "a message about cats number "+string(rune('a'+i)), i, false)
		}
		rep := e.bf.Pass(context.Background())
		if rep.Messages != 2 || rep.Stopped["g1"] != stopBudget {
			t.Errorf("pass = %+v, want one page of 2 then stopped by the budget", rep)
		}
		if n := len(e.embedded()); n != 1 {
			t.Errorf("%d embeddings calls, want 1 (the cap reached after it)", n)
		}
	})
}

// TestBackfillForgetMe: a member who ran forget-me before the backfill has nothing sent; one
// who runs it while a page of theirs is with the model has nothing stored when it comes back,
// and the pass goes on with the other members' words.
func TestBackfillForgetMe(t *testing.T) {
	forEachStore(t, func(t *testing.T, driver string) {
		e, g := newHeldEnv(t, driver)
		ctx := context.Background()
		e.cfg.Embeddings.Backfill.BatchSize = 1
		e.store("1", "u9", "Dave", "my parrot Kiwi speaks French", 1, false)
		e.store("2", "u2", "Bob", "I play bass in a band", 2, false)
		e.store("3", alice, "Alice", "my cat Miso sleeps all day", 3, false)
		if _, err := e.st.ForgetMember(ctx, "g1", "u9", time.Now()); err != nil {
			t.Fatal(err)
		}
		report := e.passHeld(g) // alice's message (the newest) is with the model
		e.forgetMe("g1", alice)
		g.Release()
		rep := report()
		if len(rep.Stopped) != 0 {
			t.Errorf("pass stopped: %+v", rep.Stopped)
		}
		sent := strings.Join(e.embedded(), "\n")
		if strings.Contains(sent, "Kiwi") {
			t.Errorf("words of a member forgotten before the pass were sent: %q", sent)
		}
		if !strings.Contains(sent, "bass") {
			t.Errorf("bob's words were not embedded: %q", sent)
		}
		e.leftOf(alice, "Miso", "u9", "Kiwi")
		if _, msgs := e.lookup("a bass guitar"); !slices.Equal(msgs, []string{"2"}) {
			t.Errorf("found by meaning %v, want bob's message only", msgs)
		}
	})
}

// TestBackfillOneWorkerAGuild: a guild is embedded by one worker at a time (the store's lease,
// shared by the processes of a Postgres store): while one has a page with the model, another
// worker's pass leaves the guild alone, so no text is sent twice.
func TestBackfillOneWorkerAGuild(t *testing.T) {
	forEachStore(t, func(t *testing.T, driver string) {
		e, g := newHeldEnv(t, driver)
		ctx := context.Background()
		e.store("1", "u2", "Bob", "I play bass in a band", 1, false)
		e.store("2", "u1", "Alice", "my cat Miso sleeps all day", 2, false)
		e.store("3", "u1", "Alice", "off to the shops", 3, false)
		other, err := NewBackfill(BackfillOptions{Config: e.bf.opts.Config, Store: e.st, Embedder: e.em, Budget: e.bf.opts.Budget})
		if err != nil {
			t.Fatal(err)
		}
		report := e.passHeld(g)
		if rep := other.Pass(ctx); rep.Stopped["g1"] != stopLease || rep.Messages != 0 {
			t.Errorf("the other worker's pass = %+v, want the guild left to the lease holder", rep)
		}
		g.Release()
		if rep := report(); rep.Messages != 3 {
			t.Errorf("the lease holder's pass = %+v, want all 3 messages", rep)
		}
		if rep := other.Pass(ctx); rep.Messages != 0 || len(rep.Stopped) != 0 {
			t.Errorf("the other worker's pass after = %+v, want nothing left", rep)
		}
		var texts []string
		for _, s := range e.embedded() {
			texts = append(texts, strings.Split(s, "\n")...)
		}
		if len(texts) != 3 {
			t.Errorf("texts sent = %q, want each of the 3 once", texts)
		}
	})
}

// TestBackfillAfterProviderFailure: while the embeddings provider fails, extraction stores its
// facts but their vectors and its messages' are lost; a backfill pass while it still fails
// stops (tried again next pass), and the next pass embeds them: found by meaning at last.
func TestBackfillAfterProviderFailure(t *testing.T) {
	e := newBackfillEnv(t, "sqlite")
	ctx := context.Background()
	e.cfg.Embeddings.Enabled = true
	if err := e.sim.AddRule(openaisim.Rule{Name: "embeddings down", Match: openaisim.Match{Endpoint: openaisim.EndpointEmbeddings},
		Times: 3, Fault: openaisim.Fault{Status: 500}}); err != nil {
		t.Fatal(err)
	}
	e.answer(`{"facts":[{"subject":"u2","statement":"Bob has a kitten named Miso","source_message_ids":["1"],"supersedes":0,"same_as":0}]}`)
	e.say("1", "g1", "u2", "Bob", "my kitten Miso knocked my coffee over")
	e.ex.Flush() // two failed calls: the batch's messages, its fact
	if got := e.current("g1"); got != "Bob has a kitten named Miso" {
		t.Fatalf("facts = %q", got)
	}
	if rep := e.bf.Pass(ctx); rep.Stopped["g1"] != stopFailed || rep.Facts+rep.Messages != 0 {
		t.Errorf("pass while the provider fails = %+v, want stopped (failed), nothing embedded", rep)
	}
	if rep := e.bf.Pass(ctx); rep.Facts != 1 || rep.Messages != 1 || len(rep.Stopped) != 0 {
		t.Errorf("pass once the provider is back = %+v, want the fact and the message", rep)
	}
	if facts, msgs := e.lookup("does anyone keep a feline?"); len(facts) != 1 || !slices.Equal(msgs, []string{"1"}) {
		t.Errorf("found by meaning %q and %v, want bob's kitten fact and message", facts, msgs)
	}
}

// passLog hands Run's memory_backfill_pass records to a test, in order.
type passLog struct{ passes chan BackfillReport }

func (p passLog) Enabled(context.Context, slog.Level) bool { return true }
func (p passLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p passLog) WithGroup(string) slog.Handler            { return p }
func (p passLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "memory_backfill_pass" {
		return nil
	}
	var rep BackfillReport
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "facts":
			rep.Facts = int(a.Value.Int64())
		case "messages":
			rep.Messages = int(a.Value.Int64())
		}
		return true
	})
	p.passes <- rep
	return nil
}

// TestBackfillWakesOnReload: Run's first pass, with the backfill off, does nothing; a reload
// that turns it on starts the next pass at once, not after the ten-minute idle wait (the test
// would time out waiting for it).
func TestBackfillWakesOnReload(t *testing.T) {
	e := newBackfillEnv(t, "sqlite")
	e.cfg.Embeddings.Enabled = true
	e.fact("u2", "Bob", "Bob has a kitten named Miso", 1)
	e.store("1", "u2", "Bob", "my kitten Miso knocked my coffee over", 1, false)
	off := *e.cfg
	off.Embeddings.Backfill.Enabled = false
	var cfg atomic.Pointer[config.Config]
	cfg.Store(&off)
	client, err := llm.New(llm.Options{BaseURL: e.sim.BaseURL(), APIKey: "sk", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	em, err := NewEmbedder(cfg.Load, e.st, client, nil, NewMetrics(nil))
	if err != nil {
		t.Fatal(err)
	}
	log := passLog{passes: make(chan BackfillReport, 4)}
	bf, err := NewBackfill(BackfillOptions{Config: cfg.Load, Store: e.st, Embedder: em, Logger: slog.New(log), Metrics: NewMetrics(nil)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { bf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	next := func() BackfillReport {
		t.Helper()
		select {
		case rep := <-log.passes:
			return rep
		case <-ctx.Done():
			t.Fatal("no pass")
			return BackfillReport{}
		}
	}
	if rep := next(); rep.Facts+rep.Messages != 0 {
		t.Fatalf("the pass with the backfill off = %+v, want nothing", rep)
	}
	on := off
	on.Embeddings.Backfill.Enabled = true
	cfg.Store(&on)
	bf.Reloaded(&off, &on)
	if rep := next(); rep.Facts != 1 || rep.Messages != 1 {
		t.Fatalf("the pass after the reload = %+v, want the fact and the message", rep)
	}
}

// TestBackfillReloadedWakes: which reloads call the next pass at once.
func TestBackfillReloadedWakes(t *testing.T) {
	e := newBackfillEnv(t, "sqlite")
	on := *e.cfg
	on.Embeddings.Enabled = true
	edit := func(f func(c *config.Config)) *config.Config {
		c := on
		f(&c)
		return &c
	}
	offBackfill := edit(func(c *config.Config) { c.Embeddings.Backfill.Enabled = false })
	for _, tc := range []struct {
		name         string
		old, updated *config.Config
		wake         bool
	}{
		{"turned on", offBackfill, &on, true},
		{"embeddings turned on", edit(func(c *config.Config) { c.Embeddings.Enabled = false }), &on, true},
		{"another model", edit(func(c *config.Config) { c.Embeddings.Model = "text-embedding-3-large" }), &on, true},
		{"faster pace", edit(func(c *config.Config) { c.Embeddings.Backfill.BatchSize = 1 }), &on, true},
		{"nothing changed", &on, edit(func(*config.Config) {}), false},
		{"another persona", &on, edit(func(c *config.Config) { c.Bot.Name = "other" }), false},
		{"turned off", &on, offBackfill, false},
		{"still off", offBackfill, edit(func(c *config.Config) { c.Embeddings.Backfill.Enabled = false }), false},
	} {
		bf, err := NewBackfill(BackfillOptions{Config: func() *config.Config { return tc.updated }, Store: e.st, Embedder: e.em})
		if err != nil {
			t.Fatal(err)
		}
		bf.Reloaded(tc.old, tc.updated)
		if woke := len(bf.wake) == 1; woke != tc.wake {
			t.Errorf("%s: wakes %v, want %v", tc.name, woke, tc.wake)
		}
	}
}
