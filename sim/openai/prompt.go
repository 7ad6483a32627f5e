package openaisim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// prompt is what the simulator extracts from a generation request.
type prompt struct {
	model        string
	instructions string
	lastUser     string
	flat         string
	tools        []Tool
	toolChoice   string
	policy       toolPolicy
	forced       string // function name forced by tool_choice
	stream       bool
	lines        []string // flattened input items
	// unmatched are function_call_output call ids without a function_call
	// in the input (allowed only with previous_response_id).
	unmatched []string
	previous  *storedResponse // set by applyPrevious
	// images are the image inputs of user messages, in order: URLs or data URLs.
	images []string
	// effort is the reasoning effort asked for ("" when not sent).
	effort string
}

// requestError is a client error that maps to a 400 with a param.
type requestError struct {
	param string
	msg   string
	code  string // OpenAI's error code, e.g. "unsupported_parameter"; empty is null
}

func (e *requestError) Error() string {
	if e.param == "" {
		return e.msg
	}
	return e.param + ": " + e.msg
}

func reqErr(param, format string, args ...any) error {
	return &requestError{param: param, msg: fmt.Sprintf(format, args...)}
}

// responsesRequest is the subset of POST /v1/responses the simulator reads.
// https://platform.openai.com/docs/api-reference/responses/create
type responsesRequest struct {
	Model              string            `json:"model"`
	Instructions       *string           `json:"instructions"`
	Input              json.RawMessage   `json:"input"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Stream             bool              `json:"stream"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Store              *bool             `json:"store"`
	Metadata           map[string]string `json:"metadata"`
	User               *string           `json:"user"`
	Include            []string          `json:"include"`
	Reasoning          *struct {
		Effort *string `json:"effort"`
	} `json:"reasoning"`
}

// inputItem is one element of a responses "input" array (any item type).
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type contentPartIn struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// ImageURL is a string in the Responses API (input_image) and {"url","detail"} in chat
	// completions (image_url parts).
	ImageURL json.RawMessage `json:"image_url"`
	FileID   string          `json:"file_id"`
}

// parseResponsesRequest decodes and validates a responses request body.
// The body is untrusted.
func parseResponsesRequest(body []byte) (*responsesRequest, *prompt, error) {
	var req responsesRequest
	if err := strictJSON(body, &req); err != nil {
		return nil, nil, err
	}
	if req.Model == "" {
		return nil, nil, reqErr("model", "Missing required parameter: 'model'.")
	}
	p := &prompt{model: req.Model, stream: req.Stream}
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		if err := checkReasoningEffort(req.Model, *req.Reasoning.Effort, "reasoning.effort"); err != nil {
			return nil, nil, err
		}
		p.effort = *req.Reasoning.Effort
	}
	var lines []string
	if req.Instructions != nil {
		p.instructions = *req.Instructions
	}
	if err := parseResponsesInput(req.Input, req.PreviousResponseID != nil, p, &lines); err != nil {
		return nil, nil, err
	}
	tools, err := parseTools(req.Tools, false)
	if err != nil {
		return nil, nil, err
	}
	p.tools = tools
	if err := parseToolChoice(req.ToolChoice, p, false); err != nil {
		return nil, nil, err
	}
	p.lines = lines
	p.flat = flatten(p.instructions, lines)
	return &req, p, nil
}

