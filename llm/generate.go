package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// Role is the author of an input message. The zero value is RoleUnknown,
// which is sent as user.
type Role uint8

// Roles.
const (
	RoleUnknown Role = iota
	RoleUser
	RoleAssistant
)

// String returns the wire spelling ("user", "assistant").
func (r Role) String() string {
	if r == RoleAssistant {
		return "assistant"
	}
	if r == RoleUser {
		return "user"
	}
	return "unknown"
}

// Message is one input message.
type Message struct {
	Role    Role
	Content string
	// Images go with a user message (ignored on assistant messages): models that accept images
	// see them after the text.
	Images []Image
}

// GenerateRequest is a text generation: a system prompt (Instructions) and
// the conversation so far, with the tools the model may call.
type GenerateRequest struct {
	Model        string
	Instructions string
	Messages     []Message
	// Tools are function tools the model may call (tool_choice per ToolChoice); the calls come
	// back in Result.ToolCalls.
	Tools []Tool
	// Hosted are tools the provider runs itself (Responses API only: a chat completions
	// client refuses a request with hosted tools before sending it).
	Hosted []HostedTool
	// ToolChoice applies when tools are offered.
	ToolChoice ToolChoice
	// ParallelToolCalls lets the model make several calls in one answer; off, at most one
	// (Responses API; chat completions keep the server's default).
	ParallelToolCalls bool
	// MaxOutputTokens bounds the answer; 0 leaves it to the server.
	MaxOutputTokens int
	// ReasoningEffort is sent as reasoning.effort (responses) or reasoning_effort (chat
	// completions) when not empty: a value of the API's enum (none, minimal, low, medium,
	// high, xhigh, max) that the model accepts (ReasoningEfforts).
	ReasoningEffort string
}

// hasTools reports whether the request offers any tool.
func (r *GenerateRequest) hasTools() bool { return len(r.Tools) > 0 || len(r.Hosted) > 0 }

// Result is the outcome of Generate.
type Result struct {
	// Text is the free text of the answer (it may accompany tool calls; possibly empty or
	// "[SKIP]").
	Text string
	// Refusal is the model's refusal message, when it refused (Text is then usually empty).
	Refusal string
	// ToolCalls are the function calls the model made, in order, arguments unparsed.
	ToolCalls []ToolCall
	// HostedCalls are the hosted tools the provider ran (web searches), and Citations the
	// sources the answer cites.
	HostedCalls []HostedCall
	Citations   []Citation
	ResponseID  string
	Model       string
	Usage       Usage
	// Cost is what the call cost in US dollars at the Meter's prices (0 without one).
	Cost     float64
	Latency  time.Duration
	Attempts int
}

// Generate runs one non-streaming generation through the configured API. The
// tool calls the model made come back unparsed in Result.ToolCalls. Errors
// are *APIError.
func (c *Client) Generate(ctx context.Context, req GenerateRequest) (*Result, error) {
	if req.Model == "" {
		return nil, &APIError{Op: OpGenerate, Kind: ErrorKindBadRequest, Err: errors.New("model is empty")}
	}
	if len(req.Hosted) > 0 && c.opts.API == APIChatCompletions {
		return nil, &APIError{Op: OpGenerate, Model: req.Model, Kind: ErrorKindBadRequest,
			Err: fmt.Errorf("hosted tool %s needs the responses API; chat completions have none", req.Hosted[0])}
	}
	var err error
	if req.Model, err = c.admit(ctx, OpGenerate, req.Model); err != nil {
		return nil, err
	}
	start := c.now()
	var res *Result
	attempts, err := c.call(ctx, OpGenerate, req.Model, c.opts.Timeout, func(ctx context.Context, a *attempt) error {
		var err error
		if c.opts.API == APIChatCompletions {
			res, err = c.generateChat(ctx, req, a)
		} else {
			res, err = c.generateResponses(ctx, req, a)
		}
		return err
	})
	d := c.now().Sub(start)
	c.metrics.observeCall(OpGenerate, req.Model, err, d)
	if err != nil {
		return nil, err
	}
	res.Latency, res.Attempts = d, attempts
	res.Cost = c.opts.Meter.Record(ctx, AccountFrom(ctx), req.Model, res.Usage)
	return res, nil
}

