package gemini

import (
	"fmt"
	"strings"
)

// Close codes the Live API is seen to use. Google publishes no table; these come from issue
// threads (shared/reference/gemini-live.md §1.7).
//
//	1000 normal      the connection limit (after goAway), or our own close
//	1006 abnormal    no close frame: the socket dropped
//	1007 invalid     "Request contains an invalid argument." — the request was malformed
//	1008 policy      "models/X is not found …", "BidiGenerateContent session not found",
//	                 "The operation was aborted" (e.g. audio during a pending blocking tool call)
//	1011 internal    "Internal error occurred.", "The service is currently unavailable."

// Action is what a client does after a close.
type Action int

const (
	// ActionUnknown is the zero value.
	ActionUnknown Action = iota
	// ActionResume reconnects with the last resumption handle (the conversation is kept).
	ActionResume
	// ActionRestart reconnects without a handle (the server lost the session): the client
	// restores what it can of the conversation itself.
	ActionRestart
	// ActionGiveUp stops: retrying would fail the same way (a bad model, a malformed request).
	ActionGiveUp
)

// String names the action for logs and metrics.
func (a Action) String() string {
	switch a {
	case ActionResume:
		return "resume"
	case ActionRestart:
		return "restart"
	case ActionGiveUp:
		return "give_up"
	default:
		return "unknown"
	}
}

// CloseError is a Live connection closed by the server (or dropped: 1006).
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("gemini: closed %d %q: %s", e.Code, e.Reason, e.Explain())
}

// Action classifies the close.
func (e *CloseError) Action() Action {
	switch {
	case e.Code == 1008 && strings.Contains(e.Reason, "session not found"):
		return ActionRestart
	case e.Code == 1007, e.Code == 1008 && strings.Contains(e.Reason, "not found"):
		return ActionGiveUp
	case e.Code == 1008 && strings.Contains(e.Reason, "aborted"):
		return ActionResume // a pending-call abort or a proxy's cut: the session itself is fine
	case e.Code == 1008:
		return ActionGiveUp
	default: // 1000, 1001, 1006, 1011 and anything else: transient
		return ActionResume
	}
}

// Explain says what the close means for an operator.
func (e *CloseError) Explain() string {
	switch {
	case e.Code == 1007:
		return "the API refused a request as invalid (an unsupported setting, or a banter bug); not retried"
	case e.Code == 1008 && strings.Contains(e.Reason, "session not found"):
		return "the resumption handle expired or is unknown; a new session starts from banter's summary"
	case e.Code == 1008 && strings.Contains(e.Reason, "not found"):
		return "the model is not available to this key for the Live API; check voice.geminiRealtime.model"
	case e.Code == 1008 && strings.Contains(e.Reason, "aborted"):
		return "the server aborted the operation (audio during a pending tool call, or a proxy timeout); resumed"
	case e.Code == 1008:
		return "the API refused by policy; not retried"
	case e.Code == 1011:
		return "a server-side error (internal, unavailable, or quota); retried with back-off"
	case e.Code == 1000 || e.Code == 1001:
		return "the connection ended (its time limit); resumed"
	default:
		return "the connection dropped; resumed"
	}
}
