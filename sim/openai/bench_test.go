package openaisim

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// cannedServer is the baseline: a bare net/http handler answering every
// request with one fixed Responses body, on the same loopback.
func cannedServer(b *testing.B) string {
	body := []byte(`{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5-mini","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"You said: hi","annotations":[]}]}],"usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5}}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close(); <-done })
	return "http://" + ln.Addr().String() + "/v1"
}

// BenchmarkResponsesNew compares an openai-go Responses.New round trip
// against the simulator with the same call against a canned handler.
func BenchmarkResponsesNew(b *testing.B) {
	run := func(b *testing.B, base string) {
		c := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("x"), option.WithMaxRetries(0))
		p := responses.ResponseNewParams{Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
			Instructions: openai.String(strings.Repeat("You are banter, a friendly Discord bot. ", 20))}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r, err := c.Responses.New(context.Background(), p)
			if err != nil || r.OutputText() != "You said: hi" {
				b.Fatal(err, r.OutputText())
			}
		}
	}
	b.Run("baseline=canned", func(b *testing.B) { run(b, cannedServer(b)) })
	b.Run("simulator", func(b *testing.B) {
		s := serve(b)
		run(b, s.BaseURL())
		s.ResetRecords()
	})
}

// BenchmarkStreamingOverhead streams a 12-token reply with injected latency
// (2 ms first token, 0.5 ms per token) and reports the time above the
// injected total as overhead-ms/op.
func BenchmarkStreamingOverhead(b *testing.B) {
	lat := Latency{TimeToFirstToken: 2 * time.Millisecond, PerToken: 500 * time.Microsecond}
	s := serve(b, WithRules(Rule{Reply: Reply{Text: "one two three four five six seven eight nine ten eleven twelve"}, Latency: lat}))
	c := newClient(s)
	p := responses.ResponseNewParams{Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
	b.ReportAllocs()
	var measured, injected time.Duration
	for b.Loop() {
		start := time.Now()
		st := c.Responses.NewStreaming(context.Background(), p)
		for st.Next() {
		}
		if st.Err() != nil {
			b.Fatal(st.Err())
		}
		measured += time.Since(start)
	}
	injected = s.InjectedTotal()
	b.ReportMetric(float64(measured-injected)/float64(b.N)/1e6, "overhead-ms/op")
	b.ReportMetric(float64(injected)/float64(b.N)/1e6, "injected-ms/op")
	s.ResetRecords()
}

// BenchmarkSynthesize renders 5 s of speech; the baseline renders a plain
// 5 s sine into the same format.
func BenchmarkSynthesize(b *testing.B) {
	text := strings.Repeat("hello there friend ", 4) // 76 chars ≈ 4.9 s
	audio := SpeechDuration(text, 1).Seconds()
	b.Run("baseline=sine", func(b *testing.B) {
		b.ReportAllocs()
		n := int(audio * SpeechRate)
		for b.Loop() {
			out := make([]byte, 2*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(8000*math.Sin(2*math.Pi*200*float64(i)/SpeechRate))))
			}
		}
	})
	b.Run("speech", func(b *testing.B) {
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			_ = Synthesize(text, "alloy", 1)
		}
		b.ReportMetric(audio*float64(b.N)/time.Since(start).Seconds(), "x-realtime")
	})
}
