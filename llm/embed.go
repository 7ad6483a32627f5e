package llm

import (
	"context"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
)

// MaxEmbedInputs bounds the texts of one Embed call (the API's own limit is 2048).
const MaxEmbedInputs = 2048

// Embeddings is the result of Embed: one vector per input text, in the inputs' order.
type Embeddings struct {
	// Model is the model that answered (the one asked, or the Gate's swap).
	Model   string
	Vectors [][]float32
	// Usage is the input tokens the server reported; Cost its price in US dollars.
	Usage    Usage
	Cost     float64
	Attempts int
}

// Embed turns texts into vectors through /v1/embeddings (encoding_format base64, which the
// SDK decodes), dimensions long when dimensions > 0. It is admitted by the Gate and metered
// like every other call. An answer that does not hold exactly one vector per text, each of
// the same non-zero length, fails.
func (c *Client) Embed(ctx context.Context, model string, texts []string, dimensions int) (Embeddings, error) {
	var err error
	switch {
	case model == "":
		err = errors.New("model is empty")
	case len(texts) == 0 || len(texts) > MaxEmbedInputs:
		err = fmt.Errorf("%d texts (want 1 to %d)", len(texts), MaxEmbedInputs)
	case dimensions < 0:
		err = fmt.Errorf("dimensions %d is negative", dimensions)
	}
	if err != nil {
		return Embeddings{}, &APIError{Op: OpEmbed, Model: model, Kind: ErrorKindBadRequest, Err: err}
	}
	if model, err = c.admit(ctx, OpEmbed, model); err != nil {
		return Embeddings{}, err
	}
	params := openai.EmbeddingNewParams{
		Model:          model,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64,
	}
	if dimensions > 0 {
		params.Dimensions = param.NewOpt(int64(dimensions))
	}
	out := Embeddings{Model: model}
	start := c.now()
	attempts, err := c.call(ctx, OpEmbed, model, c.opts.Timeout, func(ctx context.Context, a *attempt) error {
		res, err := c.embed.New(ctx, params, a.options()...)
		if err != nil {
			return err
		}
		vecs, err := embeddingVectors(res, len(texts))
		if err != nil {
			return err
		}
		out.Vectors = vecs
		out.Usage = Usage{InputTokens: int(res.Usage.PromptTokens)}
		return nil
	})
	c.metrics.observeCall(OpEmbed, model, err, c.now().Sub(start))
	if err != nil {
		return Embeddings{}, err
	}
	out.Attempts = attempts
	out.Cost = c.opts.Meter.Record(ctx, AccountFrom(ctx), model, out.Usage)
	return out, nil
}

// embeddingVectors orders an answer's vectors by index and checks there is one per input,
// all of one non-zero length.
func embeddingVectors(res *openai.CreateEmbeddingResponse, n int) ([][]float32, error) {
	if len(res.Data) != n {
		return nil, fmt.Errorf("embeddings: %w (%d vectors for %d texts)", errEmpty, len(res.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range res.Data {
		if d.Index < 0 || d.Index >= int64(n) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: %w (index %d out of range or repeated)", errEmpty, d.Index)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(res.Data[0].Embedding) {
			return nil, fmt.Errorf("embeddings: %w (vector %d has length %d)", errEmpty, d.Index, len(d.Embedding))
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}
