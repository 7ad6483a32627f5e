package llm

import (
	"strconv"
)

// Tool is a function tool offered to the model: a name, what it does, and the JSON schema of
// its arguments. What the tools mean, and how their arguments are read, is the caller's
// business; the client only sends them and returns the calls the model made.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments object.
	Parameters map[string]any
	// Strict asks the provider to hold the arguments to the schema (OpenAI's strict mode: every
	// property required, no additional properties).
	Strict bool
}

// HostedTool is a tool the provider runs itself, such as its web search. The zero value is
// HostedUnknown.
type HostedTool uint8

// Hosted tools.
const (
	HostedUnknown HostedTool = iota
	// HostedWebSearch is the Responses API's web_search tool: the model searches the web and
	// answers with what it found (Result.Citations). Chat completions offer no hosted tools.
	HostedWebSearch
)

// String returns the wire spelling ("web_search").
func (h HostedTool) String() string {
	if h == HostedWebSearch {
		return "web_search"
	}
	return "HostedTool(" + strconv.Itoa(int(h)) + ")"
}

// ToolChoice says whether the model must call a tool. The zero value is ToolChoiceAuto.
type ToolChoice uint8

// Tool choices.
const (
	// ToolChoiceAuto lets the model answer in text or call tools.
	ToolChoiceAuto ToolChoice = iota
	// ToolChoiceRequired makes it call at least one tool.
	ToolChoiceRequired
)

// String returns the wire spelling ("auto", "required").
func (c ToolChoice) String() string {
	if c == ToolChoiceRequired {
		return "required"
	}
	return "auto"
}

// ToolCall is a function call as the model emitted it. Arguments are raw and untrusted: the
// caller parses and validates them.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// HostedCall is one call of a hosted tool the provider ran while answering (a web search).
type HostedCall struct {
	Tool HostedTool
	// Status is the provider's ("completed", "failed", …).
	Status string
	// Query is what was searched for, when the provider says.
	Query string
}

// Citation is a source the answer cites (a web search result).
type Citation struct {
	URL   string
	Title string
}
