package openaisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// chatRequest is the subset of POST /v1/chat/completions the simulator reads.
// https://platform.openai.com/docs/api-reference/chat/create
type chatRequest struct {
	Model         string            `json:"model"`
	Messages      []chatMessageIn   `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage   `json:"tool_choice"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N                   *int     `json:"n"`
	MaxTokens           *int64   `json:"max_tokens"`
	MaxCompletionTokens *int64   `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	TopP                *float64 `json:"top_p"`
	ReasoningEffort     *string  `json:"reasoning_effort"`
}

type chatMessageIn struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// parseChatRequest decodes and validates a chat completions body (untrusted).
func parseChatRequest(body []byte) (*chatRequest, *prompt, error) {
	var req chatRequest
	if err := strictJSON(body, &req); err != nil {
		return nil, nil, err
	}
	if req.Model == "" {
		return nil, nil, reqErr("model", "Missing required parameter: 'model'.")
	}
	if len(req.Messages) == 0 {
		return nil, nil, reqErr("messages", "[] is too short - 'messages'")
	}
	if err := reasoningModelRules(&req); err != nil {
		return nil, nil, err
	}
	if req.N != nil && *req.N != 1 {
		return nil, nil, reqErr("n", "openaisim: only n=1 is simulated")
	}
	p := &prompt{model: req.Model, stream: req.Stream}
	if req.ReasoningEffort != nil {
		if err := checkReasoningEffort(req.Model, *req.ReasoningEffort, "reasoning_effort"); err != nil {
			return nil, nil, err
		}
		p.effort = *req.ReasoningEffort
	}
	var lines []string
	pending := map[string]bool{}
	for i, m := range req.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		var text string
		c := bytes.TrimSpace(m.Content)
		if len(c) > 0 && string(c) != "null" {
			var err error
			var images []string
			if text, images, err = contentParts(c, param+".content"); err != nil {
				return nil, nil, err
			}
			if len(images) > 0 && m.Role != "user" {
				return nil, nil, reqErr(param+".content", "Image content parts are only allowed in user messages ('%s' role given).", m.Role)
			}
			p.images = append(p.images, images...)
		} else if m.Role != "assistant" {
			return nil, nil, reqErr(param+".content", "Missing required parameter: '%s.content'.", param)
		}
		switch m.Role {
		case "system", "developer":
			if p.instructions != "" {
				p.instructions += "\n"
			}
			p.instructions += text
		case "user":
			p.lastUser = text
			lines = append(lines, "user: "+text)
		case "assistant":
			if text != "" {
				lines = append(lines, "assistant: "+text)
			}
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
				lines = append(lines, fmt.Sprintf("function_call %s(%s)", tc.Function.Name, tc.Function.Arguments))
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return nil, nil, reqErr(param+".role", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			lines = append(lines, fmt.Sprintf("function_call_output %s: %s", m.ToolCallID, text))
		default:
			return nil, nil, reqErr(param+".role", "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.", m.Role)
		}
	}
	tools, err := parseTools(req.Tools, true)
	if err != nil {
		return nil, nil, err
	}
	p.tools = tools
	if err := parseToolChoice(req.ToolChoice, p, true); err != nil {
		return nil, nil, err
	}
	p.flat = flatten(p.instructions, lines)
	return &req, p, nil
}

type chatMessageOut struct {
	Role        string         `json:"role"`
	Content     *string        `json:"content"`
	Refusal     *string        `json:"refusal"`
	ToolCalls   []chatToolCall `json:"tool_calls,omitempty"`
	Annotations []any          `json:"annotations"`
}

type chatUsage struct {
	PromptTokens            int            `json:"prompt_tokens"`
	CompletionTokens        int            `json:"completion_tokens"`
	TotalTokens             int            `json:"total_tokens"`
	PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
	CompletionTokensDetails map[string]int `json:"completion_tokens_details"`
}

func chatUsageFor(promptText string, out int) *chatUsage {
	in := countTokens(promptText)
	return &chatUsage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out,
		PromptTokensDetails: map[string]int{"cached_tokens": 0}, CompletionTokensDetails: map[string]int{"reasoning_tokens": 0}}
}

// recorded is the usage as Recorded keeps it.
func (u *chatUsage) recorded() Usage {
	return Usage{InputTokens: u.PromptTokens, CachedTokens: u.PromptTokensDetails["cached_tokens"],
		OutputTokens: u.CompletionTokens, ReasoningTokens: u.CompletionTokensDetails["reasoning_tokens"]}
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointChatCompletions)
	defer s.record(rec)
	body, ok := s.readBody(w, r, rec, 16<<20)
	if !ok {
		return
	}
	req, p, err := parseChatRequest(body)
	if err != nil {
		s.reject(w, rec, err)
		return
	}
	fillRecord(rec, p)
	o := s.resolve(&matchInput{
		endpoint: EndpointChatCompletions, model: p.model, lastUser: p.lastUser, prompt: p.flat,
		tools: toolNames(p.tools), streaming: p.stream,
	})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	c := &chatReply{s: s, w: w, r: r, rec: rec, o: &o, p: p, id: "chatcmpl-" + s.newID("sim"), created: s.now().Unix(),
		plan: s.makePlan(&o, p.lastUser, p.tools, p.policy, p.forced), finish: "stop"}
	if len(c.plan.calls) > 0 {
		c.finish = "tool_calls"
	}
	rec.Status = http.StatusOK
	if !p.stream {
		c.body()
		return
	}
	c.stream(req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
}

// chatReply writes one chat completion, as a body or a stream.
type chatReply struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request
	rec     *Recorded
	o       *outcome
	p       *prompt
	plan    plan
	id      string
	created int64
	finish  string
}

// body answers with a chat.completion object after the injected latency.
func (c *chatReply) body() {
	pl := &c.plan
	n := countTokens(pl.text) + countTokens(pl.refusal)
	msg := chatMessageOut{Role: "assistant", Annotations: []any{}}
	if pl.refusal != "" {
		msg.Refusal = &pl.refusal
	} else if pl.text != "" {
		msg.Content = &pl.text
	}
	for _, call := range pl.calls {
		var tc chatToolCall
		tc.ID, tc.Type, tc.Function.Name, tc.Function.Arguments = call.CallID, "function", call.Name, call.Arguments
		msg.ToolCalls = append(msg.ToolCalls, tc)
		n += countTokens(call.Arguments)
	}
	lat := c.o.latency
	if c.s.wait(c.r.Context(), lat.TimeToFirstToken, &c.rec.Injected.FirstToken) != nil ||
		c.s.wait(c.r.Context(), time.Duration(max(n-1, 0))*lat.PerToken, &c.rec.Injected.Tokens) != nil {
		c.rec.Status = 0
		return
	}
	usage := chatUsageFor(c.p.flat, n)
	c.rec.Usage = usage.recorded()
	c.s.record(c.rec)
	writeBody(c.w, map[string]any{
		"id": c.id, "object": "chat.completion", "created": c.created, "model": c.p.model,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "logprobs": nil, "finish_reason": c.finish,
		}},
		"usage":              usage,
		"service_tier":       "default",
		"system_fingerprint": "fp_openaisim",
	}, c.o.fault)
}

// stream answers with chat.completion.chunk events: the role, content (or
// refusal) deltas, tool call deltas, the finish reason, the usage chunk
// when asked for, then [DONE].
func (c *chatReply) stream(includeUsage bool) {
	sw := c.s.newSSE(c.w, c.r, false, c.o.fault)
	chunk := func(delta map[string]any, finishReason any, isDelta bool) {
		ch := map[string]any{
			"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.p.model,
			"system_fingerprint": "fp_openaisim", "service_tier": "default",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finishReason}},
		}
		if includeUsage {
			ch["usage"] = nil
		}
		sw.event("", ch, isDelta)
	}
	pc := c.s.newPacer(c.r.Context(), c.o.latency, &c.rec.Injected)
	paced := func(deltas []map[string]any, isDelta []bool) bool {
		for i, d := range deltas {
			if !pc.token() {
				c.rec.Status = 0
				return false
			}
			chunk(d, nil, isDelta[i])
		}
		return true
	}
	chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil, false)
	var deltas []map[string]any
	var isDelta []bool
	for _, tok := range tokens(c.plan.text) {
		deltas, isDelta = append(deltas, map[string]any{"content": tok}), append(isDelta, true)
	}
	for _, tok := range tokens(c.plan.refusal) {
		deltas, isDelta = append(deltas, map[string]any{"refusal": tok}), append(isDelta, true)
	}
	for i, call := range c.plan.calls {
		deltas, isDelta = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": call.CallID, "type": "function",
			"function": map[string]any{"name": call.Name, "arguments": ""},
		}}}), append(isDelta, false)
		for _, part := range chunkString(call.Arguments, 8) {
			deltas, isDelta = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": part},
			}}}), append(isDelta, true)
		}
	}
	if !paced(deltas, isDelta) {
		return
	}
	usage := chatUsageFor(c.p.flat, pc.tokens)
	if includeUsage {
		c.rec.Usage = usage.recorded()
	}
	c.s.record(c.rec)
	chunk(map[string]any{}, c.finish, false)
	if includeUsage {
		sw.event("", map[string]any{
			"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.p.model,
			"system_fingerprint": "fp_openaisim", "choices": []any{}, "usage": usage,
		}, false)
	}
	sw.done()
}

// reasoningModelRules refuses, as the real API does at run time, what
// reasoning models (gpt-5, o-series) do not take in chat completions: the
// legacy max_tokens, and a temperature or top_p other than the default 1.
func reasoningModelRules(req *chatRequest) error {
	if !isReasoningModel(req.Model) {
		return nil
	}
	if req.MaxTokens != nil {
		return &requestError{param: "max_tokens", code: "unsupported_parameter",
			msg: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."}
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"temperature", req.Temperature}, {"top_p", req.TopP}} {
		if p.v != nil && *p.v != 1 {
			return &requestError{param: p.name, code: "unsupported_value",
				msg: fmt.Sprintf("Unsupported value: '%s' does not support %s with this model. Only the default (1) value is supported.",
					p.name, strconv.FormatFloat(*p.v, 'f', -1, 64))}
		}
	}
	return nil
}
