package openaisim

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

func sendTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:        "send_discord_message",
		Description: openai.String("Send a message to a Discord channel."),
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"channel_id": map[string]any{"type": "string"},
				"content":    map[string]any{"type": "string"},
			},
			"required": []string{"channel_id", "content"},
		},
	}}
}

func TestResponsesText(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		input string
		want  string
		rule  string
	}{
		{name: "default echo", input: "hi there", want: "You said: hi there"},
		{name: "scripted text", input: "what is 2+2?", want: "4, obviously.",
			rules: []Rule{{Name: "math", Match: Match{InputPattern: `\d\+\d`}, Reply: Reply{Text: "4, obviously."}}}, rule: "math"},
		{name: "skip", input: "ok", want: SkipText,
			rules: []Rule{{Name: "skip", Match: Match{Endpoint: EndpointResponses}, Reply: Reply{Skip: true}}}, rule: "skip"},
		{name: "classifier YES", input: "banter, are you there?", want: "YES",
			rules: []Rule{
				{Name: "gen", Match: Match{PromptPattern: `^You are banter`}, Reply: Reply{Text: "hello!"}},
				{Name: "cls", Match: Match{PromptPattern: `(?m)^Answer YES or NO`}, Reply: Reply{Text: "YES"}},
			}, rule: "cls"},
		{name: "model mismatch falls through", input: "x", want: "You said: x",
			rules: []Rule{{Name: "other", Match: Match{Model: "gpt-other"}, Reply: Reply{Text: "no"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, WithRules(tt.rules...))
			c := newClient(s)
			resp, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
				Model:        "gpt-5-mini",
				Instructions: openai.String("Answer YES or NO: should the bot speak?"),
				Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(tt.input)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.OutputText(); got != tt.want {
				t.Errorf("OutputText = %q, want %q", got, tt.want)
			}
			if resp.Status != "completed" || resp.Model != "gpt-5-mini" || !strings.HasPrefix(resp.ID, "resp_") {
				t.Errorf("response envelope: status %q model %q id %q", resp.Status, resp.Model, resp.ID)
			}
			if resp.Usage.OutputTokens == 0 || resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens {
				t.Errorf("usage = %+v", resp.Usage)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("recorded %d requests", len(reqs))
			}
			r := reqs[0]
			if r.Endpoint != EndpointResponses || r.Model != "gpt-5-mini" || r.LastUserText != tt.input || r.Rule != tt.rule ||
				!strings.HasPrefix(r.RequestID, "req_") {
				t.Errorf("recorded %+v", r)
			}
			if !strings.Contains(r.Prompt, "Answer YES or NO") || !strings.Contains(r.Prompt, "user: "+tt.input) {
				t.Errorf("prompt = %q", r.Prompt)
			}
		})
	}
}

func TestResponsesToolCallRoundTrip(t *testing.T) {
	s := serve(t, WithRules(
		Rule{Name: "reply via tool", Match: Match{Tool: "send_discord_message", InputPattern: "hello"},
			Reply: Reply{ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: `{"channel_id":"999999","content":"hi!"}`}}}, Times: 1},
		Rule{Name: "after tool", Match: Match{PromptPattern: `function_call_output call_\w+: sent`}, Reply: Reply{Text: "done"}},
	))
	c := newClient(s)
	ctx := context.Background()
	params := responses.ResponseNewParams{
		Model:      "gpt-5-mini",
		Input:      responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("hello bot", responses.EasyInputMessageRoleUser)}},
		Tools:      []responses.ToolUnionParam{sendTool()},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsAuto)},
	}
	resp, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 1 || resp.Output[0].Type != "function_call" {
		t.Fatalf("output = %s", resp.RawJSON())
	}
	call := resp.Output[0].AsFunctionCall()
	if call.Name != "send_discord_message" || call.Arguments != `{"channel_id":"999999","content":"hi!"}` || call.CallID == "" {
		t.Fatalf("call = %+v", call)
	}
	var args struct{ ChannelID, Content string }
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		t.Fatal(err)
	}

	// Second turn: feed the call and its output back.
	params.Input.OfInputItemList = append(params.Input.OfInputItemList,
		responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
		responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openai.String(call.CallID),
			Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("sent")},
		}})
	resp, err = c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "done" {
		t.Errorf("second turn = %s", resp.RawJSON())
	}
	reqs := s.Requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 1 {
		t.Fatalf("recorded %+v", reqs)
	}
	tool := reqs[0].Tools[0]
	if tool.Type != "function" || tool.Name != "send_discord_message" || !strings.Contains(string(tool.Parameters), "channel_id") ||
		tool.Description == "" || reqs[0].ToolChoice != `"auto"` {
		t.Errorf("recorded tool %+v choice %q", tool, reqs[0].ToolChoice)
	}
	if reqs[1].Rule != "after tool" {
		t.Errorf("second rule = %q, prompt %q", reqs[1].Rule, reqs[1].Prompt)
	}
}

