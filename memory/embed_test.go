package memory

import (
	"context"
	"strings"
	"testing"

	"github.com/banterbot/banter/config"

	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// withEmbedder gives the harness's extractor an embedder on the simulator (embeddings on).
func (h *harness) withEmbedder() {
	h.t.Helper()
	h.cfg.Embeddings.Enabled = true
	client, err := llm.New(llm.Options{BaseURL: h.sim.BaseURL(), APIKey: "sk", MaxRetries: -1})
	if err != nil {
		h.t.Fatal(err)
	}
	em, err := NewEmbedder(func() *config.Config { return h.cfg }, h.st, client, nil, NewMetrics(nil))
	if err != nil {
		h.t.Fatal(err)
	}
	h.ex.opts.Embedder = em
	h.em = em
}

// TestEmbeddingsOnExtraction: a batch's messages are embedded in one call and the facts stored
// from it in another, off the reply path (the extraction's goroutine); a query in other words
// then finds the fact by meaning, and a paused member's words are never sent to be embedded.
func TestEmbeddingsOnExtraction(t *testing.T) {
	h := newHarness(t, 2)
	h.withEmbedder()
	ctx := context.Background()
	h.answer(`{"facts":[{"subject":"u1","statement":"Alice has a cat named Miso","source_message_ids":["1"],"supersedes":0,"same_as":0}]}`)
	h.say("1", "g1", "u1", "Alice", "my cat Miso knocked over my coffee again")
	h.say("2", "g1", "u2", "Bob", "I work at the bakery on Main Street")
	h.ex.Flush()
	calls := h.sim.RequestsFor(openaisim.EndpointEmbeddings)
	if len(calls) != 2 {
		t.Fatalf("%d embeddings calls, want 2 (the batch's messages, then its facts)", len(calls))
	}
	q, err := h.em.Query(ctx, "g1", "does alice own a kitten?")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := h.st.NearestFacts(ctx, store.VectorQuery{GuildID: "g1", Model: q.Model, Vector: q.Vector})
	if err != nil || len(fs) != 1 || fs[0].Statement != "Alice has a cat named Miso" {
		t.Fatalf("nearest facts %+v, %v", fs, err)
	}
	ms, err := h.st.NearestMessages(ctx, store.VectorQuery{GuildID: "g1", Model: q.Model, Vector: q.Vector})
	if err != nil || len(ms) != 2 || ms[0].ID != "1" {
		t.Fatalf("nearest messages %+v, %v (want both, the cat first)", ms, err)
	}
	if err := h.st.SetMemoryPaused(ctx, "g1", "u3", true, h.base); err != nil {
		t.Fatal(err)
	}
	h.ex.NotePause("g1", "u3", true)
	h.say("3", "g1", "u3", "Carol", "my secret hobby is falconry")
	h.say("4", "g1", "u3", "Carol", "falconry again")
	h.ex.Flush()
	for _, r := range h.sim.RequestsFor(openaisim.EndpointEmbeddings) {
		if strings.Contains(r.Prompt, "falconry") {
			t.Errorf("a paused member's words were embedded: %q", r.Prompt)
		}
	}
}

// TestEmbeddingsOff: with embeddings off nothing is embedded and extraction works as before.
func TestEmbeddingsOff(t *testing.T) {
	h := newHarness(t, 1)
	h.withEmbedder()
	h.cfg.Embeddings.Enabled = false
	h.answer(`{"facts":[]}`)
	h.say("1", "g1", "u1", "Alice", "hello there")
	h.ex.Flush()
	if n := len(h.sim.RequestsFor(openaisim.EndpointEmbeddings)); n != 0 || len(h.memoryRequests()) != 1 {
		t.Fatalf("%d embeddings calls with embeddings off, %d extractions", n, len(h.memoryRequests()))
	}
}

// TestBlend: the blend ranks by w·meaning + (1−w)·words; an item found both ways gains, one
// found by meaning only can outrank a weak word match, and w 0 is the words' order.
func TestBlend(t *testing.T) {
	f := func(id int64) store.Fact { return store.Fact{ID: id} }
	sf := func(id int64, sim float64) store.ScoredFact { return store.ScoredFact{Fact: f(id), Similarity: sim} }
	words := []store.Fact{f(1), f(2), f(3), f(4)} // word scores 1, .75, .5, .25
	meaning := []store.ScoredFact{sf(9, 0.9), sf(3, 0.8), sf(1, -0.5)}
	for _, tc := range []struct {
		weight float64
		want   []int64
	}{
		{0.5, []int64{3, 1, 9, 2, 4}}, // 3: .25+.4; 1: .5; 9: .45; 2: .375; 4: .125
		{0, []int64{1, 2, 3, 4, 9}},
		{1, []int64{9, 3, 1, 2, 4}},
	} {
		got := BlendFacts(words, meaning, tc.weight, 10)
		var ids []int64
		for _, g := range got {
			ids = append(ids, g.ID)
		}
		if len(ids) != len(tc.want) {
			t.Errorf("w %v: %v, want %v", tc.weight, ids, tc.want)
			continue
		}
		for i := range ids {
			if ids[i] != tc.want[i] {
				t.Errorf("w %v: %v, want %v", tc.weight, ids, tc.want)
				break
			}
		}
	}
	if got := BlendFacts(words, meaning, 0.5, 2); len(got) != 2 {
		t.Errorf("limit 2 gave %d", len(got))
	}
}
