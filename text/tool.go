package text

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/banterbot/banter/llm"
)

// The send_discord_message tool is the text pipeline's own: the reply model answers through it
// (mode, target, text), and this file owns its schema and the parsing of its untrusted
// arguments. llm only carries tools and raw calls.

// sendMessageToolName is the function tool the reply model answers through.
const sendMessageToolName = "send_discord_message"

// sendMessageTool is the tool as offered to the model. Its schema is strict-mode compatible
// (every property required, a nullable target, no additional properties).
var sendMessageTool = llm.Tool{
	Name: sendMessageToolName,
	Description: "Send your message to the chat. " +
		"mode \"reply\" answers one specific message (set target_message_id to one of the message ids shown); " +
		"mode \"broadcast\" posts to the channel (target_message_id null).",
	Parameters: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"mode": map[string]any{
				"type":        "string",
				"enum":        []any{"reply", "broadcast"},
				"description": "reply: answer the message in target_message_id; broadcast: post to the channel.",
			},
			"target_message_id": map[string]any{
				"type":        []any{"string", "null"},
				"description": "Id of the message to reply to (one of the ids shown), or null for broadcast.",
			},
			"text": map[string]any{
				"type":        "string",
				"description": "The message text, in character.",
			},
		},
		"required":             []any{"mode", "target_message_id", "text"},
		"additionalProperties": false,
	},
	Strict: true,
}

// sendMode is the send_discord_message mode. The zero value is sendModeUnknown.
type sendMode uint8

const (
	sendModeUnknown sendMode = iota
	sendModeReply
	sendModeBroadcast
)

func (m sendMode) String() string {
	switch m {
	case sendModeReply:
		return "reply"
	case sendModeBroadcast:
		return "broadcast"
	}
	return "unknown"
}

// sendArgs are the parsed arguments of a send_discord_message call.
type sendArgs struct {
	Mode sendMode
	// TargetMessageID is empty for null. Only its shape is checked here; whether it names a
	// message that was shown is the dispatch stage's check.
	TargetMessageID string
	Text            string
}

// toolCallError reports unusable tool-call arguments; reason is the metric label
// (banter_text_invalid_tool_calls_total). Whatever could be parsed is returned next to it, so
// that the caller can fall back (broadcast the text).
type toolCallError struct {
	reason string // unknown_tool, not_json, bad_mode, bad_target, missing_text, reply_without_target, bad_query
	detail string
}

func (e *toolCallError) Error() string {
	if e.detail == "" {
		return "text: invalid tool call: " + e.reason
	}
	return "text: invalid tool call: " + e.reason + ": " + e.detail
}

// maxTargetIDLen bounds a message id; real ids are at most 20 digits.
const maxTargetIDLen = 64

// parseSendArgs parses and validates send_discord_message arguments as the model produced them
// (untrusted). On failure it returns a *toolCallError together with every field it could read.
// Lenient where it is safe: mode is case-insensitive, an empty target means null, and an
// integer target (a model forgetting the quotes) is taken digit for digit.
func parseSendArgs(raw string) (sendArgs, error) {
	var args sendArgs
	var fields struct {
		Mode   json.RawMessage `json:"mode"`
		Target json.RawMessage `json:"target_message_id"`
		Text   json.RawMessage `json:"text"`
	}
	if err := decodeObject(raw, &fields); err != nil {
		return args, err
	}

	// Text first so that it survives other errors for the caller's fallback.
	var textErr error
	var text string
	if len(fields.Text) == 0 || json.Unmarshal(fields.Text, &text) != nil {
		textErr = &toolCallError{reason: "missing_text", detail: "text must be a string"}
	} else if args.Text = strings.TrimSpace(text); args.Text == "" {
		textErr = &toolCallError{reason: "missing_text", detail: "text is empty"}
	}

	var mode string
	if len(fields.Mode) == 0 || json.Unmarshal(fields.Mode, &mode) != nil {
		return args, &toolCallError{reason: "bad_mode", detail: "mode must be a string"}
	}
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "reply":
		args.Mode = sendModeReply
	case "broadcast":
		args.Mode = sendModeBroadcast
	default:
		return args, &toolCallError{reason: "bad_mode", detail: fmt.Sprintf("mode %.32q", mode)}
	}

	target, err := parseMessageID(fields.Target)
	if err != nil {
		return args, err
	}
	args.TargetMessageID = target
	if textErr != nil {
		return args, textErr
	}
	if args.Mode == sendModeReply && args.TargetMessageID == "" {
		return args, &toolCallError{reason: "reply_without_target"}
	}
	return args, nil
}

// decodeObject unmarshals raw tool arguments that must be a JSON object.
func decodeObject(raw string, into any) error {
	trimmed := bytes.TrimSpace([]byte(raw))
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &toolCallError{reason: "not_json", detail: "not an object"}
	}
	if err := json.Unmarshal(trimmed, into); err != nil {
		return &toolCallError{reason: "not_json", detail: err.Error()}
	}
	return nil
}

// parseMessageID reads a message id argument: a string, an unquoted integer, or null ("").
func parseMessageID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", &toolCallError{reason: "bad_target", detail: err.Error()}
		}
		s = strings.TrimSpace(s)
		if strings.EqualFold(s, "null") {
			return "", nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s = string(raw)
		if _, err := strconv.ParseUint(s, 10, 64); err != nil {
			return "", &toolCallError{reason: "bad_target", detail: fmt.Sprintf("number %.32s", s)}
		}
	default:
		return "", &toolCallError{reason: "bad_target", detail: "must be a string or null"}
	}
	if len(s) > maxTargetIDLen {
		return "", &toolCallError{reason: "bad_target", detail: fmt.Sprintf("id of %d bytes", len(s))}
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "", &toolCallError{reason: "bad_target", detail: fmt.Sprintf("id %.32q", s)}
		}
	}
	return s, nil
}

// answerKind says what the reply model's answer is.
type answerKind uint8

const (
	answerText        answerKind = iota // free text (possibly empty or [SKIP]); Stage B decides
	answerSend                          // a valid send_discord_message call
	answerInvalidSend                   // a tool call that cannot be used as is; send holds what parsed
)

// modelAnswer is a model result read by the text pipeline: the first send_discord_message
// call (or the first call at all, if none is one), validated.
type modelAnswer struct {
	kind answerKind
	send sendArgs
	err  *toolCallError
	// extra counts the calls after the one used (a model should make one).
	extra int
}

// readAnswer reads the reply model's result. Calls of tools the pipeline offered for other
// purposes are skipped (lookups: the caller reads them itself); any other tool is unknown.
func readAnswer(res *llm.Result, other func(name string) bool) modelAnswer {
	var a modelAnswer
	var first *llm.ToolCall
	for i := range res.ToolCalls {
		c := &res.ToolCalls[i]
		if other != nil && other(c.Name) {
			continue
		}
		if first != nil {
			a.extra++
			continue
		}
		first = c
	}
	if first == nil {
		return a
	}
	a.kind = answerSend
	var err error
	if first.Name != sendMessageToolName {
		err = &toolCallError{reason: "unknown_tool", detail: fmt.Sprintf("%.64q", first.Name)}
	} else {
		a.send, err = parseSendArgs(first.Arguments)
	}
	if err != nil {
		a.kind = answerInvalidSend
		a.err = err.(*toolCallError)
	}
	return a
}
