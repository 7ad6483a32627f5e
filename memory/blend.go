package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/banterbot/banter/store"
)

// memory_lookup ranks what it finds by a blend of meaning and words (docs/memory.md):
//
//	score = w·meaning + (1−w)·words
//
// with w = embeddings.meaningWeight; meaning is the cosine similarity of the query's embedding
// and the item's (below 0 counts as 0; an item the search by meaning did not return counts 0);
// words is the item's place among the n results of the search by words, 1 for the first down
// to 1/n for the last (0 when the words did not find it). Ties go to the words' order, then
// the meaning's.

// blend ranks the union of byWords (best first) and byMeaning (with their similarities) by
// the blended score, at most limit.
func blend[T any, K comparable](byWords, byMeaning []T, sims []float64, key func(T) K, weight float64, limit int) []T {
	type item struct {
		v     T
		score float64
		order int
	}
	at := map[K]int{}
	var items []item
	n := float64(len(byWords))
	for i, v := range byWords {
		at[key(v)] = len(items)
		items = append(items, item{v: v, score: (1 - weight) * (n - float64(i)) / n, order: i})
	}
	for i, v := range byMeaning {
		m := weight * max(sims[i], 0)
		if j, ok := at[key(v)]; ok {
			items[j].score += m
			continue
		}
		at[key(v)] = len(items)
		items = append(items, item{v: v, score: m, order: len(byWords) + i})
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	out := make([]T, 0, min(limit, len(items)))
	for _, it := range items[:min(limit, len(items))] {
		out = append(out, it.v)
	}
	return out
}

// BlendFacts ranks facts found by words (best first) and by meaning, at most limit.
func BlendFacts(byWords []store.Fact, byMeaning []store.ScoredFact, weight float64, limit int) []store.Fact {
	facts, sims := make([]store.Fact, len(byMeaning)), make([]float64, len(byMeaning))
	for i, f := range byMeaning {
		facts[i], sims[i] = f.Fact, f.Similarity
	}
	return blend(byWords, facts, sims, func(f store.Fact) int64 { return f.ID }, weight, limit)
}

// BlendMessages ranks messages found by words (best first) and by meaning, at most limit.
func BlendMessages(byWords []store.Message, byMeaning []store.ScoredMessage, weight float64, limit int) []store.Message {
	msgs, sims := make([]store.Message, len(byMeaning)), make([]float64, len(byMeaning))
	for i, m := range byMeaning {
		msgs[i], sims[i] = m.Message, m.Similarity
	}
	return blend(byWords, msgs, sims, func(m store.Message) string { return m.ID }, weight, limit)
}

// Searcher is what LookupFacts reads: facts by words, and by meaning.
type Searcher interface {
	Facts(ctx context.Context, q store.FactQuery) ([]store.Fact, error)
	NearestFacts(ctx context.Context, q store.VectorQuery) ([]store.ScoredFact, error)
}

// LookupFacts is memory_lookup's facts: the guild's current facts found by the query's words
// and, when the query has an embedding (qv.Model set), by meaning too, blended with weight
// (embeddings.meaningWeight); at most limit. The blend draws on twice limit of each.
func LookupFacts(ctx context.Context, st Searcher, guild, query string, qv store.Embedding, weight float64, limit int) ([]store.Fact, error) {
	if qv.Model == "" {
		return st.Facts(ctx, store.FactQuery{GuildID: guild, Text: query, Limit: limit})
	}
	byWords, err := st.Facts(ctx, store.FactQuery{GuildID: guild, Text: query, Limit: 2 * limit})
	if err != nil {
		return nil, err
	}
	near, err := st.NearestFacts(ctx, store.VectorQuery{GuildID: guild, Model: qv.Model, Vector: qv.Vector, Limit: 2 * limit})
	if err != nil {
		return nil, err
	}
	return BlendFacts(byWords, near, weight, limit), nil
}
