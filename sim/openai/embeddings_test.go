package openaisim

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/banterbot/banter/sim/conform"
)

// TestEmbeddings: openai-go's embeddings call is answered with one unit vector per input, in
// order, the same in float and base64 encodings, with the asked dimensions and the usage;
// every request sent is on OpenAI's spec.
func TestEmbeddings(t *testing.T) {
	spec, err := conform.OpenAI()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var offSpec []error
	s := serve(t, WithConformance(spec, func(err error) { mu.Lock(); offSpec = append(offSpec, err); mu.Unlock() }))
	c := newClient(s)
	ctx := context.Background()
	texts := []string{"alice has a cat named Miso", "bob works at the bakery"}
	get := func(format openai.EmbeddingNewParamsEncodingFormat, dims int64) *openai.CreateEmbeddingResponse {
		t.Helper()
		p := openai.EmbeddingNewParams{Model: "text-embedding-3-small", EncodingFormat: format,
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}}
		if dims > 0 {
			p.Dimensions = openai.Int(dims)
		}
		res, err := c.Embeddings.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	floats, b64, short := get("", 0), get(openai.EmbeddingNewParamsEncodingFormatBase64, 0), get(openai.EmbeddingNewParamsEncodingFormatFloat, 256)
	for _, res := range []*openai.CreateEmbeddingResponse{floats, b64, short} {
		if len(res.Data) != 2 || res.Usage.PromptTokens == 0 || res.Usage.TotalTokens != res.Usage.PromptTokens || res.Model != "text-embedding-3-small" {
			t.Fatalf("answer %+v", res)
		}
	}
	for i := range texts {
		f, b := floats.Data[i].Embedding, b64.Data[i].Embedding
		if len(f) != 1536 || len(short.Data[i].Embedding) != 256 || floats.Data[i].Index != int64(i) {
			t.Fatalf("vector %d: lengths %d, %d", i, len(f), len(short.Data[i].Embedding))
		}
		var norm float64
		for j := range f {
			if float32(f[j]) != float32(b[j]) {
				t.Fatalf("vector %d differs between float and base64 at %d: %v, %v", i, j, f[j], b[j])
			}
			norm += f[j] * f[j]
		}
		if math.Abs(norm-1) > 1e-4 {
			t.Errorf("vector %d has squared length %v, want 1", i, norm)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, err := range offSpec {
		t.Errorf("request off the spec: %v", err)
	}
}

// TestEmbeddingsRefusals: what the spec refuses (or the API refuses at run time) is answered
// 400 naming the parameter, and the spec checker refuses the same bodies where the schema can.
func TestEmbeddingsRefusals(t *testing.T) {
	spec, err := conform.OpenAI()
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t)
	for _, tc := range []struct {
		name, body, param string
		schemaRefuses     bool
	}{
		{"no model", `{"input":"hi"}`, "model", true},
		{"no input", `{"model":"text-embedding-3-small"}`, "input", true},
		{"empty input array", `{"model":"text-embedding-3-small","input":[]}`, "input", true},
		{"input an object", `{"model":"text-embedding-3-small","input":{"a":1}}`, "input", true},
		{"empty string", `{"model":"text-embedding-3-small","input":""}`, "input", false},
		{"bad encoding", `{"model":"text-embedding-3-small","input":"hi","encoding_format":"hex"}`, "encoding_format", true},
		{"zero dimensions", `{"model":"text-embedding-3-small","input":"hi","dimensions":0}`, "dimensions", true},
		{"too many dimensions", `{"model":"text-embedding-3-small","input":"hi","dimensions":5000}`, "dimensions", false},
		{"dimensions on ada", `{"model":"text-embedding-ada-002","input":"hi","dimensions":8}`, "dimensions", false},
		{"unknown field", `{"model":"text-embedding-3-small","input":"hi","stream":true}`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := http.Post(s.BaseURL()+"/embeddings", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var e struct {
				Error struct {
					Param *string `json:"param"`
					Type  string  `json:"type"`
				} `json:"error"`
			}
			if err := json.NewDecoder(res.Body).Decode(&e); err != nil || res.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, %v", res.StatusCode, err)
			}
			if got := ""; e.Error.Param != nil {
				got = *e.Error.Param
				if got != tc.param {
					t.Errorf("param %q, want %q", got, tc.param)
				}
			} else if tc.param != "" {
				t.Errorf("no param, want %q", tc.param)
			}
			if specErr := spec.Request("POST", "/v1/embeddings", []byte(tc.body)); tc.schemaRefuses && specErr == nil {
				t.Errorf("the spec accepts %s", tc.body)
			}
		})
	}
}

