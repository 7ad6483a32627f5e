package voice

import (
	"errors"
	"fmt"

	"github.com/banterbot/banter/discord/voice/gateway"
)

// CloseError is why a voice connection ended on a close code it does not
// resume from. Action tells the owner what to do (see gateway.CloseAction).
type CloseError struct {
	Code   gateway.CloseCode
	Reason string
}

// Error implements error.
func (e *CloseError) Error() string {
	msg := fmt.Sprintf("voice: closed by server: %v (%v)", e.Code, e.Code.Action())
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Code.Action() == gateway.ActionClientBug {
		msg += " [client bug: check the payloads banter sends]"
	}
	return msg
}

// Action returns what the owner should do next.
func (e *CloseError) Action() gateway.CloseAction { return e.Code.Action() }

// ErrClosed is returned by operations on a connection closed with Close.
var ErrClosed = errors.New("voice: connection closed")

var (
	errHandshakeTimeout = errors.New("voice: handshake timed out")
	errConcurrentSend   = errors.New("voice: SendOpus called concurrently")
	errResumeFailed     = errors.New("voice: resume failed")
)
