package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// EmbeddingsSlot is the embeddings model slot's config path (usage accounting).
const EmbeddingsSlot = "embeddings"

// EmbedModel is the embeddings model. *llm.Client satisfies it.
type EmbedModel interface {
	Embed(ctx context.Context, model string, texts []string, dimensions int) (llm.Embeddings, error)
}

// Embedder gives facts and stored messages their embeddings (off the reply path: the
// extraction's goroutine calls it) and embeds memory_lookup's queries, where embeddings and
// memory are on for the guild.
type Embedder struct {
	config  func() *config.Config
	st      store.Store
	model   EmbedModel
	log     *slog.Logger
	metrics *Metrics

	mu      sync.Mutex
	lengths map[string]int // model/dimensions asked → the length of the vectors answered
}

// NewEmbedder returns an Embedder; config is read for every call (reloads apply at once).
func NewEmbedder(cfg func() *config.Config, st store.Store, model EmbedModel, log *slog.Logger, m *Metrics) (*Embedder, error) {
	if cfg == nil || st == nil || model == nil {
		return nil, errors.New("memory: new embedder: config, store and model are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Embedder{config: cfg, st: st, model: model, log: log, metrics: m, lengths: map[string]int{}}, nil
}

// On reports whether search by meaning is on for a guild: embeddings enabled, memory on there.
func (e *Embedder) On(cfg *config.Config, guild string) bool {
	return e != nil && cfg.Embeddings.Enabled && cfg.Memory.EnabledFor(guild)
}

// embed makes one embeddings call for a guild's texts, charged to the embeddings slot.
func (e *Embedder) embed(ctx context.Context, cfg *config.Config, guild, what string, texts []string) (llm.Embeddings, error) {
	ctx = llm.WithAccount(ctx, llm.Account{Guild: guild, Slot: EmbeddingsSlot})
	res, err := e.model.Embed(ctx, cfg.Embeddings.Model, texts, cfg.Embeddings.Dimensions)
	outcome := "ok"
	if err != nil {
		outcome = "failed"
	}
	e.metrics.embedding(what, outcome, len(texts))
	if err == nil && len(res.Vectors) > 0 {
		e.mu.Lock()
		e.lengths[lengthKey(res.Model, cfg.Embeddings.Dimensions)] = len(res.Vectors[0])
		e.mu.Unlock()
	}
	return res, err
}

// length is the length of a model's vectors for the dimensions asked: the dimensions when
// set, else what the model last answered with (0 while unknown).
func (e *Embedder) length(model string, dimensions int) int {
	if dimensions > 0 {
		return dimensions
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lengths[lengthKey(model, dimensions)]
}

// lengthKey names the vectors a model gives for the dimensions asked.
func lengthKey(model string, dimensions int) string { return model + "/" + strconv.Itoa(dimensions) }

// Messages embeds a batch of a guild's stored messages (one call) and stores the vectors. A
// failure is logged and counted: those messages are then found by words only.
func (e *Embedder) Messages(ctx context.Context, guild string, batch []store.Message) {
	if e == nil {
		return
	}
	cfg := e.config()
	if !e.On(cfg, guild) {
		return
	}
	if n, _, err := e.storeMessages(ctx, cfg, guild, batch); err != nil {
		e.log.Warn("memory_embedding_failed", "guild_id", guild, "what", "messages", "count", n, "error", err.Error())
	}
}

// storeMessages embeds the messages of batch that have words (one call) and stores their
// vectors (a message deleted or edited meanwhile is skipped); it returns how many it sent and
// the vectors' model and length.
func (e *Embedder) storeMessages(ctx context.Context, cfg *config.Config, guild string, batch []store.Message) (int, store.Embedding, error) {
	texts := make([]string, 0, len(batch))
	var kept []store.Message
	for _, m := range batch {
		if t := strings.TrimSpace(m.Content); t != "" {
			texts, kept = append(texts, t), append(kept, m)
		}
	}
	if len(kept) == 0 {
		return 0, store.Embedding{}, nil
	}
	res, err := e.embed(ctx, cfg, guild, "messages", texts)
	if err != nil {
		return len(kept), store.Embedding{}, err
	}
	es := make([]store.MessageEmbedding, len(kept))
	for i, m := range kept {
		es[i] = store.MessageEmbedding{MessageID: m.ID, Content: m.Content, Embedding: store.Embedding{Model: res.Model, Vector: res.Vectors[i]}}
	}
	return len(kept), es[0].Embedding, e.st.SaveMessageEmbeddings(ctx, es)
}

// Facts embeds a guild's new facts (one call) and stores the vectors; see Messages.
func (e *Embedder) Facts(ctx context.Context, guild string, fs []store.Fact) {
	if e == nil {
		return
	}
	cfg := e.config()
	if !e.On(cfg, guild) {
		return
	}
	if _, err := e.storeFacts(ctx, cfg, guild, fs); err != nil {
		e.log.Warn("memory_embedding_failed", "guild_id", guild, "what", "facts", "count", len(fs), "error", err.Error())
	}
}

// storeFacts embeds facts (one call) and stores their vectors (a fact deleted meanwhile is
// skipped); it returns the vectors' model and length.
func (e *Embedder) storeFacts(ctx context.Context, cfg *config.Config, guild string, fs []store.Fact) (store.Embedding, error) {
	if len(fs) == 0 {
		return store.Embedding{}, nil
	}
	texts := make([]string, len(fs))
	for i, f := range fs {
		texts[i] = FactText(f)
	}
	res, err := e.embed(ctx, cfg, guild, "facts", texts)
	for i := 0; err == nil && i < len(fs); i++ {
		err = e.st.SaveFactEmbedding(ctx, fs[i].ID, store.Embedding{Model: res.Model, Vector: res.Vectors[i]})
	}
	if err != nil {
		return store.Embedding{}, err
	}
	return store.Embedding{Model: res.Model, Vector: res.Vectors[0]}, nil
}

// FactText is what a fact's embedding is made of: its subject's name and its statement.
func FactText(f store.Fact) string {
	return strings.TrimSpace(f.SubjectName + " " + f.Statement)
}

// Query embeds a memory_lookup query.
func (e *Embedder) Query(ctx context.Context, guild, text string) (store.Embedding, error) {
	cfg := e.config()
	if strings.TrimSpace(text) == "" {
		return store.Embedding{}, errors.New("memory: embed query: empty")
	}
	res, err := e.embed(ctx, cfg, guild, "query", []string{text})
	if err != nil {
		return store.Embedding{}, fmt.Errorf("memory: embed query: %w", err)
	}
	return store.Embedding{Model: res.Model, Vector: res.Vectors[0]}, nil
}
