// Package voiceadapter plugs a dave.Session into discord/voice as its E2EE
// implementation, translating opcodes and outbound messages. It holds no
// logic of its own.
package voiceadapter

import (
	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/wire"
	"github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/discord/voice/gateway"
)

// E2EE adapts a *dave.Session to voice.E2EE.
type E2EE struct {
	S *dave.Session
}

var _ voice.E2EE = (*E2EE)(nil)

// New returns the adapter for s.
func New(s *dave.Session) *E2EE { return &E2EE{S: s} }

// MaxProtocolVersion implements voice.E2EE.
func (e *E2EE) MaxProtocolVersion() int { return e.S.MaxProtocolVersion() }

// HandleGateway implements voice.E2EE.
func (e *E2EE) HandleGateway(op gateway.Opcode, payload []byte, binary bool) ([]gateway.OutboundMessage, error) {
	out, err := e.S.HandleGateway(wire.Opcode(op), payload, binary)
	if len(out) == 0 {
		return nil, err
	}
	msgs := make([]gateway.OutboundMessage, len(out))
	for i, o := range out {
		msgs[i] = gateway.OutboundMessage{Op: gateway.Opcode(o.Op), Binary: o.Binary, Data: o.Data, Payload: o.Payload}
	}
	return msgs, err
}

// EncryptOpus implements voice.E2EE. Before the first transition it returns
// dave.ErrNotReady.
func (e *E2EE) EncryptOpus(dst, opus []byte) ([]byte, error) { return e.S.EncryptOpus(dst, opus) }

// DecryptOpus implements voice.E2EE.
func (e *E2EE) DecryptOpus(userID string, dst, frame []byte) ([]byte, error) {
	return e.S.DecryptOpus(userID, dst, frame)
}
