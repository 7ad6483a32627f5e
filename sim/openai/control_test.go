package openaisim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// controlCall makes one control request and decodes a JSON answer into out (when given).
func controlCall(t *testing.T, s *Server, method, path, body string, out any) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, strings.TrimSuffix(s.BaseURL(), "/v1")+path, strings.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return res.StatusCode, string(b)
}

// TestControlScriptKeys: POST /_sim/script takes a top-level latency as the default of its
// rules (a rule's own latency wins), and refuses with a 400 naming it a key it does not know
// or one only a script given at start may set.
func TestControlScriptKeys(t *testing.T) {
	s := serve(t)
	st, body := controlCall(t, s, "POST", "/_sim/script", `
latency: {time_to_first_token: 7ms}
rules:
  - {name: slow, match: {input_pattern: slow}, reply: {text: a}}
  - {name: own, match: {input_pattern: own}, reply: {text: b}, latency: {time_to_first_token: 3ms}}
`, nil)
	if st != http.StatusNoContent {
		t.Fatalf("POST /_sim/script: %d %s", st, body)
	}
	c := newClient(s)
	for _, in := range []string{"slow", "own"} {
		if _, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "gpt-5-mini",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(in)}}); err != nil {
			t.Fatal(err)
		}
	}
	recs := s.Requests()
	if recs[0].Rule != "slow" || recs[0].Injected.FirstToken != 7*time.Millisecond || recs[1].Injected.FirstToken != 3*time.Millisecond {
		t.Errorf("injected %v (%s) and %v (%s), want the script's 7ms and the rule's own 3ms",
			recs[0].Injected.FirstToken, recs[0].Rule, recs[1].Injected.FirstToken, recs[1].Rule)
	}
	for _, tt := range []struct{ script, key string }{
		{"lateny: {per_token: 1ms}", "lateny"},
		{`{"rules": [], "delay": "1s"}`, "delay"},
		{"models: [gpt-5]", "models"},
		{"api_key: sk-other", "api_key"},
		{"rules: [{match: {endpoint: transcriptions}, reply: {no_speech: true, text_x: 1}}]", "text_x"},
	} {
		if st, body := controlCall(t, s, "POST", "/_sim/script", tt.script, nil); st != http.StatusBadRequest || !strings.Contains(body, tt.key) {
			t.Errorf("%q: %d %s, want 400 naming %q", tt.script, st, body, tt.key)
		}
	}
}

// TestControlInFlightAndTimes: GET /_sim/inflight lists a request while the simulator holds
// it (endpoint, model, rule, start), and not once the client has given up; GET
// /_sim/requests has each request's received_at and, when it was answered, answered_at.
func TestControlInFlightAndTimes(t *testing.T) {
	s := serve(t, WithRules(Rule{Name: "hold", Match: Match{InputPattern: "hold"}, Fault: Fault{Timeout: true}}))
	c := newClient(s)
	if _, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "gpt-5-mini",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-nano",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hold on")}})
		done <- err
	}()
	var flying []map[string]string
	// The request is in flight, matched, once the simulator holds it; it has arrived once
	// WaitRequestsStarted says so, and is matched at once after.
	if _, err := s.WaitRequestsStarted(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	for {
		controlCall(t, s, "GET", "/_sim/inflight", "", &flying)
		if len(flying) == 1 && flying[0]["rule"] != "" {
			break
		}
		if _, err := s.WaitRequestsStarted(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
	}
	f := flying[0]
	if _, err := time.Parse(rfc3339Milli, f["started_at"]); err != nil || f["endpoint"] != "responses" || f["model"] != "gpt-5-nano" || f["rule"] != "hold" {
		t.Errorf("in flight %v (%v)", f, err)
	}
	cancel()
	<-done
	if _, err := s.WaitRequests(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	controlCall(t, s, "GET", "/_sim/inflight", "", &flying)
	if len(flying) != 0 {
		t.Errorf("still in flight after the client gave up: %v", flying)
	}
	var recs []struct {
		Status     int
		ReceivedAt string `json:"received_at"`
		AnsweredAt string `json:"answered_at"`
	}
	controlCall(t, s, "GET", "/_sim/requests", "", &recs)
	if len(recs) != 2 {
		t.Fatalf("%d requests recorded", len(recs))
	}
	rcv, err1 := time.Parse(rfc3339Milli, recs[0].ReceivedAt)
	ans, err2 := time.Parse(rfc3339Milli, recs[0].AnsweredAt)
	if err1 != nil || err2 != nil || ans.Before(rcv) {
		t.Errorf("answered request: received_at %q, answered_at %q", recs[0].ReceivedAt, recs[0].AnsweredAt)
	}
	if _, err := time.Parse(rfc3339Milli, recs[1].ReceivedAt); err != nil || recs[1].Status != 0 || recs[1].AnsweredAt != "" {
		t.Errorf("given-up request: %+v, want received_at, status 0 and no answered_at", recs[1])
	}
}
