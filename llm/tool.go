package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// SendMessageToolName is the function tool offered to the text pipeline's
// model when GenerateRequest.SendMessageTool is set.
const SendMessageToolName = "send_discord_message"

const sendMessageToolDescription = "Send your message to the chat. " +
	"mode \"reply\" answers one specific message (set target_message_id to one of the message ids shown); " +
	"mode \"broadcast\" posts to the channel (target_message_id null)."

// sendMessageToolSchema is the JSON schema of the tool's parameters; it is
// strict-mode compatible (every property required, nullable target, no
// additional properties).
func sendMessageToolSchema() map[string]any {
	return map[string]any{
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
	}
}

// SendMode is the send_discord_message mode. The zero value is
// SendModeUnknown.
type SendMode uint8

// Send modes.
const (
	SendModeUnknown SendMode = iota
	SendModeReply
	SendModeBroadcast
)

// String returns the wire spelling ("reply", "broadcast").
func (m SendMode) String() string {
	switch m {
	case SendModeReply:
		return "reply"
	case SendModeBroadcast:
		return "broadcast"
	}
	return "unknown"
}

// SendMessageArgs are the parsed arguments of a send_discord_message call.
type SendMessageArgs struct {
	Mode SendMode
	// TargetMessageID is empty for null. The llm package checks only its
	// shape; whether it names a message that was shown is the caller's check.
	TargetMessageID string
	Text            string
}

// ToolCallReason says why a tool call cannot be used as is. The zero value
// is ToolCallReasonUnknown.
type ToolCallReason uint8

// Tool-call rejection reasons.
const (
	ToolCallReasonUnknown ToolCallReason = iota
	// ToolCallReasonUnknownTool: the model called a tool we did not offer.
	ToolCallReasonUnknownTool
	// ToolCallReasonNotJSON: arguments are not a JSON object (often cut off
	// by the output budget).
	ToolCallReasonNotJSON
	ToolCallReasonBadMode
	ToolCallReasonBadTarget
	ToolCallReasonMissingText
	// ToolCallReasonReplyWithoutTarget: mode reply with a null target.
	ToolCallReasonReplyWithoutTarget
)

var toolCallReasonNames = [...]string{
	ToolCallReasonUnknown:            "unknown",
	ToolCallReasonUnknownTool:        "unknown_tool",
	ToolCallReasonNotJSON:            "not_json",
	ToolCallReasonBadMode:            "bad_mode",
	ToolCallReasonBadTarget:          "bad_target",
	ToolCallReasonMissingText:        "missing_text",
	ToolCallReasonReplyWithoutTarget: "reply_without_target",
}

// String returns the reason's label, e.g. "bad_target".
func (r ToolCallReason) String() string {
	if int(r) < len(toolCallReasonNames) {
		return toolCallReasonNames[r]
	}
	return "ToolCallReason(" + strconv.Itoa(int(r)) + ")"
}

// ToolCallError reports invalid tool-call arguments. Whatever could be
// parsed is still returned next to it, so the caller can fall back (for
// example broadcast the text).
type ToolCallError struct {
	Reason ToolCallReason
	Detail string
}

// Error implements error.
func (e *ToolCallError) Error() string {
	if e.Detail == "" {
		return "llm: invalid tool call: " + e.Reason.String()
	}
	return "llm: invalid tool call: " + e.Reason.String() + ": " + e.Detail
}

// maxTargetIDLen bounds a message id; real ids are at most 20 digits.
const maxTargetIDLen = 64

// ParseSendMessageArgs parses and validates send_discord_message arguments
// as the model produced them (untrusted). On failure it returns a
// *ToolCallError together with every field it could read. Lenient where it
// is safe: mode is case-insensitive, an empty target means null, and an
// integer target (a model forgetting the quotes) is taken digit for digit.
//
// Arguments schema (see sendMessageToolSchema):
//
//	{"mode": "reply"|"broadcast", "target_message_id": string|null, "text": string}
func ParseSendMessageArgs(raw string) (SendMessageArgs, error) {
	var args SendMessageArgs
	var fields struct {
		Mode   json.RawMessage `json:"mode"`
		Target json.RawMessage `json:"target_message_id"`
		Text   json.RawMessage `json:"text"`
	}
	trimmed := bytes.TrimSpace([]byte(raw))
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return args, &ToolCallError{Reason: ToolCallReasonNotJSON, Detail: "not an object"}
	}
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return args, &ToolCallError{Reason: ToolCallReasonNotJSON, Detail: err.Error()}
	}

	// Text first so that it survives other errors for the caller's fallback.
	var textErr error
	var text string
	if len(fields.Text) == 0 || json.Unmarshal(fields.Text, &text) != nil {
		textErr = &ToolCallError{Reason: ToolCallReasonMissingText, Detail: "text must be a string"}
	} else if args.Text = strings.TrimSpace(text); args.Text == "" {
		textErr = &ToolCallError{Reason: ToolCallReasonMissingText, Detail: "text is empty"}
	}

	var mode string
	if len(fields.Mode) == 0 || json.Unmarshal(fields.Mode, &mode) != nil {
		return args, &ToolCallError{Reason: ToolCallReasonBadMode, Detail: "mode must be a string"}
	}
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "reply":
		args.Mode = SendModeReply
	case "broadcast":
		args.Mode = SendModeBroadcast
	default:
		return args, &ToolCallError{Reason: ToolCallReasonBadMode, Detail: fmt.Sprintf("mode %.32q", mode)}
	}

	target, err := parseTarget(fields.Target)
	if err != nil {
		return args, err
	}
	args.TargetMessageID = target
	if textErr != nil {
		return args, textErr
	}
	if args.Mode == SendModeReply && args.TargetMessageID == "" {
		return args, &ToolCallError{Reason: ToolCallReasonReplyWithoutTarget}
	}
	return args, nil
}

func parseTarget(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", &ToolCallError{Reason: ToolCallReasonBadTarget, Detail: err.Error()}
		}
		s = strings.TrimSpace(s)
		if strings.EqualFold(s, "null") {
			return "", nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s = string(raw)
		if _, err := strconv.ParseUint(s, 10, 64); err != nil {
			return "", &ToolCallError{Reason: ToolCallReasonBadTarget, Detail: fmt.Sprintf("number %.32s", s)}
		}
	default:
		return "", &ToolCallError{Reason: ToolCallReasonBadTarget, Detail: "must be a string or null"}
	}
	if len(s) > maxTargetIDLen {
		return "", &ToolCallError{Reason: ToolCallReasonBadTarget, Detail: fmt.Sprintf("id of %d bytes", len(s))}
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "", &ToolCallError{Reason: ToolCallReasonBadTarget, Detail: fmt.Sprintf("id %.32q", s)}
		}
	}
	return s, nil
}
