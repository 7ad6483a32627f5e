package openaisim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// embeddingsRequest is POST /v1/embeddings.
// https://platform.openai.com/docs/api-reference/embeddings/create
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	User           *string         `json:"user"`
}

// Limits of the embeddings endpoint, as the API states them.
const (
	maxEmbeddingInputs      = 2048
	maxEmbeddingInputTokens = 8192
	maxEmbeddingTotalTokens = 300000
)

// embeddingDimensions is a model's native vector length: text-embedding-3-large's 3072,
// 1536 for the others (text-embedding-3-small, ada-002, and any other name).
func embeddingDimensions(model string) int {
	if strings.HasPrefix(model, "text-embedding-3-large") {
		return 3072
	}
	return 1536
}

// parseEmbeddingsRequest decodes and validates an embeddings body (untrusted): the texts to
// embed (token-id inputs become their ids written out), the vector length and the encoding.
func parseEmbeddingsRequest(body []byte) (req *embeddingsRequest, texts []string, dims int, err error) {
	req = &embeddingsRequest{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields() // the schema has additionalProperties: false
	if err := dec.Decode(req); err != nil {
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return nil, nil, 0, reqErr("", "Unrecognized request argument supplied: %s", strings.Trim(f, `"`))
		}
		return nil, nil, 0, reqErr("", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)")
	}
	if dec.More() {
		return nil, nil, 0, reqErr("", "We could not parse the JSON body of your request: trailing data.")
	}
	if req.Model == "" {
		return nil, nil, 0, reqErr("model", "Missing required parameter: 'model'.")
	}
	if texts, err = embeddingInputs(req.Input); err != nil {
		return nil, nil, 0, err
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		return nil, nil, 0, reqErr("encoding_format", "Invalid value: '%s'. Supported values are: 'float' and 'base64'.", req.EncodingFormat)
	}
	dims = embeddingDimensions(req.Model)
	if req.Dimensions != nil {
		switch {
		case *req.Dimensions < 1:
			return nil, nil, 0, reqErr("dimensions", "Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got %d instead.", *req.Dimensions)
		case !strings.HasPrefix(req.Model, "text-embedding-3"):
			return nil, nil, 0, reqErr("dimensions", "This model does not support specifying dimensions.")
		case *req.Dimensions > dims:
			return nil, nil, 0, reqErr("dimensions", "Invalid 'dimensions': %d is more than the model's %d.", *req.Dimensions, dims)
		}
		dims = *req.Dimensions
	}
	return req, texts, dims, nil
}

// embeddingInputs reads input: a string, an array of strings, an array of token ids, or an
// array of arrays of token ids; never empty, at most 2048 items, each within the token limits.
func embeddingInputs(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, reqErr("input", "Missing required parameter: 'input'.")
	}
	bad := reqErr("input", "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.")
	var texts []string
	var one string
	var tokens []int64
	var tokenLists [][]int64
	switch {
	case json.Unmarshal(raw, &one) == nil:
		texts = []string{one}
	case json.Unmarshal(raw, &texts) == nil:
	case json.Unmarshal(raw, &tokens) == nil:
		texts = []string{tokenText(tokens)}
		if len(tokens) == 0 {
			texts = nil
		}
	case json.Unmarshal(raw, &tokenLists) == nil:
		for _, l := range tokenLists {
			if len(l) == 0 {
				return nil, bad
			}
			texts = append(texts, tokenText(l))
		}
	default:
		return nil, bad
	}
	if len(texts) == 0 || len(texts) > maxEmbeddingInputs {
		return nil, bad
	}
	total := 0
	for _, t := range texts {
		if t == "" {
			return nil, bad
		}
		n := countTokens(t)
		if n > maxEmbeddingInputTokens {
			return nil, reqErr("input", "This model's maximum context length is %d tokens, however you requested %d tokens in your input.", maxEmbeddingInputTokens, n)
		}
		total += n
	}
	if total > maxEmbeddingTotalTokens {
		return nil, reqErr("input", "Requested %d tokens, max %d tokens per request.", total, maxEmbeddingTotalTokens)
	}
	return texts, nil
}

// tokenText writes token ids out as words, so that token inputs embed deterministically too.
func tokenText(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "t" + strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, " ")
}

// embeddingObject is one item of the answer's data: the vector as floats or as base64 of
// little-endian float32s.
type embeddingObject struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointEmbeddings)
	defer s.record(rec)
	body, ok := s.readBody(w, r, rec, 16<<20)
	if !ok {
		return
	}
	req, texts, dims, err := parseEmbeddingsRequest(body)
	if err != nil {
		s.reject(w, rec, err)
		return
	}
	joined := strings.Join(texts, "\n")
	rec.Model, rec.LastUserText, rec.Prompt, rec.Format = req.Model, texts[len(texts)-1], joined, req.EncodingFormat
	o := s.resolve(&matchInput{endpoint: EndpointEmbeddings, model: req.Model, lastUser: joined, prompt: joined})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	pc := s.newPacer(r.Context(), o.latency, &rec.Injected)
	if !pc.wait(o.latency.TimeToFirstToken, &rec.Injected.FirstToken) {
		return
	}
	data := make([]embeddingObject, len(texts))
	used := 0
	for i, t := range texts {
		v := Embed(t, dims)
		used += countTokens(t)
		data[i] = embeddingObject{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			data[i].Embedding = encodeFloat32s(v)
		}
	}
	rec.Status = http.StatusOK
	s.record(rec) // before the answer: a client that has it finds the request recorded
	writeBody(w, map[string]any{
		"object": "list", "model": req.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": used, "total_tokens": used},
	}, o.fault)
}

// encodeFloat32s is a vector as base64 of its little-endian float32s (encoding_format base64).
func encodeFloat32s(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