func flatten(instructions string, lines []string) string {
	var b strings.Builder
	if instructions != "" {
		b.WriteString(instructions)
		b.WriteString("\n\n")
	}
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

func parseResponsesInput(raw json.RawMessage, hasPrevious bool, p *prompt, lines *[]string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return reqErr("input", "Invalid 'input': %v", err)
		}
		p.lastUser = s
		*lines = append(*lines, "user: "+s)
		return nil
	}
	var items []inputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return reqErr("input", "Invalid type for 'input': expected a string or an array of input items.")
	}
	calls := map[string]bool{}
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		switch typ {
		case "message":
			text, images, err := contentParts(it.Content, param+".content")
			if err != nil {
				return err
			}
			if len(images) > 0 && it.Role != "user" {
				return reqErr(param+".content", "Invalid value: 'input_image'. Supported values are: 'input_text' and 'output_text' for role '%s'.", it.Role)
			}
			p.images = append(p.images, images...)
			switch it.Role {
			case "user":
				p.lastUser = text
			case "system", "developer":
				if p.instructions != "" {
					p.instructions += "\n"
				}
				p.instructions += text
				continue
			case "assistant":
			default:
				return reqErr(param+".role", "Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", it.Role)
			}
			*lines = append(*lines, it.Role+": "+text)
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return reqErr(param, "Missing required parameter: '%s.call_id' or '%s.name'.", param, param)
			}
			calls[it.CallID] = true
			*lines = append(*lines, fmt.Sprintf("function_call %s(%s)", it.Name, it.Arguments))
		case "function_call_output":
			if it.CallID == "" {
				return reqErr(param+".call_id", "Missing required parameter: '%s.call_id'.", param)
			}
			if !calls[it.CallID] {
				if !hasPrevious {
					return reqErr("input", "No tool call found for function call output with call_id %s.", it.CallID)
				}
				p.unmatched = append(p.unmatched, it.CallID)
			}
			out, err := outputText(it.Output, param+".output")
			if err != nil {
				return err
			}
			*lines = append(*lines, fmt.Sprintf("function_call_output %s: %s", it.CallID, out))
		case "":
			return reqErr(param+".type", "Missing required parameter: '%s.type'.", param)
		default:
			*lines = append(*lines, typ)
		}
	}
	return nil
}

// contentText flattens message content: a string or an array of parts.
func contentText(raw json.RawMessage, param string) (string, error) {
	text, _, err := contentParts(raw, param)
	return text, err
}

// contentParts flattens message content (a string or an array of parts) into its text, with
// "[image]" where an image stood, and returns the images' URLs or data URLs.
func contentParts(raw json.RawMessage, param string) (string, []string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, reqErr(param, "Missing required parameter: '%s'.", param)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, reqErr(param, "Invalid '%s': %v", param, err)
		}
		return s, nil, nil
	}
	var parts []contentPartIn
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, reqErr(param, "Invalid type for '%s': expected a string or an array of content parts.", param)
	}
	var texts, images []string
	for i, pt := range parts {
		partParam := fmt.Sprintf("%s[%d]", param, i)
		switch pt.Type {
		case "input_text", "output_text", "text":
			texts = append(texts, pt.Text)
		case "input_image", "image_url":
			ref, err := imageRef(pt, partParam)
			if err != nil {
				return "", nil, err
			}
			if ref != "" {
				images = append(images, ref)
			}
			texts = append(texts, "[image]")
		case "":
			return "", nil, reqErr(param, "Missing required parameter: '%s[].type'.", param)
		default:
			texts = append(texts, "["+pt.Type+"]")
		}
	}
	return strings.Join(texts, " "), images, nil
}

// imageRef validates an image part as the API does: a Responses input_image needs image_url
// (a URL or a data URL) or file_id; a chat image_url part needs image_url.url.
func imageRef(pt contentPartIn, param string) (string, error) {
	var ref string
	raw := bytes.TrimSpace(pt.ImageURL)
	switch {
	case pt.Type == "input_image" && len(raw) > 0 && raw[0] == '"':
		json.Unmarshal(raw, &ref)
	case pt.Type == "image_url" && len(raw) > 0 && raw[0] == '{':
		var u struct {
			URL string `json:"url"`
		}
		json.Unmarshal(raw, &u)
		ref = u.URL
	case pt.Type == "input_image" && pt.FileID != "":
		return "", nil
	}
	if ref == "" {
		return "", reqErr(param+".image_url", "Missing required parameter: '%s.image_url'.", param)
	}
	if !validImageRef(ref) {
		return "", reqErr(param+".image_url", "Invalid image URL: '%s.image_url' must be a fully qualified URL or a base64 data URL of an image.", param)
	}
	return ref, nil
}

