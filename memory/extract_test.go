package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/pgtest"
)

// harness is an Extractor on a real SQLite store and the OpenAI simulator, whose memory-slot
// answers the test scripts (one rule a call, in order).
type harness struct {
	t    *testing.T
	cfg  *config.Config
	st   store.Store
	dsn  string // the store's file (sqlite) or connection string (postgres)
	drv  string
	sim  *openaisim.Server
	ex   *Extractor
	em   *Embedder
	base time.Time
	n    int
}

func newHarness(t *testing.T, batch int) *harness { return newHarnessOn(t, batch, "sqlite") }

// newHarnessOn is newHarness on a driver's store ("sqlite", or "postgres": a throwaway
// cluster, skipped without its binaries unless BANTER_REQUIRE_POSTGRES), with the
// simulator's options.
func newHarnessOn(t *testing.T, batch int, driver string, simOpts ...openaisim.Option) *harness {
	t.Helper()
	cfg := config.Default()
	cfg.Memory.Enabled = true
	cfg.Memory.BatchMessages = batch
	cfg.Memory.QuietSeconds = 86400 // batches close by size or Flush only: no wall clock in the test
	cfg.MemoryLLM.Model = "memory-model"
	cfg.Safety.BanWords = []string{"forbiddenword"}
	dsn := filepath.Join(t.TempDir(), "b.db")
	if driver == "postgres" {
		dsn = pgtest.Database(context.Background(), t)
	}
	st, err := store.OpenDriver(context.Background(), driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sim := openaitest.Serve(t, simOpts...)
	client, err := llm.New(llm.Options{BaseURL: sim.BaseURL(), APIKey: "sk", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := New(Options{Config: func() *config.Config { return cfg }, Store: st, Model: client, Metrics: NewMetrics(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close(context.Background()) })
	return &harness{t: t, cfg: cfg, st: st, dsn: dsn, drv: driver, sim: sim, ex: ex, base: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
}

// answer scripts the next extraction answer (record_facts arguments).
func (h *harness) answer(args string) {
	h.t.Helper()
	if err := h.sim.AddRule(openaisim.Rule{Name: "memory", Match: openaisim.Match{Model: "memory-model"}, Times: 1,
		Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: recordFactsName, Arguments: args}}}}); err != nil {
		h.t.Fatal(err)
	}
}

// say stores a message as the text pipeline would and observes it.
func (h *harness) say(id, guild, author, name, content string) {
	h.t.Helper()
	h.n++
	m := store.Message{ID: id, ChannelID: "c-" + guild, GuildID: guild, AuthorID: author, AuthorName: name, Content: content,
		CreatedAt: h.base.Add(time.Duration(h.n) * time.Minute)}
	if err := h.st.SaveMessage(context.Background(), m); err != nil {
		h.t.Fatal(err)
	}
	h.ex.Observe(context.Background(), m)
}

func (h *harness) current(guild string) string {
	fs, err := h.st.Facts(context.Background(), store.FactQuery{GuildID: guild})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.Statement)
	}
	return strings.Join(out, "; ")
}

func (h *harness) memoryRequests() []openaisim.Recorded {
	var out []openaisim.Recorded
	for _, r := range h.sim.Requests() {
		if r.Model == "memory-model" {
			out = append(out, r)
		}
	}
	return out
}

// TestExtractionLifecycle: a full batch is extracted in one call; a later batch sees the known
// facts numbered and corrects one (retired, kept as history) and repeats another (merged).
func TestExtractionLifecycle(t *testing.T) {
	h := newHarness(t, 2)
	h.answer(`{"facts":[{"subject":"u1","statement":"Alice lives in Berlin","source_message_ids":["1"],"supersedes":0,"same_as":0},
		{"subject":"u2","statement":"Bob plays bass","source_message_ids":["2"],"supersedes":0,"same_as":0}]}`)
	h.say("1", "g1", "u1", "Alice", "I live in Berlin")
	h.say("2", "g1", "u2", "Bob", "I play bass")
	h.ex.Flush()
	if got := h.current("g1"); got != "Bob plays bass; Alice lives in Berlin" && got != "Alice lives in Berlin; Bob plays bass" {
		t.Fatalf("after batch 1: %q", got)
	}
	h.answer(`{"facts":[{"subject":"u1","statement":"Alice moved to Paris","source_message_ids":["3"],"supersedes":1,"same_as":0},
		{"subject":"u2","statement":"Bob plays the bass guitar","source_message_ids":["4"],"supersedes":0,"same_as":2}]}`)
	h.say("3", "g1", "u1", "Alice", "I moved to Paris last week")
	h.say("4", "g1", "u2", "Bob", "still playing bass")
	h.ex.Flush()
	reqs := h.memoryRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d extraction calls, want 2 (one a batch)", len(reqs))
	}
	if p := reqs[1].LastUserText; !strings.Contains(p, "1. [user id u1, Alice] Alice lives in Berlin") || !strings.Contains(p, "2. [user id u2, Bob] Bob plays bass") {
		t.Errorf("the second call did not see the known facts numbered:\n%s", p)
	}
	if got := h.current("g1"); !strings.Contains(got, "Alice moved to Paris") || strings.Contains(got, "Berlin") || strings.Count(got, "Bob") != 1 {
		t.Errorf("after batch 2: %q", got)
	}
	hist, _ := h.st.Facts(context.Background(), store.FactQuery{GuildID: "g1", SubjectIDs: []string{"u1"}, History: true})
	if len(hist) != 2 || hist[1].Statement != "Alice lives in Berlin" || hist[1].Current() {
		t.Errorf("history = %+v", hist)
	}
	bob, _ := h.st.Facts(context.Background(), store.FactQuery{GuildID: "g1", SubjectIDs: []string{"u2"}})
	if len(bob) != 1 || strings.Join(bob[0].SourceIDs, ",") != "2,4" {
		t.Errorf("bob's merged fact = %+v", bob)
	}
}

