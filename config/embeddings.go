package config

import "math"

// Embeddings is the embeddings model slot: it turns facts and stored messages into vectors
// (off the reply path) and a memory_lookup query into one, so that memory_lookup finds by
// meaning as well as by words (docs/memory.md). Off, search is by words only.
type Embeddings struct {
	// Enabled turns search by meaning on (where memory is on for the guild).
	Enabled bool `yaml:"enabled"`
	// Provider names a providers entry; empty uses llm.provider.
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// Dimensions asks the model for vectors this long (0: the model's own length); only
	// models that accept the dimensions parameter (text-embedding-3-*) take it.
	Dimensions int `yaml:"dimensions"`
	// MeaningWeight is the share of meaning in memory_lookup's ranking (0-1); the rest is
	// words.
	MeaningWeight float64 `yaml:"meaningWeight"`
	// Backfill embeds, in the background, the facts and messages that have no embedding of
	// the current model (stored before embeddings were on, while the provider failed, or
	// under another model).
	Backfill EmbeddingsBackfill `yaml:"backfill"`
}

// EmbeddingsBackfill paces the embedding backfill (docs/memory.md, "Backfill").
type EmbeddingsBackfill struct {
	// Enabled runs the backfill (where embeddings and memory are on).
	Enabled bool `yaml:"enabled"`
	// BatchSize is the texts of one embeddings call (1-2048).
	BatchSize int `yaml:"batchSize"`
	// BatchesPerMinute bounds its calls, shared by every process on the store (1-600).
	BatchesPerMinute int `yaml:"batchesPerMinute"`
}

// Limits of embeddings.backfill.
const (
	MaxBackfillBatchSize        = 2048
	MaxBackfillBatchesPerMinute = 600
)

// defaultEmbeddings is the embeddings section of Default: off.
func defaultEmbeddings() Embeddings {
	return Embeddings{Model: "text-embedding-3-small", MeaningWeight: 0.5,
		Backfill: EmbeddingsBackfill{BatchSize: 100, BatchesPerMinute: 6}}
}

// validateEmbeddings checks embeddings.*.
func (v *validator) validateEmbeddings(c *Config) {
	e := c.Embeddings
	if e.Enabled {
		v.nonEmpty("embeddings.model", e.Model)
	}
	v.intRange("embeddings.dimensions", e.Dimensions, 0, 4096)
	v.intRange("embeddings.backfill.batchSize", e.Backfill.BatchSize, 1, MaxBackfillBatchSize)
	v.intRange("embeddings.backfill.batchesPerMinute", e.Backfill.BatchesPerMinute, 1, MaxBackfillBatchesPerMinute)
	if math.IsNaN(e.MeaningWeight) || e.MeaningWeight < 0 || e.MeaningWeight > 1 {
		v.addf("embeddings.meaningWeight: %v is out of range (want 0 to 1: the share of meaning in the ranking, the rest words)", e.MeaningWeight)
	}
}