// validImageRef accepts http(s) URLs and data URLs of the image types the API reads.
func validImageRef(ref string) bool {
	if rest, ok := strings.CutPrefix(ref, "data:"); ok {
		mime, data, ok := strings.Cut(rest, ";base64,")
		if !ok || data == "" {
			return false
		}
		switch mime {
		case "image/png", "image/jpeg", "image/webp", "image/gif":
			_, err := base64.StdEncoding.DecodeString(data)
			return err == nil
		}
		return false
	}
	u, err := url.Parse(ref)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// outputText flattens a function_call_output "output": a string or parts.
func outputText(raw json.RawMessage, param string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", reqErr(param, "Missing required parameter: '%s'.", param)
	}
	return contentText(raw, param)
}

// toolIn is a function tool in either API's shape: responses
// {"type":"function","name":...} or chat {"type":"function","function":{...}}.
type toolIn struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Function    *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func parseTools(raw []json.RawMessage, chat bool) ([]Tool, error) {
	var out []Tool
	for i, r := range raw {
		param := fmt.Sprintf("tools[%d]", i)
		var t toolIn
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, reqErr(param, "Invalid type for '%s': expected an object.", param)
		}
		if t.Type == "" {
			return nil, reqErr(param+".type", "Missing required parameter: '%s.type'.", param)
		}
		if chat && t.Type != "function" && t.Type != "custom" {
			// Hosted tools (web_search, file_search, ...) are the Responses API's only.
			return nil, &requestError{param: param + ".type", code: "invalid_value",
				msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type)}
		}
		tool := Tool{Type: t.Type, Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		if chat && t.Function != nil {
			tool.Name, tool.Description, tool.Parameters = t.Function.Name, t.Function.Description, t.Function.Parameters
		}
		if t.Type == "function" && tool.Name == "" {
			if chat {
				return nil, reqErr(param+".function.name", "Missing required parameter: '%s.function.name'.", param)
			}
			return nil, reqErr(param+".name", "Missing required parameter: '%s.name'.", param)
		}
		out = append(out, tool)
	}
	return out, nil
}

func parseToolChoice(raw json.RawMessage, p *prompt, chat bool) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	p.toolChoice = string(raw)
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "auto":
		case "none":
			p.policy = toolPolicyNone
		case "required":
			p.policy = toolPolicyRequired
		default:
			return reqErr("tool_choice", "Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", s)
		}
		if p.policy == toolPolicyRequired && len(p.tools) == 0 {
			return reqErr("tool_choice", "Tool choice 'required' must be specified with 'tools' parameter.")
		}
		return nil
	}
	var tc struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return reqErr("tool_choice", "Invalid type for 'tool_choice': expected a string or an object.")
	}
	if isWebSearch(tc.Type) && !chat {
		if !offersWebSearch(p.tools) {
			return reqErr("tool_choice", "Tool choice '%s' not found in 'tools' parameter.", tc.Type)
		}
		p.policy, p.forced = toolPolicyRequired, hostedPrefix+tc.Type
		return nil
	}
	if tc.Type == "function" {
		name := tc.Name
		if chat && tc.Function != nil {
			name = tc.Function.Name
		}
		if name == "" {
			return reqErr("tool_choice.name", "Missing required parameter: 'tool_choice.name'.")
		}
		found := false
		for _, t := range p.tools {
			found = found || t.Name == name
		}
		if !found {
			return reqErr("tool_choice", "Tool choice '%s' not found in 'tools' parameter.", name)
		}
		p.policy, p.forced = toolPolicyRequired, name
	}
	return nil
}

// strictJSON decodes one JSON object; trailing data is an error.
func strictJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return reqErr("", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)")
	}
	if dec.More() {
		return reqErr("", "We could not parse the JSON body of your request: trailing data.")
	}
	return nil
}

// asRequestError extracts a requestError.
func asRequestError(err error) (*requestError, bool) {
	var re *requestError
	ok := errors.As(err, &re)
	return re, ok
}
