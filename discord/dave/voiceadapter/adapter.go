// Package voiceadapter plugs a dave.Session into discord/voice as its E2EE
// implementation, translating opcodes and outbound messages, and keeps the
// one timer the session's timeouts need (dave.Session.NextExpiry/Expire):
// a transition whose op 22 never comes, or a Welcome that never comes, is
// acted on after a bounded wait instead of leaving the call without keys.
package voiceadapter

import (
	"sync"
	"time"

	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/wire"
	"github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/discord/voice/gateway"
)

// E2EE adapts a *dave.Session to voice.E2EE (and voice.E2EESender).
type E2EE struct {
	S *dave.Session

	mu    sync.Mutex // guards following
	send  func(gateway.OutboundMessage) error
	timer *time.Timer
}

var (
	_ voice.E2EE       = (*E2EE)(nil)
	_ voice.E2EESender = (*E2EE)(nil)
)

// New returns the adapter for s.
func New(s *dave.Session) *E2EE { return &E2EE{S: s} }

// MaxProtocolVersion implements voice.E2EE.
func (e *E2EE) MaxProtocolVersion() int { return e.S.MaxProtocolVersion() }

// HandleGateway implements voice.E2EE.
func (e *E2EE) HandleGateway(op gateway.Opcode, payload []byte, binary bool) ([]gateway.OutboundMessage, error) {
	out, err := e.S.HandleGateway(wire.Opcode(op), payload, binary)
	e.arm()
	return convert(out), err
}

func convert(out []dave.Outbound) []gateway.OutboundMessage {
	if len(out) == 0 {
		return nil
	}
	msgs := make([]gateway.OutboundMessage, len(out))
	for i, o := range out {
		msgs[i] = gateway.OutboundMessage{Op: gateway.Opcode(o.Op), Binary: o.Binary, Data: o.Data, Payload: o.Payload}
	}
	return msgs
}

// AttachSender implements voice.E2EESender: with a sender the session's
// timeouts are armed; nil (the connection ended) stops them.
func (e *E2EE) AttachSender(send func(gateway.OutboundMessage) error) {
	e.mu.Lock()
	e.send = send
	e.mu.Unlock()
	e.arm()
}

// arm sets the timer to the session's next expiry, or stops it.
func (e *E2EE) arm() {
	d, ok := e.S.NextExpiry()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !ok || e.send == nil {
		if e.timer != nil {
			e.timer.Stop()
		}
		return
	}
	if e.timer == nil {
		e.timer = time.AfterFunc(d, e.expire)
		return
	}
	e.timer.Reset(d)
}

// expire runs on the timer: it lets the session act on what is overdue,
// sends what it says, and re-arms.
func (e *E2EE) expire() {
	out := convert(e.S.Expire())
	e.mu.Lock()
	send := e.send
	e.mu.Unlock()
	if send == nil {
		return // the connection ended meanwhile
	}
	for _, o := range out {
		if err := send(o); err != nil {
			// The socket is down (a resume is under way): the session has
			// already reset and waits for a Welcome again, so its join
			// timeout covers the message lost here.
			break
		}
	}
	e.arm()
}

// EncryptOpus implements voice.E2EE. Before the first transition it returns
// dave.ErrNotReady.
func (e *E2EE) EncryptOpus(dst, opus []byte) ([]byte, error) { return e.S.EncryptOpus(dst, opus) }

// DecryptOpus implements voice.E2EE.
func (e *E2EE) DecryptOpus(userID string, dst, frame []byte) ([]byte, error) {
	return e.S.DecryptOpus(userID, dst, frame)
}
