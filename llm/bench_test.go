package llm

import (
	"context"
	"net/http"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// benchEnv starts a simulator (no injected latency) with a tool-call rule
// and returns our client and a bare openai-go responses service on the same
// transport, the same-run baseline.
func benchEnv(b *testing.B) (*Client, responses.ResponseService, *openaisim.Server) {
	b.Helper()
	sim := openaitest.Serve(b, openaisim.WithRules(
		openaisim.Rule{Name: "tool", Match: openaisim.Match{Tool: lookupTool.Name},
			Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: lookupTool.Name,
				Arguments: `{"query":"final score"}`}}}},
		openaisim.Rule{Name: "text", Reply: openaisim.Reply{Text: "It is sunny today. Expect rain tomorrow."}},
	))
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	b.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	c, err := New(Options{BaseURL: sim.BaseURL(), APIKey: "k", HTTPClient: hc, Metrics: NewMetrics(nil)})
	if err != nil {
		b.Fatal(err)
	}
	raw := responses.NewResponseService(option.WithBaseURL(sim.BaseURL()), option.WithAPIKey("k"),
		option.WithHTTPClient(hc), option.WithMaxRetries(0))
	return c, raw, sim
}

// BenchmarkGenerate compares a tool-call generation through Client (params,
// retry wrapper, metrics) with the same request made
// directly through openai-go. The difference is this package's overhead.
func BenchmarkGenerate(b *testing.B) {
	c, raw, _ := benchEnv(b)
	ctx := context.Background()
	b.Run("llm.Client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.Generate(ctx, convo)
			if err != nil || len(res.ToolCalls) != 1 {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("baseline_openai-go", func(b *testing.B) {
		b.ReportAllocs()
		params := c.responsesParams(convo)
		for b.Loop() {
			res, err := raw.New(ctx, params)
			if err != nil || len(res.Output) == 0 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStream compares reading a whole streamed answer through
// Client.Stream with a bare openai-go stream, and reports the mean time to
// the first delta of both (no latency is injected, so this is pure
// client + loopback + simulator cost).
func BenchmarkStream(b *testing.B) {
	c, raw, _ := benchEnv(b)
	ctx := context.Background()
	b.Run("llm.Client", func(b *testing.B) {
		b.ReportAllocs()
		var ttft time.Duration
		for b.Loop() {
			s, err := c.Stream(ctx, voiceReq)
			if err != nil {
				b.Fatal(err)
			}
			ttft += s.FirstToken()
			for s.Next() {
			}
			if s.Err() != nil {
				b.Fatal(s.Err())
			}
		}
		b.ReportMetric(float64(ttft.Microseconds())/float64(b.N), "µs-ttft/op")
	})
	b.Run("baseline_openai-go", func(b *testing.B) {
		b.ReportAllocs()
		params := c.responsesParams(voiceReq)
		var ttft time.Duration
		for b.Loop() {
			start := time.Now()
			first := true
			st := raw.NewStreaming(ctx, params)
			for st.Next() {
				if first && st.Current().Type == "response.output_text.delta" {
					ttft += time.Since(start)
					first = false
				}
			}
			if st.Err() != nil {
				b.Fatal(st.Err())
			}
		}
		b.ReportMetric(float64(ttft.Microseconds())/float64(b.N), "µs-ttft/op")
	})
}