func TestResponsesStreamingText(t *testing.T) {
	const text = "Sure, I can help with that. Give me a second!"
	s := serve(t, WithRules(Rule{Reply: Reply{Text: text}}))
	c := newClient(s)
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-5-mini",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("help?")},
	})
	var types []string
	var deltas strings.Builder
	var completed responses.Response
	seq := int64(-1)
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if ev.SequenceNumber != seq+1 {
			t.Errorf("sequence_number %d after %d", ev.SequenceNumber, seq)
		}
		seq = ev.SequenceNumber
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		case "response.completed":
			completed = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if deltas.String() != text {
		t.Errorf("deltas = %q", deltas.String())
	}
	if completed.OutputText() != text || completed.Status != "completed" {
		t.Errorf("completed = %s", completed.RawJSON())
	}
	head := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta"}
	tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if len(types) < len(head)+len(tail) || strings.Join(types[:len(head)], ",") != strings.Join(head, ",") ||
		strings.Join(types[len(types)-len(tail):], ",") != strings.Join(tail, ",") {
		t.Errorf("event order = %v", types)
	}
	if n := strings.Count(strings.Join(types, ","), "output_text.delta"); n < 5 {
		t.Errorf("only %d deltas for %q", n, text)
	}
	if r := s.Requests(); len(r) != 1 || !r[0].Stream {
		t.Errorf("recorded %+v", r)
	}
}

func TestResponsesStreamingToolCall(t *testing.T) {
	args := `{"channel_id":"123456789012345678","content":"on my way"}`
	s := serve(t, WithRules(Rule{Match: Match{HasTools: Bool(true)},
		Reply: Reply{Text: "One moment.", ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: args, CallID: "call_fixed"}}}}))
	c := newClient(s)
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-5-mini",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("ping")},
		Tools: []responses.ToolUnionParam{sendTool()},
	})
	var argDeltas strings.Builder
	var doneArgs string
	var final responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.function_call_arguments.delta":
			if ev.OutputIndex != 1 {
				t.Errorf("arguments delta at output_index %d", ev.OutputIndex)
			}
			argDeltas.WriteString(ev.Delta)
		case "response.function_call_arguments.done":
			doneArgs = ev.Arguments
		case "response.completed":
			final = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if argDeltas.String() != args || doneArgs != args {
		t.Errorf("arguments: deltas %q done %q", argDeltas.String(), doneArgs)
	}
	if len(final.Output) != 2 || final.Output[1].AsFunctionCall().CallID != "call_fixed" || final.OutputText() != "One moment." {
		t.Errorf("final = %s", final.RawJSON())
	}
}

func TestResponsesToolChoice(t *testing.T) {
	tests := []struct {
		name     string
		choice   responses.ResponseNewParamsToolChoiceUnion
		rules    []Rule
		wantType string
	}{
		{name: "required default calls the tool", wantType: "function_call",
			choice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)}},
		{name: "named function", wantType: "function_call",
			choice: responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "send_discord_message"}}},
		{name: "none drops scripted calls", wantType: "message",
			choice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)},
			rules:  []Rule{{Reply: Reply{ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: "{}"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, WithRules(tt.rules...))
			c := newClient(s)
			resp, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
				Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
				Tools: []responses.ToolUnionParam{sendTool()}, ToolChoice: tt.choice,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Output) != 1 || resp.Output[0].Type != tt.wantType {
				t.Errorf("output = %s", resp.RawJSON())
			}
		})
	}
}

