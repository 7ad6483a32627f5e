package store

import (
	"context"
	"time"
)

// The Memory methods of the instrumented store (metrics.go).

func (i *instrumented) AddFact(ctx context.Context, f Fact) (Fact, error) {
	f, err := i.s.AddFact(ctx, f)
	return f, i.count("add_fact", err)
}

func (i *instrumented) ReplaceFact(ctx context.Context, oldID int64, f Fact) (Fact, error) {
	f, err := i.s.ReplaceFact(ctx, oldID, f)
	return f, i.count("replace_fact", err)
}

func (i *instrumented) AddFactSources(ctx context.Context, guildID string, id int64, sourceIDs []string, origins []Origin) error {
	return i.count("add_fact_sources", i.s.AddFactSources(ctx, guildID, id, sourceIDs, origins))
}

func (i *instrumented) Facts(ctx context.Context, q FactQuery) ([]Fact, error) {
	fs, err := i.s.Facts(ctx, q)
	return fs, i.count("facts", err)
}

func (i *instrumented) DeleteFact(ctx context.Context, guildID string, id int64) error {
	return i.count("delete_fact", i.s.DeleteFact(ctx, guildID, id))
}

func (i *instrumented) ForgetMessage(ctx context.Context, messageID string) (int, error) {
	n, err := i.s.ForgetMessage(ctx, messageID)
	return n, i.count("forget_message", err)
}

func (i *instrumented) ForgetMember(ctx context.Context, guildID, userID string, at time.Time) (ForgetReport, error) {
	r, err := i.s.ForgetMember(ctx, guildID, userID, at)
	return r, i.count("forget_member", err)
}

func (i *instrumented) SetMemoryPaused(ctx context.Context, guildID, userID string, paused bool, at time.Time) error {
	return i.count("set_memory_paused", i.s.SetMemoryPaused(ctx, guildID, userID, paused, at))
}

func (i *instrumented) Forgot(ctx context.Context, guildID, userID string, at time.Time) (bool, error) {
	ok, err := i.s.Forgot(ctx, guildID, userID, at)
	return ok, i.count("forgot", err)
}

func (i *instrumented) MemoryPaused(ctx context.Context, guildID, userID string) (bool, error) {
	p, err := i.s.MemoryPaused(ctx, guildID, userID)
	return p, i.count("memory_paused", err)
}

func (i *instrumented) PruneFacts(ctx context.Context, cutoff time.Time) (int, error) {
	n, err := i.s.PruneFacts(ctx, cutoff)
	return n, i.count("prune_facts", err)
}

// The Embeddings methods of the instrumented store.

func (i *instrumented) SaveFactEmbedding(ctx context.Context, factID int64, e Embedding) error {
	return i.count("save_fact_embedding", i.s.SaveFactEmbedding(ctx, factID, e))
}

func (i *instrumented) SaveMessageEmbeddings(ctx context.Context, es []MessageEmbedding) error {
	return i.count("save_message_embeddings", i.s.SaveMessageEmbeddings(ctx, es))
}

func (i *instrumented) NearestFacts(ctx context.Context, q VectorQuery) ([]ScoredFact, error) {
	fs, err := i.s.NearestFacts(ctx, q)
	return fs, i.count("nearest_facts", err)
}

func (i *instrumented) NearestMessages(ctx context.Context, q VectorQuery) ([]ScoredMessage, error) {
	ms, err := i.s.NearestMessages(ctx, q)
	return ms, i.count("nearest_messages", err)
}

func (i *instrumented) VectorSearch() string { return i.s.VectorSearch() }

func (i *instrumented) MemoryChanges(ctx context.Context, changed func(guild string)) error {
	return i.count("memory_changes", i.s.MemoryChanges(ctx, changed))
}

func (i *instrumented) UnembeddedMessages(ctx context.Context, q BackfillQuery) ([]Message, BackfillCursor, error) {
	ms, end, err := i.s.UnembeddedMessages(ctx, q)
	return ms, end, i.count("unembedded_messages", err)
}

func (i *instrumented) UnembeddedFacts(ctx context.Context, q BackfillQuery) ([]Fact, BackfillCursor, error) {
	fs, end, err := i.s.UnembeddedFacts(ctx, q)
	return fs, end, i.count("unembedded_facts", err)
}

func (i *instrumented) EmbeddingGuilds(ctx context.Context) ([]string, error) {
	gs, err := i.s.EmbeddingGuilds(ctx)
	return gs, i.count("embedding_guilds", err)
}

func (i *instrumented) ClaimBackfill(ctx context.Context, guildID, holder string, until, now time.Time) (bool, error) {
	ok, err := i.s.ClaimBackfill(ctx, guildID, holder, until, now)
	return ok, i.count("claim_backfill", err)
}

func (i *instrumented) ReleaseBackfill(ctx context.Context, guildID, holder string) error {
	return i.count("release_backfill", i.s.ReleaseBackfill(ctx, guildID, holder))
}