func (c *Client) responsesParams(req GenerateRequest) responses.ResponseNewParams {
	items := make(responses.ResponseInputParam, 0, len(req.Messages))
	for _, m := range req.Messages {
		role := responses.EasyInputMessageRoleUser
		if m.Role == RoleAssistant {
			role = responses.EasyInputMessageRoleAssistant
		}
		if len(m.Images) > 0 && m.Role != RoleAssistant {
			items = append(items, responses.ResponseInputItemParamOfMessage(responsesContent(m), role))
			continue
		}
		items = append(items, responses.ResponseInputItemParamOfMessage(m.Content, role))
	}
	p := responses.ResponseNewParams{
		Model: req.Model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items},
		Store: param.NewOpt(false),
	}
	if req.Instructions != "" {
		p.Instructions = param.NewOpt(req.Instructions)
	}
	if req.MaxOutputTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(req.MaxOutputTokens))
	}
	if req.ReasoningEffort != "" {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(req.ReasoningEffort)}
	}
	if req.hasTools() {
		p.Tools = make([]responses.ToolUnionParam, 0, len(req.Tools)+len(req.Hosted))
		for _, t := range req.Tools {
			p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
				Name:        t.Name,
				Description: param.NewOpt(t.Description),
				Parameters:  t.Parameters,
				Strict:      param.NewOpt(t.Strict),
			}})
		}
		for _, h := range req.Hosted {
			if h == HostedWebSearch {
				p.Tools = append(p.Tools, responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch))
			}
		}
		choice := responses.ToolChoiceOptionsAuto
		if req.ToolChoice == ToolChoiceRequired {
			choice = responses.ToolChoiceOptionsRequired
		}
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(choice)}
		p.ParallelToolCalls = param.NewOpt(req.ParallelToolCalls)
	}
	return p
}

func (c *Client) generateResponses(ctx context.Context, req GenerateRequest, a *attempt) (*Result, error) {
	resp, err := c.responses.New(ctx, c.responsesParams(req), a.options()...)
	if err != nil {
		return nil, err
	}
	if err := responseFailure(resp); err != nil {
		return nil, err
	}
	res := &Result{ResponseID: resp.ID, Model: resp.Model,
		Usage: responsesUsage(resp.Usage)}
	var text strings.Builder
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, part := range item.Content {
				switch part.Type {
				case "output_text":
					text.WriteString(part.Text)
					for _, a := range part.Annotations {
						if a.Type == "url_citation" && a.URL != "" {
							res.Citations = append(res.Citations, Citation{URL: a.URL, Title: a.Title})
						}
					}
				case "refusal":
					res.Refusal += part.Refusal
				}
			}
		case "function_call":
			fc := item.AsFunctionCall()
			res.ToolCalls = append(res.ToolCalls, ToolCall{ID: fc.CallID, Name: fc.Name, Arguments: fc.Arguments})
		case "web_search_call":
			ws := item.AsWebSearchCall()
			res.HostedCalls = append(res.HostedCalls, HostedCall{Tool: HostedWebSearch, Status: string(ws.Status), Query: ws.Action.Query})
		}
	}
	res.Text = strings.TrimSpace(text.String())
	return res, nil
}

// responseFailure turns a 200 response whose status is "failed" into an
// error the retry loop classifies as a server error.
func responseFailure(resp *responses.Response) error {
	if resp.Status != "failed" {
		return nil
	}
	return &openai.Error{StatusCode: http.StatusInternalServerError, Code: string(resp.Error.Code), Message: resp.Error.Message}
}

