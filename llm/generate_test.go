package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// lookupTool is a function tool as a caller would describe one; the client
// knows nothing of what it means.
var lookupTool = Tool{
	Name:        "memory_lookup",
	Description: "Search what was said in this channel before.",
	Parameters: map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"query": map[string]any{"type": "string"}},
		"required":             []any{"query"},
		"additionalProperties": false,
	},
	Strict: true,
}

var convo = GenerateRequest{
	Model:        "gpt-5-mini",
	Instructions: "You are banter, a friendly regular of this server.",
	Messages: []Message{
		{Role: RoleUser, Content: "[id 111] alice: anyone seen the match?"},
		{Role: RoleAssistant, Content: "[id 112] banter: which one?"},
		{Role: RoleUser, Content: "[id 113] alice: @banter the final, obviously"},
	},
	Tools: []Tool{lookupTool},
}

func callRule(name string, calls ...openaisim.ToolCall) openaisim.Rule {
	return openaisim.Rule{Name: name, Match: openaisim.Match{Tool: lookupTool.Name},
		Reply: openaisim.Reply{ToolCalls: calls}}
}

// TestGenerate runs a generation with a function tool through both APIs: the
// tool goes out as described, and every call the model makes comes back with
// its raw arguments (invalid ones included: parsing them is the caller's job).
func TestGenerate(t *testing.T) {
	tests := []struct {
		name    string
		rule    openaisim.Rule
		calls   []ToolCall // ID is not compared
		text    string
		refusal string
	}{
		{name: "one call",
			rule:  callRule("one", openaisim.ToolCall{Name: "memory_lookup", Arguments: `{"query":"final score"}`}),
			calls: []ToolCall{{Name: "memory_lookup", Arguments: `{"query":"final score"}`}}},
		{name: "several calls in order",
			rule: callRule("two", openaisim.ToolCall{Name: "memory_lookup", Arguments: `{"query":"a"}`},
				openaisim.ToolCall{Name: "memory_lookup", Arguments: `{"query":"b"}`}),
			calls: []ToolCall{{Name: "memory_lookup", Arguments: `{"query":"a"}`}, {Name: "memory_lookup", Arguments: `{"query":"b"}`}}},
		{name: "raw invalid arguments returned as is",
			rule:  callRule("badjson", openaisim.ToolCall{Name: "memory_lookup", Arguments: `{"query":"cut`}),
			calls: []ToolCall{{Name: "memory_lookup", Arguments: `{"query":"cut`}}},
		{name: "a tool not offered",
			rule:  openaisim.Rule{Name: "other", Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "ban_user", Arguments: `{"user":"alice"}`}}}},
			calls: []ToolCall{{Name: "ban_user", Arguments: `{"user":"alice"}`}}},
		{name: "free text",
			rule: openaisim.Rule{Name: "text", Reply: openaisim.Reply{Text: "The final was wild."}},
			text: "The final was wild."},
		{name: "refusal",
			rule:    openaisim.Rule{Name: "no", Reply: openaisim.Reply{Refusal: "I can't help with that."}},
			refusal: "I can't help with that."},
		{name: "skip",
			rule: openaisim.Rule{Name: "skip", Reply: openaisim.Reply{Skip: true}},
			text: "[SKIP]"},
	}
	for _, api := range []API{APIResponses, APIChatCompletions} {
		for _, tt := range tests {
			t.Run(api.String()+"/"+tt.name, func(t *testing.T) {
				env := newEnv(t, Options{API: api}, tt.rule)
				res, err := env.client.Generate(context.Background(), convo)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.ToolCalls) != len(tt.calls) {
					t.Fatalf("calls = %+v, want %+v", res.ToolCalls, tt.calls)
				}
				for i, c := range res.ToolCalls {
					if c.Name != tt.calls[i].Name || c.Arguments != tt.calls[i].Arguments || c.ID == "" {
						t.Errorf("call %d = %+v, want %+v with an id", i, c, tt.calls[i])
					}
				}
				if res.Text != tt.text || res.Refusal != tt.refusal {
					t.Errorf("text = %q, refusal = %q; want %q, %q", res.Text, res.Refusal, tt.text, tt.refusal)
				}
				if res.Attempts != 1 || res.Latency <= 0 || res.ResponseID == "" {
					t.Errorf("attempts=%d latency=%v id=%q", res.Attempts, res.Latency, res.ResponseID)
				}
				// What the server saw: the persona prompt, every line, the tool offered with auto.
				rec := last(t, env.sim.Requests())
				if rec.Model != "gpt-5-mini" || rec.Instructions != convo.Instructions {
					t.Errorf("model %q instructions %q", rec.Model, rec.Instructions)
				}
				if !containsAll(rec.Prompt, "anyone seen the match?", "which one?", "the final, obviously") {
					t.Errorf("prompt lacks the conversation: %q", rec.Prompt)
				}
				if len(rec.Tools) != 1 || rec.Tools[0].Name != lookupTool.Name || rec.Tools[0].Description != lookupTool.Description ||
					!containsAll(string(rec.Tools[0].Parameters), `"query"`, `"additionalProperties":false`) {
					t.Errorf("tools = %+v", rec.Tools)
				}
				if !strings.Contains(rec.ToolChoice, "auto") {
					t.Errorf("tool_choice = %q, want auto", rec.ToolChoice)
				}
				if api == APIResponses && !strings.Contains(string(rec.Body), `"parallel_tool_calls":false`) {
					t.Errorf("responses body lacks parallel_tool_calls false: %s", rec.Body)
				}
				if got := env.counter(t, "banter_llm_requests_total", map[string]string{"op": "generate", "outcome": "ok"}); got != 1 {
					t.Errorf("requests_total{ok} = %v", got)
				}
			})
		}
	}
}

