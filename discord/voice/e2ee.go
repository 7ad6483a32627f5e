package voice

import "github.com/banterbot/banter/discord/voice/gateway"

// E2EE is the DAVE session as the transport sees it (implemented by
// discord/dave). The connection calls it from its WebSocket read goroutine
// (HandleGateway), its UDP read goroutine (DecryptOpus) and the sending
// goroutine (EncryptOpus), so an implementation must be safe for that
// concurrency.
type E2EE interface {
	// MaxProtocolVersion is sent in Identify as max_dave_protocol_version.
	MaxProtocolVersion() int
	// HandleGateway receives ops 21–31 (binary payloads after the opcode
	// byte, or the JSON "d" value) and the JSON "d" of op 4 Session
	// Description, op 11 Clients Connect and op 13 Client Disconnect. It
	// returns the messages to send in order (e.g. op 26 right after op 4).
	HandleGateway(op gateway.Opcode, payload []byte, binary bool) ([]gateway.OutboundMessage, error)
	// EncryptOpus appends the E2EE frame for opus to dst. It is not called
	// for Opus silence frames (F8 FF FE), which are sent unencrypted.
	EncryptOpus(dst, opus []byte) ([]byte, error)
	// DecryptOpus appends the Opus frame carried in frame (sent by userID)
	// to dst. It must pass the silence frame F8 FF FE through.
	DecryptOpus(userID string, dst, frame []byte) ([]byte, error)
}

// E2EESender is implemented by an E2EE that also sends on its own, not only
// in answer to a gateway message (DAVE: acting on a transition that never
// completed). Once the connection is up it calls AttachSender with a
// function that writes to the current WebSocket (it fails while a resume is
// under way); when the connection ends it calls AttachSender(nil), after
// which the E2EE must not send.
type E2EESender interface {
	AttachSender(send func(gateway.OutboundMessage) error)
}