func (c *Client) chatParams(req GenerateRequest) openai.ChatCompletionNewParams {
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.Instructions != "" {
		msgs = append(msgs, openai.SystemMessage(req.Instructions))
	}
	for _, m := range req.Messages {
		switch {
		case m.Role == RoleAssistant:
			msgs = append(msgs, openai.AssistantMessage(m.Content))
		case len(m.Images) > 0:
			msgs = append(msgs, openai.UserMessage(chatContent(m)))
		default:
			msgs = append(msgs, openai.UserMessage(m.Content))
		}
	}
	p := openai.ChatCompletionNewParams{Model: req.Model, Messages: msgs}
	if req.MaxOutputTokens > 0 {
		// max_completion_tokens, not the deprecated max_tokens: OpenAI answers
		// 400 unsupported_parameter to max_tokens on reasoning models (gpt-5,
		// o-series), and current OpenAI-compatible servers read both.
		p.MaxCompletionTokens = param.NewOpt(int64(req.MaxOutputTokens))
	}
	if req.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	if len(req.Tools) > 0 {
		p.Tools = make([]openai.ChatCompletionToolUnionParam, 0, len(req.Tools))
		for _, t := range req.Tools {
			p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name:        t.Name,
				Description: param.NewOpt(t.Description),
				Parameters:  shared.FunctionParameters(t.Parameters),
				Strict:      param.NewOpt(t.Strict),
			}))
		}
		// parallel_tool_calls is left to the server's default: not every compatible server
		// reads it, and the caller handles several calls anyway.
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt(req.ToolChoice.String())}
	}
	return p
}

func (c *Client) generateChat(ctx context.Context, req GenerateRequest, a *attempt) (*Result, error) {
	resp, err := c.chat.Completions.New(ctx, c.chatParams(req), a.options()...)
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, fmt.Errorf("chat completion: %w (no choices)", errEmpty)
	}
	msg := resp.Choices[0].Message
	res := &Result{ResponseID: resp.ID, Model: resp.Model, Text: strings.TrimSpace(msg.Content), Refusal: msg.Refusal,
		Usage: chatUsage(resp.Usage)}
	for _, tc := range msg.ToolCalls {
		res.ToolCalls = append(res.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	for _, a := range msg.Annotations {
		if a.URLCitation.URL != "" {
			res.Citations = append(res.Citations, Citation{URL: a.URLCitation.URL, Title: a.URLCitation.Title})
		}
	}
	return res, nil
}

// Classify runs a small YES/NO style call (system prompt + one user
// message, at most Options.ClassifierMaxTokens output tokens) and returns
// the raw answer text, trimmed. Interpreting it is the caller's job. It
// sends no reasoning effort (the API's default); ClassifyWith sets one.
func (c *Client) Classify(ctx context.Context, model, system, user string) (string, error) {
	return c.classify(ctx, model, system, user, "")
}

func (c *Client) classify(ctx context.Context, model, system, user, effort string) (string, error) {
	if model == "" {
		return "", &APIError{Op: OpClassify, Kind: ErrorKindBadRequest, Err: errors.New("model is empty")}
	}
	model, err := c.admit(ctx, OpClassify, model)
	if err != nil {
		return "", err
	}
	req := GenerateRequest{Model: model, Instructions: system, ReasoningEffort: effort,
		Messages: []Message{{Role: RoleUser, Content: user}}, MaxOutputTokens: c.opts.ClassifierMaxTokens}
	start := c.now()
	var raw string
	_, err = c.call(ctx, OpClassify, model, c.opts.Timeout, func(ctx context.Context, a *attempt) error {
		var res *Result
		var err error
		if c.opts.API == APIChatCompletions {
			res, err = c.generateChat(ctx, req, a)
		} else {
			res, err = c.generateResponses(ctx, req, a)
		}
		if err == nil {
			raw = res.Text
			c.opts.Meter.Record(ctx, AccountFrom(ctx), model, res.Usage)
		}
		return err
	})
	c.metrics.observeCall(OpClassify, model, err, c.now().Sub(start))
	return raw, err
}

// String renders a Result for logs (never the full text or arguments).
func (r *Result) String() string {
	s := strconv.Quote(truncate(r.Text, 40))
	for _, c := range r.ToolCalls {
		s += " " + c.Name + "()"
	}
	for _, h := range r.HostedCalls {
		s += " " + h.Tool.String() + "[" + h.Status + "]"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
