package openaisim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/banterbot/banter/sim/conform"
)

func webSearchTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfWebSearch: &responses.WebSearchToolParam{Type: "web_search"}}
}

var searchRule = Rule{Name: "search", Match: Match{Endpoint: EndpointResponses, Tool: "web_search"},
	Reply: Reply{Text: "The match ended 2-1.", WebSearch: &WebSearch{Query: "match result", Results: []WebResult{
		{URL: "https://news.example/match", Title: "Match report"},
		{URL: "https://scores.example/live", Title: "Live scores"},
	}}}}

// checkCitations checks the message cites both results over their links.
func checkCitations(t *testing.T, text string, anns []responses.ResponseOutputTextAnnotationUnion) {
	t.Helper()
	if !strings.HasPrefix(text, "The match ended 2-1. ([Match report](https://news.example/match))") || len(anns) != 2 {
		t.Fatalf("text %q with %d annotations", text, len(anns))
	}
	runes := []rune(text)
	for i, want := range searchRule.Reply.WebSearch.Results {
		c := anns[i].AsURLCitation()
		if anns[i].Type != "url_citation" || c.URL != want.URL || c.Title != want.Title {
			t.Errorf("annotation %d: %+v", i, c)
			continue
		}
		if span := string(runes[c.StartIndex:c.EndIndex]); span != "["+want.Title+"]("+want.URL+")" {
			t.Errorf("annotation %d spans %q", i, span)
		}
	}
}

// TestWebSearch: a request offering the hosted web_search tool is answered
// with a web_search_call and a message citing the scripted results, in a
// body and as a stream, parsed by openai-go; without the tool no search
// runs.
func TestWebSearch(t *testing.T) {
	spec, err := conform.OpenAI()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var offSpec []error
	s := serve(t, WithRules(searchRule), WithConformance(spec, func(err error) { mu.Lock(); offSpec = append(offSpec, err); mu.Unlock() }))
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, err := range offSpec { // what openai-go sends for the hosted tool is on OpenAI's spec
			t.Errorf("request off the spec: %v", err)
		}
	}()
	c := newClient(s)
	ctx := context.Background()
	params := responses.ResponseNewParams{
		Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("who won?")},
		Tools:   []responses.ToolUnionParam{webSearchTool()},
		Include: []responses.ResponseIncludable{responses.ResponseIncludableWebSearchCallActionSources},
	}
	resp, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 2 || resp.Output[0].Type != "web_search_call" || resp.Output[1].Type != "message" {
		t.Fatalf("output %+v", resp.Output)
	}
	ws := resp.Output[0].AsWebSearchCall()
	if ws.Status != "completed" || ws.Action.Query != "match result" || len(ws.Action.Sources) != 2 || ws.Action.Sources[0].URL != "https://news.example/match" {
		t.Errorf("web_search_call %+v", ws)
	}
	msg := resp.Output[1].AsMessage()
	checkCitations(t, msg.Content[0].Text, msg.Content[0].Annotations)

	stream := c.Responses.NewStreaming(ctx, params)
	var phases []string
	var added int
	var done responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch {
		case strings.HasPrefix(ev.Type, "response.web_search_call."):
			phases = append(phases, strings.TrimPrefix(ev.Type, "response.web_search_call."))
		case ev.Type == "response.output_text.annotation.added":
			added++
		case ev.Type == "response.completed":
			done = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(phases, ",") != "in_progress,searching,completed" || added != 2 {
		t.Errorf("stream: web search phases %v, %d annotation events", phases, added)
	}
	if len(done.Output) != 2 {
		t.Fatalf("completed output %+v", done.Output)
	}
	m := done.Output[1].AsMessage()
	checkCitations(t, m.Content[0].Text, m.Content[0].Annotations)

	// Without the tool offered, the same rule cannot search.
	plain, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("who won?")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Output) != 1 || plain.Output[0].Type != "message" {
		t.Errorf("without the tool: %+v", plain.Output)
	}
}

// TestWebSearchForced: tool_choice {"type":"web_search"} makes the model
// search with no script (sources only when included); forcing it without
// offering it is a 400, as on OpenAI.
func TestWebSearchForced(t *testing.T) {
	s := serve(t)
	c := newClient(s)
	resp, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather in Oslo")},
		Tools:      []responses.ToolUnionParam{webSearchTool()},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfHostedTool: &responses.ToolChoiceTypesParam{Type: "web_search"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 2 || resp.Output[0].AsWebSearchCall().Action.Query != "weather in Oslo" || len(resp.Output[0].AsWebSearchCall().Action.Sources) != 0 {
		t.Fatalf("output %+v", resp.Output)
	}
	if anns := resp.Output[1].AsMessage().Content[0].Annotations; len(anns) != 1 || !strings.HasPrefix(anns[0].AsURLCitation().URL, "https://example.com/") {
		t.Errorf("annotations %+v", anns)
	}
	_, err = c.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfHostedTool: &responses.ToolChoiceTypesParam{Type: "web_search"}},
	})
	var apiErr *openai.Error
	if !asOpenAIError(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "tool_choice" {
		t.Errorf("forcing a tool not offered: %v", err)
	}
}

// TestChatRefusesWebSearch: chat completions has no hosted tools; a
// web_search tool there is a 400 invalid_value naming tools[0].type.
func TestChatRefusesWebSearch(t *testing.T) {
	s := serve(t)
	body := `{"model":"gpt-5-mini","messages":[{"role":"user","content":"news?"}],"tools":[{"type":"web_search"}]}`
	resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Error APIError `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || resp.StatusCode != 400 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if e.Error.Param == nil || *e.Error.Param != "tools[0].type" || e.Error.Code == nil || *e.Error.Code != "invalid_value" ||
		e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, "'web_search'") {
		t.Errorf("error %s", raw)
	}
}
