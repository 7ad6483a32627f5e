package openaisim_test

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// A test points openai-go at the simulator and scripts the model's answer.
// In a test, openaitest.Serve(t, ...) does Start and Close.
func Example() {
	sim, err := openaisim.Start("127.0.0.1:0", openaisim.WithRules(openaisim.Rule{
		Name:  "reply via tool",
		Match: openaisim.Match{Tool: "send_discord_message", InputPattern: `(?i)hello`},
		Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{
			Name: "send_discord_message", Arguments: `{"mode":"reply","target_message_id":null,"text":"hi!"}`,
		}}},
	}))
	if err != nil {
		panic(err)
	}
	defer sim.Close()

	client := openai.NewClient(option.WithBaseURL(sim.BaseURL()), option.WithAPIKey("sk-test"))
	resp, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model:        "gpt-5-mini",
		Instructions: openai.String("You are banter."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello there")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name: "send_discord_message", Parameters: map[string]any{"type": "object"},
		}}},
	})
	if err != nil {
		panic(err)
	}
	call := resp.Output[0].AsFunctionCall()
	fmt.Println(call.Name, call.Arguments)

	rec := sim.Requests()[0]
	fmt.Printf("%s %s rule=%q prompt=%q\n", rec.Endpoint, rec.Model, rec.Rule, rec.Prompt)
	// Output:
	// send_discord_message {"mode":"reply","target_message_id":null,"text":"hi!"}
	// responses gpt-5-mini rule="reply via tool" prompt="You are banter.\n\nuser: Hello there"
}
