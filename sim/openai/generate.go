package openaisim

import (
	"strings"
	"unicode"
)

// plan is the assistant output decided for one generation request.
type plan struct {
	text    string
	refusal string
	calls   []ToolCall
	search  *searchPlan // a hosted web search run before the message
}

// toolPolicy is how tool_choice constrains the output.
type toolPolicy int

const (
	toolPolicyAuto     toolPolicy = iota // model decides
	toolPolicyNone                       // "none": never call tools
	toolPolicyRequired                   // "required" or a named function
)

// makePlan turns an outcome into output. Default (no rule): echo the last
// user input, or say the text it asks to be read aloud (readAloud); when
// tool_choice forces a tool, call it with "{}" (or, for
// the hosted web search, search for the last user input). A scripted web
// search runs only when the request offers the tool.
func (s *Server) makePlan(o *outcome, lastUser string, tools []Tool, policy toolPolicy, forced string) plan {
	var p plan
	if o.rule != "" {
		p.text = o.text()
		p.refusal = o.reply.Refusal
		for _, c := range o.reply.ToolCalls {
			if c.CallID == "" {
				c.CallID = s.newID("call")
			}
			p.calls = append(p.calls, c)
		}
		if ws := o.reply.WebSearch; ws != nil && offersWebSearch(tools) {
			p.search = &searchPlan{query: ws.Query, results: ws.Results}
			if p.search.query == "" {
				p.search.query = lastUser
			}
		}
	}
	if policy == toolPolicyNone {
		p.calls, p.search = nil, nil
	}
	if policy == toolPolicyRequired && p.search == nil && len(p.calls) == 0 && (isWebSearch(strings.TrimPrefix(forced, hostedPrefix)) || (forced == "" && onlyHosted(tools))) {
		p.search = defaultSearch(lastUser)
	}
	if p.text == "" && p.refusal == "" && len(p.calls) == 0 {
		switch {
		case p.search != nil:
			p.text = "Here is what I found about " + p.search.query + "."
		case policy == toolPolicyRequired && forced != "":
			p.calls = []ToolCall{{Name: forced, Arguments: "{}", CallID: s.newID("call")}}
		case policy == toolPolicyRequired && firstFunction(tools) != "":
			p.calls = []ToolCall{{Name: firstFunction(tools), Arguments: "{}", CallID: s.newID("call")}}
		default:
			if say, ok := readAloud(lastUser); ok {
				p.text = say // a request to voice text: the text, as a model says it
			} else {
				p.text = defaultText(lastUser)
			}
		}
	}
	return p
}

// hostedPrefix marks a hosted tool type forced by tool_choice ({"type":
// "web_search"}), apart from a function's name.
const hostedPrefix = "hosted:"

// firstFunction is the name of the first function tool offered, or "".
func firstFunction(tools []Tool) string {
	for _, t := range tools {
		if t.Type == "function" && t.Name != "" {
			return t.Name
		}
	}
	return ""
}

// onlyHosted reports whether the tools offered include a web search and
// no function.
func onlyHosted(tools []Tool) bool { return offersWebSearch(tools) && firstFunction(tools) == "" }

func defaultText(lastUser string) string {
	lastUser = strings.TrimSpace(lastUser)
	if lastUser == "" {
		return "Hello from the OpenAI simulator."
	}
	if r := []rune(lastUser); len(r) > 200 {
		lastUser = string(r[:200]) + "…"
	}
	return "You said: " + lastUser
}

// tokens splits text into streaming pieces the way a tokenizer roughly
// would: each piece is leading whitespace plus a word, and punctuation runs
// are split from words. Concatenating the pieces gives back text.
func tokens(text string) []string {
	var out []string
	start := 0
	prevClass := -1
	for i, r := range text {
		c := runeClass(r)
		if i > start && c != prevClass && !(prevClass == 0 && c != 0) {
			out = append(out, text[start:i])
			start = i
		}
		prevClass = c
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// runeClass: 0 space, 1 word, 2 punctuation/other.
func runeClass(r rune) int {
	switch {
	case unicode.IsSpace(r):
		return 0
	case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '_':
		return 1
	default:
		return 2
	}
}

// countTokens approximates a token count (at least 1 for non-empty text).
func countTokens(text string) int {
	n := len(tokens(text))
	if n == 0 && text != "" {
		n = 1
	}
	return n
}

// chunkString splits s into pieces of at most n bytes on rune boundaries.
func chunkString(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
