package llm

import (
	"context"
	"errors"
	"math"
	"testing"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/openai/openai-go/v3"
	"github.com/prometheus/client_golang/prometheus"
)

// refuseAll is a Gate whose budget is spent.
type refuseAll struct{ asked []Account }

func (g *refuseAll) Admit(_ context.Context, a Account, _ string) (string, error) {
	g.asked = append(g.asked, a)
	return "", ErrSpendCap
}

// TestEmbed: Embed sends the texts in one request (base64, the asked dimensions), returns one
// vector per text in order, and meters the input tokens under the call's slot at the price.
func TestEmbed(t *testing.T) {
	reg := prometheus.NewRegistry()
	meter := NewMeter(map[string]Price{"text-embedding-3-small": {InputPerMTok: 0.02}}, nil, reg)
	env := newEnv(t, Options{Meter: meter})
	ctx := WithAccount(context.Background(), Account{Guild: "g1", Slot: "embeddings"})
	texts := []string{"alice has a cat", "bob lives in Lyon", "alice has a cat"}
	res, err := env.client.Embed(ctx, "text-embedding-3-small", texts, 64)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Vectors) != 3 || len(res.Vectors[0]) != 64 || res.Usage.InputTokens == 0 {
		t.Fatalf("result %d vectors, usage %+v", len(res.Vectors), res.Usage)
	}
	for i, v := range res.Vectors {
		want := openaisim.Embed(texts[i], 64)
		for j := range v {
			if math.Abs(float64(v[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d is not text %d's", i, i)
			}
		}
	}
	rec := last(t, env.sim.RequestsFor(openaisim.EndpointEmbeddings))
	if rec.Format != "base64" || rec.Status != 200 {
		t.Errorf("request sent %q, status %d", rec.Format, rec.Status)
	}
	if want := float64(res.Usage.InputTokens) * 0.02 / 1e6; math.Abs(res.Cost-want) > 1e-12 {
		t.Errorf("cost %v, want %v", res.Cost, want)
	}
	usage := &testEnv{reg: reg}
	if got := usage.counter(t, "banter_provider_usage_total", map[string]string{"slot": "embeddings", "guild": "g1", "unit": "input_tokens"}); got != float64(res.Usage.InputTokens) {
		t.Errorf("metered %v input tokens for slot embeddings, want %d", got, res.Usage.InputTokens)
	}
	if got := env.counter(t, "banter_llm_requests_total", map[string]string{"op": "embed"}); got != 1 {
		t.Errorf("%v embed calls counted, want 1", got)
	}
}

// TestEmbedGated: a call the budget refuses is not sent and fails as a spend cap.
func TestEmbedGated(t *testing.T) {
	gate := &refuseAll{}
	env := newEnv(t, Options{Gate: gate})
	ctx := WithAccount(context.Background(), Account{Guild: "g1", Slot: "embeddings"})
	_, err := env.client.Embed(ctx, "text-embedding-3-small", []string{"x"}, 0)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Kind != ErrorKindSpendCap {
		t.Fatalf("err %v, want a spend cap", err)
	}
	if n := len(env.sim.RequestsFor(openaisim.EndpointEmbeddings)); n != 0 || len(gate.asked) != 1 || gate.asked[0].Slot != "embeddings" {
		t.Fatalf("%d requests sent, gate asked %+v", n, gate.asked)
	}
}

// TestEmbedRefusesBadCalls: no model or no texts fail before any request.
func TestEmbedRefusesBadCalls(t *testing.T) {
	env := newEnv(t, Options{})
	for _, tc := range []struct {
		model string
		texts []string
	}{{"", []string{"x"}}, {"m", nil}} {
		_, err := env.client.Embed(context.Background(), tc.model, tc.texts, 0)
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Kind != ErrorKindBadRequest {
			t.Errorf("%+v: err %v", tc, err)
		}
	}
	if n := len(env.sim.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestEmbeddingVectors: an answer is taken only with one vector per text, in range, none
// repeated, all of one non-zero length; the vectors come back in the texts' order.
func TestEmbeddingVectors(t *testing.T) {
	item := func(i int64, v ...float64) openai.Embedding { return openai.Embedding{Index: i, Embedding: v} }
	for _, tc := range []struct {
		name string
		data []openai.Embedding
		n    int
		ok   bool
	}{
		{"in order", []openai.Embedding{item(0, 1, 0), item(1, 0, 1)}, 2, true},
		{"out of order", []openai.Embedding{item(1, 0, 1), item(0, 1, 0)}, 2, true},
		{"one missing", []openai.Embedding{item(0, 1, 0)}, 2, false},
		{"repeated index", []openai.Embedding{item(0, 1, 0), item(0, 0, 1)}, 2, false},
		{"index out of range", []openai.Embedding{item(0, 1, 0), item(5, 0, 1)}, 2, false},
		{"lengths differ", []openai.Embedding{item(0, 1, 0), item(1, 1)}, 2, false},
		{"empty vector", []openai.Embedding{item(0)}, 1, false},
	} {
		got, err := embeddingVectors(&openai.CreateEmbeddingResponse{Data: tc.data}, tc.n)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if tc.ok && (got[0][0] != 1 || got[1][1] != 1) {
			t.Errorf("%s: vectors %v not in the texts' order", tc.name, got)
		}
	}
}