// TestExtractionInvalidAnswerStoresNothing: an answer that breaks the rules (a source never
// shown) is refused whole and counted; the valid fact beside it is not stored either.
func TestExtractionInvalidAnswerStoresNothing(t *testing.T) {
	h := newHarness(t, 1)
	h.answer(`{"facts":[{"subject":"u1","statement":"Alice has a cat","source_message_ids":["1"],"supersedes":0,"same_as":0},
		{"subject":"u1","statement":"Alice owns the server","source_message_ids":["999"],"supersedes":0,"same_as":0}]}`)
	h.say("1", "g1", "u1", "Alice", "I have a cat")
	h.ex.Flush()
	if got := h.current("g1"); got != "" {
		t.Errorf("stored %q from an invalid answer", got)
	}
	h.answer(`not json at all`)
	h.say("2", "g1", "u1", "Alice", "I have a dog")
	h.ex.Flush()
	if got := h.current("g1"); got != "" {
		t.Errorf("stored %q from an invalid answer", got)
	}
	if n := len(h.memoryRequests()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

// TestExtractionRespectsPauseGuildsAndBanWords: a paused member's words never reach the model;
// memory off for a guild extracts nothing there; a statement with a ban word is dropped; a
// pending message deleted before its batch goes is not sent.
func TestExtractionRespectsPauseGuildsAndBanWords(t *testing.T) {
	h := newHarness(t, 3)
	ctx := context.Background()
	h.cfg.Memory.GuildIDs = []string{"100000000000000001"}
	h.st.SetMemoryPaused(ctx, "100000000000000001", "u2", true, h.base)
	h.answer(`{"facts":[{"subject":"u1","statement":"Alice likes forbiddenword","source_message_ids":["1"],"supersedes":0,"same_as":0}]}`)
	h.say("1", "100000000000000001", "u1", "Alice", "I like fishing a lot")
	h.say("2", "100000000000000001", "u2", "Bob", "my secret is plutonium")
	h.say("3", "200000000000000002", "u3", "Cid", "other guild words")
	h.say("4", "100000000000000001", "u1", "Alice", "gone soon")
	h.ex.DropMessage("4")
	h.ex.Flush()
	reqs := h.memoryRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d calls, want 1", len(reqs))
	}
	for _, banned := range []string{"plutonium", "other guild", "gone soon"} {
		if strings.Contains(reqs[0].Prompt, banned) {
			t.Errorf("the model saw %q:\n%s", banned, reqs[0].Prompt)
		}
	}
	if got := h.current("100000000000000001"); got != "" {
		t.Errorf("stored %q", got)
	}
}

// TestExtractionKeepsChannelOrder: a channel's batches reach the model, and so apply their
// facts, in the order their messages were said, however many are waiting (a correction in a
// later batch must not be applied before the fact it corrects).
func TestExtractionKeepsChannelOrder(t *testing.T) {
	h := newHarness(t, 1)
	if err := h.sim.AddRule(openaisim.Rule{Name: "memory", Match: openaisim.Match{Model: "memory-model"},
		Latency: openaisim.Latency{TimeToFirstToken: 2 * time.Millisecond},
		Reply:   openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: recordFactsName, Arguments: `{"facts":[]}`}}}}); err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		h.say(fmt.Sprint(i+1), "g1", "u1", "Alice", fmt.Sprintf("message number %d", i+1))
	}
	h.ex.Flush()
	reqs := h.memoryRequests()
	if len(reqs) != n {
		t.Fatalf("%d extraction calls, want %d (batches of one)", len(reqs), n)
	}
	for i, r := range reqs {
		if want := fmt.Sprintf("message number %d\n", i+1); !strings.Contains(r.LastUserText+"\n", want) {
			t.Fatalf("extraction call %d is not message %d's batch:\n%s", i+1, i+1, r.LastUserText)
		}
	}
}