// TestEmbeddingsFault: a rule's fault answers an embeddings request like any other endpoint.
func TestEmbeddingsFault(t *testing.T) {
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointEmbeddings, InputPattern: "boom"}, Fault: Fault{Status: 503}}))
	c := newClient(s)
	_, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("boom")}})
	var apiErr *openai.Error
	if !asOpenAIError(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Fatalf("err %v, want a 503", err)
	}
	if _, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("fine")}}); err != nil {
		t.Fatal(err)
	}
	if got := s.RequestsFor(EndpointEmbeddings); len(got) != 2 || got[0].Status != 503 || got[1].Status != 200 {
		t.Fatalf("recorded %+v", got)
	}
}

// TestEmbedMeaning: the simulated embedding puts a paraphrase nearer its statement than an
// unrelated statement, and is deterministic.
func TestEmbedMeaning(t *testing.T) {
	cos := func(a, b string) float64 {
		va, vb := Embed(a, 512), Embed(b, 512)
		var d float64
		for i := range va {
			d += float64(va[i]) * float64(vb[i])
		}
		return d
	}
	for _, tc := range []struct{ query, near, far string }{
		{"does she own a kitten?", "alice has a cat named Miso", "alice works at a bank"},
		{"where does bob reside", "bob lives in Lyon", "bob plays the guitar"},
		{"what is her job", "carol works as a nurse", "carol has a dog"},
	} {
		if n, f := cos(tc.query, tc.near), cos(tc.query, tc.far); n <= f {
			t.Errorf("%q: near %q %.3f, far %q %.3f", tc.query, tc.near, n, tc.far, f)
		}
	}
	if !bytes.Equal(floatBytes(Embed("same text", 64)), floatBytes(Embed("same text", 64))) {
		t.Error("not deterministic")
	}
}

func floatBytes(v []float32) []byte { return []byte(encodeFloat32s(v)) }

func FuzzParseEmbeddingsRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"text-embedding-3-small","input":"hi"}`,
		`{"model":"text-embedding-3-small","input":["a","b"],"encoding_format":"base64","dimensions":8}`,
		`{"model":"m","input":[1,2,3]}`, `{"model":"m","input":[[1],[2,3]]}`, `{"model":"m","input":[[]]}`,
		`{"model":"m","input":""}`, `{"model":"m"}`, `{"input":"x"}`, `{"model":"m","input":"x","user":"u"}`,
		`{"model":"text-embedding-ada-002","input":"x","dimensions":3}`, `null`, `[]`, `{"model":`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, texts, dims, err := parseEmbeddingsRequest(body)
		if err != nil {
			if _, ok := asRequestError(err); !ok {
				t.Fatalf("error %v is not a requestError", err)
			}
			return
		}
		if req.Model == "" || len(texts) == 0 || len(texts) > maxEmbeddingInputs || dims < 1 || dims > 3072 {
			t.Fatalf("accepted %q: %d texts, %d dims", body, len(texts), dims)
		}
		for _, tx := range texts {
			if tx == "" {
				t.Fatalf("accepted an empty input: %q", body)
			}
		}
		if v := Embed(texts[0], dims); len(v) != dims {
			t.Fatalf("vector of %d for %d dims", len(v), dims)
		}
	})
}