// TestGenerateToolChoiceAndParallel: tool_choice required and parallel calls reach the server.
func TestGenerateToolChoiceAndParallel(t *testing.T) {
	env := newEnv(t, Options{}, openaisim.Rule{Reply: openaisim.Reply{Text: "ok"}})
	req := convo
	req.ToolChoice, req.ParallelToolCalls = ToolChoiceRequired, true
	if _, err := env.client.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	rec := last(t, env.sim.Requests())
	if !strings.Contains(rec.ToolChoice, "required") || !strings.Contains(string(rec.Body), `"parallel_tool_calls":true`) {
		t.Errorf("tool_choice %q, body %s", rec.ToolChoice, rec.Body)
	}
}

// TestHostedWebSearch: the Responses API gets the hosted web_search tool next to the function
// tools; a chat completions client refuses hosted tools before sending anything.
func TestHostedWebSearch(t *testing.T) {
	req := convo
	req.Hosted = []HostedTool{HostedWebSearch}
	env := newEnv(t, Options{}, openaisim.Rule{Reply: openaisim.Reply{Text: "The final ended 2-1.",
		WebSearch: &openaisim.WebSearch{Query: "world cup final score", Results: []openaisim.WebResult{{URL: "https://news.example.com/final", Title: "Final report"}}}}})
	res, err := env.client.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "The final ended 2-1.") {
		t.Errorf("text = %q", res.Text)
	}
	if len(res.HostedCalls) != 1 || res.HostedCalls[0].Tool != HostedWebSearch || res.HostedCalls[0].Query != "world cup final score" ||
		res.HostedCalls[0].Status != "completed" {
		t.Errorf("hosted calls = %+v, want the completed search", res.HostedCalls)
	}
	if len(res.Citations) != 1 || res.Citations[0] != (Citation{URL: "https://news.example.com/final", Title: "Final report"}) {
		t.Errorf("citations = %+v", res.Citations)
	}
	rec := last(t, env.sim.Requests())
	var types []string
	for _, tl := range rec.Tools {
		types = append(types, tl.Type)
	}
	if len(types) != 2 || types[0] != "function" || types[1] != "web_search" {
		t.Errorf("tools sent = %v, want [function web_search]", types)
	}

	chat := newEnv(t, Options{API: APIChatCompletions}, openaisim.Rule{Reply: openaisim.Reply{Text: "no"}})
	_, err = chat.client.Generate(context.Background(), req)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Kind != ErrorKindBadRequest || !strings.Contains(err.Error(), "web_search") {
		t.Fatalf("chat completions with web_search: err = %v, want a bad_request naming web_search", err)
	}
	if n := len(chat.sim.Requests()); n != 0 {
		t.Errorf("chat completions server saw %d requests, want none", n)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct{ answer, want string }{
		{"YES", "YES"},
		{"NO", "NO"},
		{"  Yes.  ", "Yes."},
		{"I think maybe", "I think maybe"},
	}
	for _, api := range []API{APIResponses, APIChatCompletions} {
		for _, tt := range tests {
			t.Run(api.String()+"/"+tt.want, func(t *testing.T) {
				env := newEnv(t, Options{API: api}, openaisim.Rule{Name: "yn",
					Match: openaisim.Match{PromptPattern: "Answer YES or NO", HasTools: openaisim.Bool(false)},
					Reply: openaisim.Reply{Text: tt.answer}})
				raw, err := env.client.Classify(context.Background(), "gpt-5-nano",
					"Should the bot answer? Answer YES or NO.", "alice: banter, you there?")
				if err != nil {
					t.Fatal(err)
				}
				if raw != tt.want {
					t.Errorf("raw = %q, want %q", raw, tt.want)
				}
				rec := last(t, env.sim.Requests())
				if rec.Rule != "yn" || rec.Model != "gpt-5-nano" || rec.LastUserText != "alice: banter, you there?" {
					t.Errorf("recorded rule=%q model=%q last=%q", rec.Rule, rec.Model, rec.LastUserText)
				}
				field := map[API]string{APIResponses: "max_output_tokens", APIChatCompletions: "max_completion_tokens"}[api]
				if budget := fmt.Sprintf(`"%s":%d`, field, DefaultClassifierMaxTokens); !strings.Contains(string(rec.Body), budget) {
					t.Errorf("body lacks %s: %s", budget, rec.Body)
				}
			})
		}
	}
}