func TestResponsesBadRequests(t *testing.T) {
	s := serve(t)
	c := newClient(s)
	tests := []struct {
		name   string
		body   string
		param  string
		substr string
	}{
		{name: "not json", body: `{"model":`, substr: "could not parse the JSON body"},
		{name: "missing model", body: `{"input":"x"}`, param: "model", substr: "Missing required parameter"},
		{name: "bad role", body: `{"model":"m","input":[{"role":"robot","content":"x"}]}`, param: "input[0].role", substr: "Invalid value: 'robot'"},
		{name: "orphan tool output", body: `{"model":"m","input":[{"type":"function_call_output","call_id":"call_nope","output":"x"}]}`, param: "input", substr: "No tool call found"},
		{name: "tool without name", body: `{"model":"m","tools":[{"type":"function"}]}`, param: "tools[0].name", substr: "Missing required"},
		{name: "required without tools", body: `{"model":"m","tool_choice":"required"}`, param: "tool_choice", substr: "must be specified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out map[string]any
			err := c.Post(context.Background(), "responses", json.RawMessage(tt.body), &out)
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *openai.Error", err)
			}
			if apiErr.StatusCode != 400 || apiErr.Type != "invalid_request_error" || apiErr.Param != tt.param ||
				!strings.Contains(apiErr.Message, tt.substr) {
				t.Errorf("error = %d %q %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Param, apiErr.Message)
			}
		})
	}
	if r := s.Requests(); len(r) != len(tests) || r[0].Status != 400 {
		t.Errorf("recorded %d requests, first status %d", len(r), r[0].Status)
	}
}

func TestResponsesLatencyRecorded(t *testing.T) {
	lat := Latency{TimeToFirstToken: 40 * time.Millisecond, PerToken: 5 * time.Millisecond}
	s := serve(t, WithRules(Rule{Reply: Reply{Text: "one two three four"}, Latency: lat}))
	c := newClient(s)
	start := time.Now()
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
	})
	var firstDelta time.Duration
	for stream.Next() {
		if stream.Current().Type == "response.output_text.delta" && firstDelta == 0 {
			firstDelta = time.Since(start)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if r.Injected.FirstToken != lat.TimeToFirstToken || r.Injected.Tokens != 3*lat.PerToken {
		t.Errorf("injected = %+v", r.Injected)
	}
	if firstDelta < lat.TimeToFirstToken {
		t.Errorf("first delta after %v, before the injected %v", firstDelta, lat.TimeToFirstToken)
	}
	if s.InjectedTotal() != r.Injected.Total() {
		t.Errorf("InjectedTotal = %v", s.InjectedTotal())
	}
}

func TestResponsesPreviousResponseID(t *testing.T) {
	s := serve(t, WithRules(
		Rule{Name: "call", Match: Match{InputPattern: "^hello bot$"}, Times: 1,
			Reply: Reply{ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: `{"content":"hi"}`}}}},
		Rule{Name: "chained", Match: Match{PromptPattern: `(?s)user: hello bot\nfunction_call send_discord_message.*function_call_output call_\w+: ok`}, Reply: Reply{Text: "chained"}},
	))
	c := newClient(s)
	ctx := context.Background()
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello bot")}, Tools: []responses.ToolUnionParam{sendTool()}})
	if err != nil {
		t.Fatal(err)
	}
	callID := first.Output[0].AsFunctionCall().CallID
	output := func(id string) responses.ResponseNewParamsInputUnion {
		return responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openai.String(id), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("ok")}}}}}
	}
	second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini", PreviousResponseID: openai.String(first.ID), Input: output(callID)})
	if err != nil || second.OutputText() != "chained" || second.PreviousResponseID != first.ID {
		t.Fatalf("chained: %v %s", err, second.RawJSON())
	}
	tests := []struct {
		name, prev, call, param string
	}{
		{name: "unknown previous", prev: "resp_nope", call: callID, param: "previous_response_id"},
		{name: "call not in history", prev: first.ID, call: "call_other", param: "input"},
	}
	for _, tt := range tests {
		_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini", PreviousResponseID: openai.String(tt.prev), Input: output(tt.call)})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != tt.param {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	unstored, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini", Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-mini", PreviousResponseID: openai.String(unstored.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("y")}}); err == nil {
		t.Error("store:false response could be chained")
	}
}
