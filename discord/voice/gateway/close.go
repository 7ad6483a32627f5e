package gateway

import "fmt"

// CloseCode is a voice WebSocket close code.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#voice-voice-close-event-codes
type CloseCode int

// Voice close codes. Codes below 4000 are transport-level (1000, 1001, 1006).
const (
	CloseUnknown              CloseCode = 0
	CloseAbnormal             CloseCode = 1006
	CloseUnknownOpcode        CloseCode = 4001
	CloseDecodeError          CloseCode = 4002
	CloseNotAuthenticated     CloseCode = 4003
	CloseAuthenticationFailed CloseCode = 4004
	CloseAlreadyAuthenticated CloseCode = 4005
	CloseSessionInvalid       CloseCode = 4006
	CloseSessionTimeout       CloseCode = 4009
	CloseServerNotFound       CloseCode = 4011
	CloseUnknownProtocol      CloseCode = 4012
	CloseDisconnected         CloseCode = 4014
	CloseServerCrashed        CloseCode = 4015
	CloseUnknownEncryption    CloseCode = 4016
	CloseDAVERequired         CloseCode = 4017
	CloseBadRequest           CloseCode = 4020
	CloseRateLimited          CloseCode = 4021
	CloseCallTerminated       CloseCode = 4022
)

// String returns "4006 session no longer valid" style text.
func (c CloseCode) String() string {
	var name string
	switch c {
	case CloseAbnormal:
		name = "abnormal closure"
	case CloseUnknownOpcode:
		name = "unknown opcode"
	case CloseDecodeError:
		name = "failed to decode payload"
	case CloseNotAuthenticated:
		name = "not authenticated"
	case CloseAuthenticationFailed:
		name = "authentication failed"
	case CloseAlreadyAuthenticated:
		name = "already authenticated"
	case CloseSessionInvalid:
		name = "session no longer valid"
	case CloseSessionTimeout:
		name = "session timeout"
	case CloseServerNotFound:
		name = "server not found"
	case CloseUnknownProtocol:
		name = "unknown protocol"
	case CloseDisconnected:
		name = "disconnected"
	case CloseServerCrashed:
		name = "voice server crashed"
	case CloseUnknownEncryption:
		name = "unknown encryption mode"
	case CloseDAVERequired:
		name = "E2EE/DAVE protocol required"
	case CloseBadRequest:
		name = "bad request"
	case CloseRateLimited:
		name = "rate limited"
	case CloseCallTerminated:
		name = "call terminated"
	default:
		return fmt.Sprintf("%d", int(c))
	}
	return fmt.Sprintf("%d %s", int(c), name)
}

// CloseAction is what the client does after the voice WS closes.
type CloseAction int

// Actions, per dave-notes §1.6 and the API close-code table.
const (
	ActionUnknown CloseAction = iota
	// ActionResume: open a new WS to the same endpoint and send Op 7 with
	// seq_ack, keeping UDP, key and DAVE state (<4000, 4015).
	ActionResume
	// ActionNewSession: the voice session is gone; send main-gateway op 4
	// again, wait for new state/server updates and Identify (4004, 4006, 4009).
	ActionNewSession
	// ActionBackoff: wait before rejoining (4011 server not found, 4021
	// rate limited).
	ActionBackoff
	// ActionStop: do not reconnect; a later VOICE_SERVER_UPDATE (a move)
	// is a fresh connect (4014, 4022).
	ActionStop
	// ActionClientBug: our bug; report clearly, at most one fresh attempt
	// (4001–4003, 4005, 4012, 4016, 4017, 4020).
	ActionClientBug
)

// String returns the action's name.
func (a CloseAction) String() string {
	switch a {
	case ActionResume:
		return "resume"
	case ActionNewSession:
		return "new-session"
	case ActionBackoff:
		return "backoff"
	case ActionStop:
		return "stop"
	case ActionClientBug:
		return "client-bug"
	default:
		return "unknown"
	}
}

// Action returns what to do after a close with code c.
func (c CloseCode) Action() CloseAction {
	switch {
	case c < 4000 || c == CloseServerCrashed:
		return ActionResume
	case c == CloseAuthenticationFailed || c == CloseSessionInvalid || c == CloseSessionTimeout:
		return ActionNewSession
	case c == CloseServerNotFound || c == CloseRateLimited:
		return ActionBackoff
	case c == CloseDisconnected || c == CloseCallTerminated:
		return ActionStop
	case c == CloseUnknownOpcode, c == CloseDecodeError, c == CloseNotAuthenticated,
		c == CloseAlreadyAuthenticated, c == CloseUnknownProtocol, c == CloseUnknownEncryption,
		c == CloseDAVERequired, c == CloseBadRequest:
		return ActionClientBug
	default:
		// Undocumented 4xxx codes: treat like a lost session rather than loop.
		return ActionNewSession
	}
}
