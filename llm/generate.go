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
// the conversation so far.
type GenerateRequest struct {
	Model        string
	Instructions string
	Messages     []Message
	// SendMessageTool offers the send_discord_message function tool with
	// tool_choice auto; the model may still answer in free text.
	SendMessageTool bool
	// MaxOutputTokens bounds the answer; 0 leaves it to the server.
	MaxOutputTokens int
	// ReasoningEffort is sent as reasoning.effort (responses) or reasoning_effort (chat
	// completions) when not empty: a value of the API's enum (none, minimal, low, medium,
	// high, xhigh, max) that the model accepts (ReasoningEfforts).
	ReasoningEffort string
}

// ResultKind says what a generation produced. The zero value is
// ResultUnknown.
type ResultKind uint8

// Result kinds.
const (
	ResultUnknown ResultKind = iota
	// ResultText: free text (possibly empty or "[SKIP]"; Stage B decides).
	ResultText
	// ResultToolCall: a valid send_discord_message call in Result.Send.
	ResultToolCall
	// ResultInvalidToolCall: a tool call whose arguments failed validation;
	// Result.ToolErr says why and Result.Send holds what could be read.
	ResultInvalidToolCall
)

// String returns the kind's label, e.g. "tool_call".
func (k ResultKind) String() string {
	switch k {
	case ResultText:
		return "text"
	case ResultToolCall:
		return "tool_call"
	case ResultInvalidToolCall:
		return "invalid_tool_call"
	}
	return "unknown"
}

// ToolCall is a raw function call as the model emitted it.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Usage is the token accounting reported by the server (0 when absent).
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Result is the outcome of Generate.
type Result struct {
	Kind ResultKind
	// Text is the free text of the answer (it may accompany a tool call).
	Text string
	// Refusal is the model's refusal message, when it refused (Text is
	// then usually empty).
	Refusal string
	// Send is the parsed tool call (valid for ResultToolCall, best effort
	// for ResultInvalidToolCall).
	Send SendMessageArgs
	// ToolCall is the raw call, when there was one. Only the first call is
	// used; ExtraToolCalls counts the ignored rest.
	ToolCall       *ToolCall
	ExtraToolCalls int
	ToolErr        *ToolCallError
	ResponseID     string
	Model          string
	Usage          Usage
	Latency        time.Duration
	Attempts       int
}

// Generate runs one non-streaming generation through the configured API.
// Invalid tool calls are not errors: they come back as
// ResultInvalidToolCall. Errors are *APIError.
func (c *Client) Generate(ctx context.Context, req GenerateRequest) (*Result, error) {
	if req.Model == "" {
		return nil, &APIError{Op: OpGenerate, Kind: ErrorKindBadRequest, Err: errors.New("model is empty")}
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
	c.finishToolCall(res)
	return res, nil
}

// finishToolCall validates the raw tool call and sets Kind.
func (c *Client) finishToolCall(res *Result) {
	res.Kind = ResultText
	if res.ToolCall == nil {
		return
	}
	res.Kind = ResultToolCall
	var err error
	if res.ToolCall.Name != SendMessageToolName {
		err = &ToolCallError{Reason: ToolCallReasonUnknownTool, Detail: fmt.Sprintf("%.64q", res.ToolCall.Name)}
	} else {
		res.Send, err = ParseSendMessageArgs(res.ToolCall.Arguments)
	}
	if err != nil {
		res.Kind = ResultInvalidToolCall
		res.ToolErr = err.(*ToolCallError)
		c.metrics.observeInvalidToolCall(res.ToolErr.Reason.String())
	}
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
	if req.SendMessageTool {
		p.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name:        SendMessageToolName,
			Description: param.NewOpt(sendMessageToolDescription),
			Parameters:  sendMessageToolSchema(),
			Strict:      param.NewOpt(true),
		}}}
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsAuto)}
		p.ParallelToolCalls = param.NewOpt(false)
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
		Usage: Usage{InputTokens: int(resp.Usage.InputTokens), OutputTokens: int(resp.Usage.OutputTokens)}}
	var text strings.Builder
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, part := range item.Content {
				switch part.Type {
				case "output_text":
					text.WriteString(part.Text)
				case "refusal":
					res.Refusal += part.Refusal
				}
			}
		case "function_call":
			fc := item.AsFunctionCall()
			if res.ToolCall != nil {
				res.ExtraToolCalls++
				continue
			}
			res.ToolCall = &ToolCall{ID: fc.CallID, Name: fc.Name, Arguments: fc.Arguments}
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
	if req.SendMessageTool {
		p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        SendMessageToolName,
			Description: param.NewOpt(sendMessageToolDescription),
			Parameters:  shared.FunctionParameters(sendMessageToolSchema()),
			Strict:      param.NewOpt(true),
		})}
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt("auto")}
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
		Usage: Usage{InputTokens: int(resp.Usage.PromptTokens), OutputTokens: int(resp.Usage.CompletionTokens)}}
	for i, tc := range msg.ToolCalls {
		if i > 0 {
			res.ExtraToolCalls++
			continue
		}
		res.ToolCall = &ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
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
	req := GenerateRequest{Model: model, Instructions: system, ReasoningEffort: effort,
		Messages: []Message{{Role: RoleUser, Content: user}}, MaxOutputTokens: c.opts.ClassifierMaxTokens}
	start := c.now()
	var raw string
	_, err := c.call(ctx, OpClassify, model, c.opts.Timeout, func(ctx context.Context, a *attempt) error {
		var res *Result
		var err error
		if c.opts.API == APIChatCompletions {
			res, err = c.generateChat(ctx, req, a)
		} else {
			res, err = c.generateResponses(ctx, req, a)
		}
		if err == nil {
			raw = res.Text
		}
		return err
	})
	c.metrics.observeCall(OpClassify, model, err, c.now().Sub(start))
	return raw, err
}

// String renders a Result for logs (never the full text).
func (r *Result) String() string {
	s := r.Kind.String() + " " + strconv.Quote(truncate(r.Text, 40))
	if r.ToolCall != nil {
		s += " " + r.ToolCall.Name + " mode=" + r.Send.Mode.String() + " target=" + r.Send.TargetMessageID
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
