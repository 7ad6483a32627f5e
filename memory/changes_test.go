package memory

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// TestRecallHearsOtherProcesses: two processes share one Postgres store, each with its
// extractor and its cache (here kept for an hour, so that only a change heard can empty it).
// Process A recalls a member's fact; process B's /memory forget-me and a pause of another member
// reach A's recall and A's pause check without waiting for the cache to expire.
func TestRecallHearsOtherProcesses(t *testing.T) {
	h := newHarnessOn(t, 1, "postgres") // process B: its store is the one commands write to
	ctx := context.Background()
	storeA, err := store.OpenDriver(ctx, "postgres", h.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { storeA.Close() })
	client, err := llm.New(llm.Options{BaseURL: h.sim.BaseURL(), APIKey: "sk", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.cfg
	a, err := New(Options{Config: func() *config.Config { return cfg }, Store: storeA, Model: client, CacheTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	if _, err := h.st.AddFact(ctx, store.Fact{GuildID: "g1", SubjectID: "u1", SubjectName: "Alice", Statement: "Alice has a cat named Miso",
		SourceIDs: []string{"1"}, CreatedAt: h.base}); err != nil {
		t.Fatal(err)
	}
	recalled := func() string {
		fs, err := a.Recall(ctx, "g1", []string{"u1"}, "cat", 500)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.Statement)
		}
		return strings.Join(out, "; ")
	}
	// A's cache may have been filled before the fact's commit was heard: wait for A to see it.
	waitFor(t, "A recalls the fact", func() bool { return strings.Contains(recalled(), "Miso") })
	if a.paused(ctx, "g1", "u2") {
		t.Fatal("u2 paused before anyone paused")
	}
	if _, err := h.st.ForgetMember(ctx, "g1", "u1", h.base.Add(time.Hour)); err != nil { // /memory forget-me in B
		t.Fatal(err)
	}
	if err := h.st.SetMemoryPaused(ctx, "g1", "u2", true, h.base.Add(time.Hour)); err != nil { // /memory pause in B
		t.Fatal(err)
	}
	waitFor(t, "A no longer recalls the forgotten fact", func() bool { return recalled() == "" })
	waitFor(t, "A sees u2's pause", func() bool { return a.paused(ctx, "g1", "u2") })
}

// waitFor polls cond until it holds; a test that never gets there fails after a bound meant
// only to end it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within 30 s", what)
		}
	}
}
