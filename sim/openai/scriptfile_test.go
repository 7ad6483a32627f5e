package openaisim

import (
	"bytes"
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

const exampleScript = `
latency: {time_to_first_token: 5ms, per_token: 1ms, tts_first_byte: 2ms}
transcripts: ["hey banter, you there?"]
models: [gpt-5-mini, whisper-1]
rules:
  - name: classifier
    match: {endpoint: responses, prompt_pattern: "YES or NO"}
    reply: {text: "YES"}
  - name: tool
    match: {endpoint: responses, tool: send_discord_message}
    reply:
      tool_calls:
        - name: send_discord_message
          arguments: '{"mode":"reply","target_message_id":null,"text":"hi!"}'
  - match: {endpoint: speech, has_tools: false}
    fault: {status: 429, retry_after: 2s}
    times: 1
  - name: search
    match: {endpoint: responses, tool: web_search}
    reply:
      text: "It rained."
      web_search: {query: "oslo weather", results: [{url: "https://weather.example/oslo", title: "Oslo"}]}
`

func TestParseScript(t *testing.T) {
	sc, err := ParseScript([]byte(exampleScript))
	if err != nil {
		t.Fatal(err)
	}
	if ws := sc.Rules[3].Reply.WebSearch; ws == nil || ws.Query != "oslo weather" || ws.Results[0].URL != "https://weather.example/oslo" {
		t.Errorf("web_search rule = %+v", sc.Rules[3].Reply)
	}
	if len(sc.Rules) != 4 || sc.Rules[0].Match.Endpoint != EndpointResponses || sc.Rules[2].Fault.RetryAfter != 2*time.Second ||
		sc.Latency.TimeToFirstToken != 5*time.Millisecond || sc.Rules[2].Times != 1 || *sc.Rules[2].Match.HasTools ||
		sc.Rules[1].Reply.ToolCalls[0].Arguments != `{"mode":"reply","target_message_id":null,"text":"hi!"}` {
		t.Errorf("script = %+v", sc)
	}
	bad := []string{
		"rules: [{match: {endpoint: nowhere}}]",
		"rules: [{match: {input_pattern: '('}}]",
		"rules: [{mtach: {}}]",
		"latency: {per_token: fast}",
	}
	for _, b := range bad {
		if _, err := ParseScript([]byte(b)); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
	// JSON is YAML too
	if sc, err := ParseScript([]byte(`{"rules":[{"match":{"endpoint":"realtime.response"},"reply":{"skip":true}}]}`)); err != nil || sc.Rules[0].Match.Endpoint != EndpointRealtimeResponse {
		t.Errorf("json script: %+v %v", sc, err)
	}
}

func TestWithScriptAndControlEndpoints(t *testing.T) {
	sc, err := ParseScript([]byte(exampleScript))
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, WithScript(sc))
	c := newClient(s)
	ctx := context.Background()
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini",
		Instructions: openai.String("Answer YES or NO."), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}})
	if err != nil || resp.OutputText() != "YES" {
		t.Fatalf("classifier: %v %v", err, resp)
	}
	if r := s.Requests()[0]; r.Injected.FirstToken != 5*time.Millisecond {
		t.Errorf("script latency not applied: %+v", r.Injected)
	}

	post := func(method, path, body string) *http.Response {
		req, _ := http.NewRequest(method, strings.TrimSuffix(s.BaseURL(), "/v1")+path, strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		// Every body is read and closed (an unread one pins the client's connection).
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		res.Body = io.NopCloser(bytes.NewReader(b))
		return res
	}
	if res := post("POST", "/_sim/script", "rules: [{match: {input_pattern: ping}, reply: {text: pong}}]"); res.StatusCode != 204 {
		t.Fatalf("POST script: %d", res.StatusCode)
	}
	if res := post("POST", "/_sim/script", "rules: [{nope: 1}]"); res.StatusCode != 400 {
		t.Errorf("bad script: %d", res.StatusCode)
	}
	resp, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("ping")}})
	if err != nil || resp.OutputText() != "pong" {
		t.Fatalf("added rule: %v %v", err, resp)
	}
	// a body that is not JSON is still recorded and served as JSON
	_ = c.Post(ctx, "responses", json.RawMessage(`{"model":`), nil)
	res := post("GET", "/_sim/requests", "")
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var recs []Recorded
	if err := json.Unmarshal(body, &recs); err != nil || len(recs) != 3 || recs[1].LastUserText != "ping" || recs[0].Endpoint != EndpointResponses {
		t.Fatalf("GET requests: %v %s", err, body)
	}
	if !bytes.Contains(body, []byte(`"Endpoint": "responses"`)) {
		t.Errorf("endpoint not by name: %.200s", body)
	}
	post("DELETE", "/_sim/rules", "")
	post("DELETE", "/_sim/requests", "")
	resp, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("ping")}})
	if err != nil || resp.OutputText() != "You said: ping" || len(s.Requests()) != 1 {
		t.Errorf("after reset: %v %v %d", err, resp.OutputText(), len(s.Requests()))
	}
}

func TestEndpointText(t *testing.T) {
	for e := EndpointUnknown; e <= EndpointRealtimeTranscription; e++ {
		b, _ := e.MarshalText()
		var got Endpoint
		if err := got.UnmarshalText(b); err != nil || got != e {
			t.Errorf("%v: round trip gave %v, %v", e, got, err)
		}
		if e != EndpointUnknown && e.String() == "unknown" {
			t.Errorf("endpoint %d has no name", int(e))
		}
	}
	if Endpoint(99).String() != "unknown" {
		t.Error("out of range endpoint")
	}
}