// TestGenerateFaults covers the error classification and retry policy
// against the simulator's fault injection.
func TestGenerateFaults(t *testing.T) {
	once := func(f openaisim.Fault) openaisim.Rule {
		return openaisim.Rule{Name: "fault", Fault: f, Times: 1}
	}
	always := func(f openaisim.Fault) openaisim.Rule {
		return openaisim.Rule{Name: "fault", Fault: f}
	}
	tests := []struct {
		name      string
		opts      Options
		rule      openaisim.Rule
		kind      ErrorKind // 0: success expected
		status    int
		requests  int
		minTime   time.Duration
		retryable bool
	}{
		{name: "429 retried after retry-after",
			rule: once(openaisim.Fault{Status: 429, RetryAfter: 300 * time.Millisecond}), requests: 2, minTime: 300 * time.Millisecond},
		{name: "429 no retries", opts: Options{MaxRetries: -1},
			rule: always(openaisim.Fault{Status: 429, RetryAfter: 2 * time.Second}), kind: ErrorKindRateLimited, status: 429, requests: 1, retryable: true},
		{name: "429 retry-after beyond cap", opts: Options{MaxRetryDelay: time.Second},
			rule: always(openaisim.Fault{Status: 429, RetryAfter: 5 * time.Second}), kind: ErrorKindRateLimited, status: 429, requests: 1, retryable: true},
		{name: "500 retried", rule: once(openaisim.Fault{Status: 500}), requests: 2},
		{name: "500 persistent", opts: Options{MaxRetries: 2},
			rule: always(openaisim.Fault{Status: 500}), kind: ErrorKindServer, status: 500, requests: 3, retryable: true},
		{name: "400 not retried", rule: always(openaisim.Fault{Status: 400, Message: "bad"}), kind: ErrorKindBadRequest, status: 400, requests: 1},
		{name: "timeout", opts: Options{Timeout: 150 * time.Millisecond, MaxRetries: -1},
			rule: always(openaisim.Fault{Timeout: true}), kind: ErrorKindTimeout, requests: 0, retryable: true, minTime: 150 * time.Millisecond},
		{name: "timeout then ok", opts: Options{Timeout: 150 * time.Millisecond},
			rule: once(openaisim.Fault{Timeout: true}), requests: 1, minTime: 150 * time.Millisecond},
		{name: "truncated body retried", rule: once(openaisim.Fault{TruncateAfterEvents: 1}), requests: 2},
		{name: "malformed json not retried", rule: always(openaisim.Fault{MalformedJSON: true}), kind: ErrorKindMalformed, status: 200, requests: 1},
	}
	for _, api := range []API{APIResponses, APIChatCompletions} {
		for _, tt := range tests {
			t.Run(api.String()+"/"+tt.name, func(t *testing.T) {
				tt.opts.API = api
				env := newEnv(t, tt.opts, tt.rule)
				start := time.Now()
				res, err := env.client.Generate(context.Background(), convo)
				elapsed := time.Since(start)
				if elapsed < tt.minTime {
					t.Errorf("returned after %v, want >= %v", elapsed, tt.minTime)
				}
				if got := countFinished(env.sim.Requests()); got != tt.requests {
					t.Errorf("server saw %d finished requests, want %d", got, tt.requests)
				}
				if tt.kind == 0 {
					if err != nil {
						t.Fatalf("want success after retry, got %v", err)
					}
					if len(res.ToolCalls) != 0 || res.Text == "" {
						t.Errorf("result %v", res)
					}
					return
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("err = %v, want *APIError", err)
				}
				if apiErr.Kind != tt.kind || apiErr.Status != tt.status || apiErr.Retryable != tt.retryable {
					t.Errorf("kind=%v status=%d retryable=%v, want %v %d %v (%v)",
						apiErr.Kind, apiErr.Status, apiErr.Retryable, tt.kind, tt.status, tt.retryable, err)
				}
				if tt.status == 429 && apiErr.RetryAfter <= 0 {
					t.Errorf("429 without RetryAfter: %v", err)
				}
				if got := env.counter(t, "banter_llm_requests_total", map[string]string{"outcome": tt.kind.String()}); got != 1 {
					t.Errorf("requests_total{outcome=%v} = %v", tt.kind, got)
				}
			})
		}
	}
}

