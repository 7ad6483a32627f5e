package openaisim

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// Wire shapes of the Responses API output, as parsed by openai-go's
// responses.Response and responses.ResponseStreamEventUnion.
// https://platform.openai.com/docs/api-reference/responses/object

type responseObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	Error              any               `json:"error"`
	IncompleteDetails  any               `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          map[string]any    `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               map[string]any    `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              []json.RawMessage `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *responseUsage    `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
}

type responseUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputPart `json:"content"`
}

type outputPart struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	Refusal     string `json:"refusal,omitempty"`
	Annotations []any  `json:"annotations,omitempty"`
	Logprobs    []any  `json:"logprobs,omitempty"`
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

func textPart(text string) outputPart {
	return outputPart{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointResponses)
	defer s.record(rec)
	body, ok := s.readBody(w, r, rec, 16<<20)
	if !ok {
		return
	}
	req, p, err := parseResponsesRequest(body)
	if err != nil {
		s.reject(w, rec, err)
		return
	}
	if req.PreviousResponseID != nil {
		if err := s.applyPrevious(*req.PreviousResponseID, p); err != nil {
			s.reject(w, rec, err)
			return
		}
	}
	fillRecord(rec, p)
	o := s.resolve(&matchInput{
		endpoint: EndpointResponses, model: p.model, lastUser: p.lastUser, prompt: p.flat,
		tools: toolNames(p.tools), streaming: p.stream,
	})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	pl := s.makePlan(&o, p.lastUser, p.tools, p.policy, p.forced)
	resp := s.newResponseObject(req, p)
	items := s.planItems(&pl, slices.Contains(req.Include, "web_search_call.action.sources"))
	if req.Store == nil || *req.Store {
		s.storeResponse(resp.ID, p, &pl)
	}
	rec.Status = http.StatusOK
	if !p.stream {
		n := countTokens(pl.text) + countTokens(pl.refusal)
		for _, c := range pl.calls {
			n += countTokens(c.Arguments)
		}
		if s.wait(r.Context(), o.latency.TimeToFirstToken, &rec.Injected.FirstToken) != nil ||
			s.wait(r.Context(), time.Duration(max(n-1, 0))*o.latency.PerToken, &rec.Injected.Tokens) != nil {
			rec.Status = 0
			return
		}
		resp.Status = "completed"
		resp.Output = items
		resp.Usage = usageFor(p.flat, n)
		rec.Usage = resp.Usage.recorded()
		s.record(rec)
		writeBody(w, resp, o.fault)
		return
	}
	s.streamResponse(w, r, rec, &o, resp, items, p)
}

func fillRecord(rec *Recorded, p *prompt) {
	rec.Model = p.model
	rec.Instructions = p.instructions
	rec.LastUserText = p.lastUser
	rec.Prompt = p.flat
	rec.Images = p.images
	rec.Tools = p.tools
	rec.ToolChoice = p.toolChoice
	rec.Stream = p.stream
	rec.ReasoningEffort = p.effort
}

// toolNames lists the tools offered as rules match them: functions by
// name, hosted tools by type.
func toolNames(ts []Tool) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if t.Type != "function" && t.Name == "" {
			out = append(out, t.Type)
			continue
		}
		out = append(out, t.Name)
	}
	return out
}

func usageFor(promptText string, out int) *responseUsage {
	in := countTokens(promptText)
	return &responseUsage{
		InputTokens: in, InputTokensDetails: map[string]int{"cached_tokens": 0},
		OutputTokens: out, OutputTokensDetails: map[string]int{"reasoning_tokens": 0},
		TotalTokens: in + out,
	}
}

// recorded is the usage as Recorded keeps it.
func (u *responseUsage) recorded() Usage {
	return Usage{InputTokens: u.InputTokens, CachedTokens: u.InputTokensDetails["cached_tokens"],
		OutputTokens: u.OutputTokens, ReasoningTokens: u.OutputTokensDetails["reasoning_tokens"]}
}

func (s *Server) newResponseObject(req *responsesRequest, p *prompt) *responseObject {
	tc := json.RawMessage(`"auto"`)
	if p.toolChoice != "" {
		tc = json.RawMessage(p.toolChoice)
	}
	tools := req.Tools
	if tools == nil {
		tools = []json.RawMessage{}
	}
	resp := &responseObject{
		ID: s.newID("resp"), Object: "response", CreatedAt: s.now().Unix(), Status: "in_progress",
		Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, Model: p.model,
		Output: []any{}, ParallelToolCalls: req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		PreviousResponseID: req.PreviousResponseID,
		Reasoning:          map[string]any{"effort": nil, "summary": nil},
		Store:              req.Store == nil || *req.Store, Temperature: 1, TopP: 1,
		Text:       map[string]any{"format": map[string]string{"type": "text"}},
		ToolChoice: tc, Tools: tools, Truncation: "disabled", User: req.User, Metadata: req.Metadata,
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	if p.effort != "" {
		resp.Reasoning["effort"] = p.effort
	}
	if req.Temperature != nil {
		resp.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		resp.TopP = *req.TopP
	}
	return resp
}

// planItems builds the completed output items: a web_search_call (if the
// reply searched), a message (if there is text or a refusal; citing the
// search results), then one function_call per tool call.
func (s *Server) planItems(pl *plan, withSources bool) []any {
	var items []any
	if pl.search != nil {
		items = append(items, s.searchItem(pl.search, withSources))
	}
	switch {
	case pl.refusal != "":
		items = append(items, messageItem{ID: s.newID("msg"), Type: "message", Status: "completed", Role: "assistant",
			Content: []outputPart{{Type: "refusal", Refusal: pl.refusal}}})
	case pl.text != "":
		part := textPart(pl.text)
		if pl.search != nil {
			part.Text, part.Annotations = cite(pl.text, pl.search.results)
		}
		items = append(items, messageItem{ID: s.newID("msg"), Type: "message", Status: "completed", Role: "assistant",
			Content: []outputPart{part}})
	}
	for _, c := range pl.calls {
		items = append(items, functionCallItem{ID: s.newID("fc"), Type: "function_call", Status: "completed",
			Arguments: c.Arguments, CallID: c.CallID, Name: c.Name})
	}
	if items == nil {
		items = []any{}
	}
	return items
}

// streamResponse writes the Responses SSE event sequence:
// response.created, response.in_progress, then per item output_item.added,
// (web_search_call.in_progress, .searching, .completed |
// content_part.added, output_text.delta..., output_text.annotation.added...,
// output_text.done, content_part.done | function_call_arguments.delta...,
// .done), output_item.done, and finally response.completed.
func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request, rec *Recorded, o *outcome, resp *responseObject, items []any, p *prompt) {
	sw := s.newSSE(w, r, true, o.fault)
	st := &responseStream{sw: sw}
	sw.onError = func(e APIError) {
		st.emit("error", map[string]any{"code": e.Code, "message": e.Message, "param": e.Param}, false)
		resp.Status, resp.Error = "failed", map[string]any{"code": e.Code, "message": e.Message}
		s.record(rec)
		st.emit("response.failed", map[string]any{"response": resp}, false)
	}
	snapshot := *resp
	st.emit("response.created", map[string]any{"response": &snapshot}, false)
	st.emit("response.in_progress", map[string]any{"response": &snapshot}, false)

	pc := s.newPacer(r.Context(), o.latency, &rec.Injected)
	st.pace = pc.token
	for idx, it := range items {
		ok := true
		switch item := it.(type) {
		case webSearchItem:
			st.search(idx, item)
		case messageItem:
			ok = st.message(idx, item)
		case functionCallItem:
			ok = st.call(idx, item)
		}
		if !ok {
			rec.Status = 0 // the client gave up
			return
		}
	}
	resp.Status = "completed"
	resp.Output = items
	resp.Usage = usageFor(p.flat, pc.tokens)
	rec.Usage = resp.Usage.recorded()
	s.record(rec)
	st.emit("response.completed", map[string]any{"response": resp}, false)
}

// responseStream numbers and writes one response's events.
type responseStream struct {
	sw   *sseWriter
	seq  int
	pace func() bool // waits for the next token; false when the client is gone
}

func (st *responseStream) emit(typ string, fields map[string]any, delta bool) {
	fields["type"] = typ
	fields["sequence_number"] = st.seq
	st.seq++
	st.sw.event(typ, fields, delta)
}

// search streams a web_search_call: added (in progress, no sources yet),
// in_progress, searching, completed, done.
func (st *responseStream) search(idx int, item webSearchItem) {
	added := item
	added.Status, added.Action.Sources = "in_progress", nil
	st.emit("response.output_item.added", map[string]any{"output_index": idx, "item": added}, false)
	for _, phase := range []string{"in_progress", "searching", "completed"} {
		st.emit("response.web_search_call."+phase, map[string]any{"output_index": idx, "item_id": item.ID}, false)
	}
	st.emit("response.output_item.done", map[string]any{"output_index": idx, "item": item}, false)
}

// message streams a message item: its text (or refusal) token by token,
// then its annotations, one event each.
func (st *responseStream) message(idx int, item messageItem) bool {
	added := item
	added.Status, added.Content = "in_progress", []outputPart{}
	st.emit("response.output_item.added", map[string]any{"output_index": idx, "item": added}, false)
	part := item.Content[0]
	empty := outputPart{Type: part.Type}
	if part.Type == "output_text" {
		empty.Annotations = []any{}
	}
	at := func(kv ...any) map[string]any {
		m := map[string]any{"item_id": item.ID, "output_index": idx, "content_index": 0}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	st.emit("response.content_part.added", at("part", empty), false)
	if part.Type == "refusal" {
		for _, tok := range tokens(part.Refusal) {
			if !st.pace() {
				return false
			}
			st.emit("response.refusal.delta", at("delta", tok), true)
		}
		st.emit("response.refusal.done", at("refusal", part.Refusal), false)
	} else {
		for _, tok := range tokens(part.Text) {
			if !st.pace() {
				return false
			}
			st.emit("response.output_text.delta", at("delta", tok, "logprobs", []any{}), true)
		}
		for i, a := range part.Annotations {
			st.emit("response.output_text.annotation.added", at("annotation_index", i, "annotation", a), false)
		}
		st.emit("response.output_text.done", at("text", part.Text, "logprobs", []any{}), false)
	}
	st.emit("response.content_part.done", at("part", part), false)
	st.emit("response.output_item.done", map[string]any{"output_index": idx, "item": item}, false)
	return true
}

// call streams a function_call item: its arguments in pieces.
func (st *responseStream) call(idx int, item functionCallItem) bool {
	added := item
	added.Status, added.Arguments = "in_progress", ""
	st.emit("response.output_item.added", map[string]any{"output_index": idx, "item": added}, false)
	for _, chunk := range chunkString(item.Arguments, 8) {
		if !st.pace() {
			return false
		}
		st.emit("response.function_call_arguments.delta", map[string]any{"item_id": item.ID, "output_index": idx, "delta": chunk}, true)
	}
	st.emit("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": idx, "name": item.Name, "arguments": item.Arguments}, false)
	st.emit("response.output_item.done", map[string]any{"output_index": idx, "item": item}, false)
	return true
}
