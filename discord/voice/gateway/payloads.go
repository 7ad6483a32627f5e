package gateway

import "fmt"

// IdentifyCommand is Op 0, sent on WS open.
// https://discord.com/developers/docs/topics/voice-connections#establishing-a-voice-websocket-connection
type IdentifyCommand struct {
	ServerID  string `json:"server_id"`
	UserID    string `json:"user_id"`
	SessionID string `json:"session_id"`
	Token     string `json:"token"`
	// MaxDAVEProtocolVersion is 0 without E2EE (Discord then closes 4017
	// where DAVE is required) and 1 with discord/dave.
	MaxDAVEProtocolVersion int `json:"max_dave_protocol_version"`
}

// SelectProtocolCommand is Op 1, sent after IP discovery.
type SelectProtocolCommand struct {
	Protocol string             `json:"protocol"` // "udp"
	Data     SelectProtocolData `json:"data"`
}

// SelectProtocolData is the "data" of Op 1.
type SelectProtocolData struct {
	Address string `json:"address"`
	Port    uint16 `json:"port"`
	Mode    string `json:"mode"`
}

// ReadyEvent is Op 2. Its heartbeat_interval is bogus and ignored.
type ReadyEvent struct {
	SSRC  uint32   `json:"ssrc"`
	IP    string   `json:"ip"`
	Port  uint16   `json:"port"`
	Modes []string `json:"modes"`
}

// HeartbeatCommand is Op 3 (v8: with seq_ack).
type HeartbeatCommand struct {
	T      int64 `json:"t"`
	SeqAck int   `json:"seq_ack"`
}

// SessionDescriptionEvent is Op 4. Extra fields (audio_codec, media_session_id…)
// are ignored.
type SessionDescriptionEvent struct {
	Mode                string `json:"mode"`
	SecretKey           []int  `json:"secret_key"`
	DAVEProtocolVersion int    `json:"dave_protocol_version"`
}

// Key returns the 32-byte secret key, validating the JSON int array.
func (e *SessionDescriptionEvent) Key() ([]byte, error) {
	if len(e.SecretKey) != 32 {
		return nil, fmt.Errorf("gateway: session description: secret_key has %d entries, want 32", len(e.SecretKey))
	}
	k := make([]byte, 32)
	for i, v := range e.SecretKey {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("gateway: session description: secret_key[%d] = %d", i, v)
		}
		k[i] = byte(v)
	}
	return k, nil
}

// SpeakingFlags is the speaking bitmask of Op 5.
type SpeakingFlags int

// Speaking modes.
const (
	SpeakingMicrophone SpeakingFlags = 1 << 0
	SpeakingSoundshare SpeakingFlags = 1 << 1
	SpeakingPriority   SpeakingFlags = 1 << 2
)

// SpeakingCommand is Op 5 as the client sends it; required before audio.
type SpeakingCommand struct {
	Speaking SpeakingFlags `json:"speaking"`
	Delay    int           `json:"delay"`
	SSRC     uint32        `json:"ssrc"`
}

// SpeakingEvent is Op 5 as the server sends it: the only source of the
// SSRC → user mapping.
type SpeakingEvent struct {
	UserID   string        `json:"user_id"`
	SSRC     uint32        `json:"ssrc"`
	Speaking SpeakingFlags `json:"speaking"`
}

// HeartbeatACKEvent is Op 6.
type HeartbeatACKEvent struct {
	T int64 `json:"t"`
}

// ResumeCommand is Op 7 (v8: with seq_ack).
type ResumeCommand struct {
	ServerID  string `json:"server_id"`
	SessionID string `json:"session_id"`
	Token     string `json:"token"`
	SeqAck    int    `json:"seq_ack"`
}

// HelloEvent is Op 8. The interval is in milliseconds and may be fractional.
type HelloEvent struct {
	HeartbeatInterval float64 `json:"heartbeat_interval"`
}

// ClientsConnectEvent is Op 11.
type ClientsConnectEvent struct {
	UserIDs []string `json:"user_ids"`
}

// ClientDisconnectEvent is Op 13.
type ClientDisconnectEvent struct {
	UserID string `json:"user_id"`
}

// OutboundMessage is a message an end-to-end encryption session (DAVE) asks
// the voice connection to send: a JSON command (Data is the "d" value, already
// JSON-encoded) or a binary command (Payload follows the opcode byte).
type OutboundMessage struct {
	Op      Opcode
	Binary  bool
	Data    []byte
	Payload []byte
}