// countFinished counts requests the simulator answered (a hung request the
// client abandoned is recorded with status 0).
func countFinished(recs []openaisim.Recorded) int {
	n := 0
	for _, r := range recs {
		if r.Status != 0 {
			n++
		}
	}
	return n
}

func TestCallerCancel(t *testing.T) {
	env := newEnv(t, Options{}, openaisim.Rule{Name: "hang", Fault: openaisim.Fault{Timeout: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := env.client.Generate(ctx, convo)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Kind != ErrorKindCanceled || apiErr.Retryable {
		t.Fatalf("err = %v, want canceled, not retryable", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, DeadlineExceeded) = false for %v", err)
	}
}

// TestRetryWithinBudget: a retry-after beyond the caller's deadline is not
// waited for; the rate-limit error comes back at once.
func TestRetryWithinBudget(t *testing.T) {
	env := newEnv(t, Options{MaxRetryDelay: 5 * time.Minute}, openaisim.Rule{Name: "rl", Fault: openaisim.Fault{Status: 429, RetryAfter: 2 * time.Minute}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := env.client.Classify(ctx, "gpt-5-nano", "Answer YES or NO.", "hi")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Kind != ErrorKindRateLimited || apiErr.RetryAfter != 2*time.Minute {
		t.Fatalf("err = %v, want rate_limited with retry-after 2m", err)
	}
	// Had it waited for the retry, the caller's deadline would have passed first.
	if ctx.Err() != nil {
		t.Errorf("returned after the caller's deadline (%v): waited for a retry that could not fit", ctx.Err())
	}
	if n := len(env.sim.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1 (no retry)", n)
	}
}

func TestNewOptions(t *testing.T) {
	for _, bad := range []string{"api.openai.com", "ftp://x/v1", "http://"} {
		if _, err := New(Options{BaseURL: bad}); err == nil {
			t.Errorf("New(BaseURL %q) accepted", bad)
		}
	}
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.BaseURL != DefaultBaseURL || c.API() != APIResponses || c.opts.MaxRetries != 0 ||
		c.opts.Timeout != DefaultTimeout || c.opts.ClassifierMaxTokens != DefaultClassifierMaxTokens {
		t.Errorf("defaults not applied: %+v", c.opts)
	}
	c, _ = New(Options{MaxRetries: -1})
	if c.opts.MaxRetries != 0 {
		t.Errorf("MaxRetries -1 -> %d, want 0", c.opts.MaxRetries)
	}
	c, _ = New(Options{MaxRetries: 3})
	if c.opts.MaxRetries != 3 {
		t.Errorf("MaxRetries 3 -> %d", c.opts.MaxRetries)
	}
}
