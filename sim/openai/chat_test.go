package openaisim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

func chatTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "send_discord_message",
		Description: openai.String("Send a message."),
		Parameters:  shared.FunctionParameters{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}},
	})
}

func TestChatCompletions(t *testing.T) {
	args := `{"content":"hey"}`
	tests := []struct {
		name       string
		rules      []Rule
		tools      bool
		wantText   string
		wantCall   string
		wantFinish string
	}{
		{name: "default echo", wantText: "You said: hello there", wantFinish: "stop"},
		{name: "tool call", tools: true, wantCall: args, wantFinish: "tool_calls",
			rules: []Rule{{Match: Match{HasTools: Bool(true)}, Reply: Reply{ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: args}}}}}},
		{name: "skip", wantText: SkipText, wantFinish: "stop",
			rules: []Rule{{Match: Match{Endpoint: EndpointChatCompletions}, Reply: Reply{Skip: true}}}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				s := serveT(t, WithRules(tt.rules...))
				c := newClient(s)
				params := openai.ChatCompletionNewParams{
					Model: "gpt-4o-mini",
					Messages: []openai.ChatCompletionMessageParamUnion{
						openai.SystemMessage("You are banter."),
						openai.UserMessage("hello there"),
					},
				}
				if tt.tools {
					params.Tools = []openai.ChatCompletionToolUnionParam{chatTool()}
				}
				var cc openai.ChatCompletion
				if stream {
					params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
					st := c.Chat.Completions.NewStreaming(context.Background(), params)
					var acc openai.ChatCompletionAccumulator
					for st.Next() {
						acc.AddChunk(st.Current())
					}
					if err := st.Err(); err != nil {
						t.Fatal(err)
					}
					cc = acc.ChatCompletion
					if cc.Usage.TotalTokens == 0 {
						t.Errorf("no usage chunk: %+v", cc.Usage)
					}
				} else {
					res, err := c.Chat.Completions.New(context.Background(), params)
					if err != nil {
						t.Fatal(err)
					}
					cc = *res
				}
				if len(cc.Choices) != 1 {
					t.Fatalf("choices = %+v", cc.Choices)
				}
				ch := cc.Choices[0]
				if ch.Message.Content != tt.wantText || string(ch.FinishReason) != tt.wantFinish {
					t.Errorf("content %q finish %q", ch.Message.Content, ch.FinishReason)
				}
				if tt.wantCall != "" {
					if len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Arguments != tt.wantCall ||
						ch.Message.ToolCalls[0].Function.Name != "send_discord_message" || ch.Message.ToolCalls[0].ID == "" {
						t.Errorf("tool calls = %+v", ch.Message.ToolCalls)
					}
				}
				r := s.Requests()
				if len(r) != 1 || r[0].Instructions != "You are banter." || r[0].LastUserText != "hello there" || r[0].Stream != stream {
					t.Errorf("recorded %+v", r)
				}
			})
		}
	}
}

func TestChatToolMessageNeedsCall(t *testing.T) {
	s := serveT(t)
	c := newClient(s)
	_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x"), openai.ToolMessage("result", "call_missing")},
	})
	var apiErr *openai.Error
	if !asOpenAIError(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "role 'tool'") {
		t.Fatalf("err = %v", err)
	}
}

// TestChatMaxTokensOnReasoningModels: the real API refuses the legacy
// max_tokens (and a non-default temperature or top_p) on reasoning models
// with these exact bodies; the simulator must too, or a client sending them
// passes every test and fails in production.
func TestChatMaxTokensOnReasoningModels(t *testing.T) {
	const refusal = `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`
	tests := []struct {
		model, field string
		wantStatus   int
	}{
		{"gpt-5-nano", "max_tokens", 400},
		{"gpt-5", "max_tokens", 400},
		{"o4-mini", "max_tokens", 400},
		{"o1", "max_tokens", 400},
		{"gpt-5-nano", "max_completion_tokens", 200},
		{"o3-mini", "max_completion_tokens", 200},
		{"gpt-4o-mini", "max_tokens", 200},
		{"gpt-4.1", "max_tokens", 200},
		{"omni-moderation", "max_tokens", 200},
		{"gpt-5-mini", "temperature", 400},
		{"gpt-5-mini", "top_p", 400},
		{"gpt-4o-mini", "temperature", 200},
	}
	s := serveT(t)
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.field, func(t *testing.T) {
			value := "16"
			if tt.field == "temperature" || tt.field == "top_p" {
				value = "0.5"
			}
			body := `{"model":"` + tt.model + `","messages":[{"role":"user","content":"hi"}],"` + tt.field + `":` + value + `}`
			resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, got)
			}
			want := refusal
			if tt.field != "max_tokens" {
				want = `{"error":{"message":"Unsupported value: '` + tt.field + `' does not support 0.5 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"` + tt.field + `","code":"unsupported_value"}}`
			}
			if tt.wantStatus == 400 && strings.TrimSpace(string(got)) != want {
				t.Errorf("body\n%s\nwant\n%s", got, want)
			}
		})
	}
}
