package voicesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gorilla/websocket"
)

// Op is a voice gateway opcode.
//
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#voice-voice-opcodes
// Opcode 0 is Identify on the wire, so Op has no separate Unknown zero value;
// String reports unlisted opcodes as "Op(N)".
type Op uint8

// Voice gateway opcodes (voice gateway v8 plus the DAVE opcodes 21-31).
const (
	OpIdentify                Op = 0  // client: begin a session
	OpSelectProtocol          Op = 1  // client: UDP address and encryption mode
	OpReady                   Op = 2  // server: ssrc, ip, port, modes
	OpHeartbeat               Op = 3  // client: {t, seq_ack}
	OpSessionDescription      Op = 4  // server: mode, secret_key, dave_protocol_version
	OpSpeaking                Op = 5  // both: speaking flags; server adds user_id (ssrc map)
	OpHeartbeatACK            Op = 6  // server: {t}
	OpResume                  Op = 7  // client: {server_id, session_id, token, seq_ack}
	OpHello                   Op = 8  // server: {heartbeat_interval}
	OpResumed                 Op = 9  // server: null
	OpClientsConnect          Op = 11 // server: {user_ids}
	OpClientDisconnect        Op = 13 // server: {user_id}
	OpDAVEPrepareTransition   Op = 21 // server (JSON)
	OpDAVEExecuteTransition   Op = 22 // server (JSON)
	OpDAVETransitionReady     Op = 23 // client (JSON)
	OpDAVEPrepareEpoch        Op = 24 // server (JSON)
	OpMLSExternalSender       Op = 25 // server (binary)
	OpMLSKeyPackage           Op = 26 // client (binary)
	OpMLSProposals            Op = 27 // server (binary)
	OpMLSCommitWelcome        Op = 28 // client (binary)
	OpMLSAnnounceCommit       Op = 29 // server (binary)
	OpMLSWelcome              Op = 30 // server (binary)
	OpMLSInvalidCommitWelcome Op = 31 // client (JSON)
)

// String returns the opcode's documented name.
func (o Op) String() string {
	switch o {
	case OpIdentify:
		return "Identify"
	case OpSelectProtocol:
		return "SelectProtocol"
	case OpReady:
		return "Ready"
	case OpHeartbeat:
		return "Heartbeat"
	case OpSessionDescription:
		return "SessionDescription"
	case OpSpeaking:
		return "Speaking"
	case OpHeartbeatACK:
		return "HeartbeatACK"
	case OpResume:
		return "Resume"
	case OpHello:
		return "Hello"
	case OpResumed:
		return "Resumed"
	case OpClientsConnect:
		return "ClientsConnect"
	case OpClientDisconnect:
		return "ClientDisconnect"
	case OpDAVEPrepareTransition:
		return "DAVEPrepareTransition"
	case OpDAVEExecuteTransition:
		return "DAVEExecuteTransition"
	case OpDAVETransitionReady:
		return "DAVETransitionReady"
	case OpDAVEPrepareEpoch:
		return "DAVEPrepareEpoch"
	case OpMLSExternalSender:
		return "MLSExternalSender"
	case OpMLSKeyPackage:
		return "MLSKeyPackage"
	case OpMLSProposals:
		return "MLSProposals"
	case OpMLSCommitWelcome:
		return "MLSCommitWelcome"
	case OpMLSAnnounceCommit:
		return "MLSAnnounceCommitTransition"
	case OpMLSWelcome:
		return "MLSWelcome"
	case OpMLSInvalidCommitWelcome:
		return "MLSInvalidCommitWelcome"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// CloseCode is a voice WebSocket close code.
//
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#voice-voice-close-event-codes
type CloseCode int

// Voice close codes. Codes below 4000 are transport codes (RFC 6455).
const (
	CloseUnknown           CloseCode = 0
	CloseNormal            CloseCode = 1000
	CloseUnknownOpcode     CloseCode = 4001
	CloseDecodeError       CloseCode = 4002
	CloseNotAuthenticated  CloseCode = 4003
	CloseAuthFailed        CloseCode = 4004
	CloseAlreadyAuth       CloseCode = 4005
	CloseSessionInvalid    CloseCode = 4006
	CloseSessionTimeout    CloseCode = 4009
	CloseServerNotFound    CloseCode = 4011
	CloseUnknownProtocol   CloseCode = 4012
	CloseDisconnected      CloseCode = 4014
	CloseServerCrashed     CloseCode = 4015
	CloseUnknownEncryption CloseCode = 4016
	CloseDAVERequired      CloseCode = 4017
	CloseBadRequest        CloseCode = 4020
	CloseRateLimited       CloseCode = 4021
	CloseCallTerminated    CloseCode = 4022
)

// String returns the documented description of the close code.
func (c CloseCode) String() string {
	switch c {
	case CloseNormal:
		return "normal"
	case CloseUnknownOpcode:
		return "unknown opcode"
	case CloseDecodeError:
		return "failed to decode payload"
	case CloseNotAuthenticated:
		return "not authenticated"
	case CloseAuthFailed:
		return "authentication failed"
	case CloseAlreadyAuth:
		return "already authenticated"
	case CloseSessionInvalid:
		return "session no longer valid"
	case CloseSessionTimeout:
		return "session timeout"
	case CloseServerNotFound:
		return "server not found"
	case CloseUnknownProtocol:
		return "unknown protocol"
	case CloseDisconnected:
		return "disconnected"
	case CloseServerCrashed:
		return "voice server crashed"
	case CloseUnknownEncryption:
		return "unknown encryption mode"
	case CloseDAVERequired:
		return "E2EE/DAVE protocol required"
	case CloseBadRequest:
		return "bad request"
	case CloseRateLimited:
		return "disconnected: rate limited"
	case CloseCallTerminated:
		return "disconnected: call terminated"
	}
	return "close(" + strconv.Itoa(int(c)) + ")"
}

// Resumable reports whether a client should resume (op 7) after this close code:
// transport codes below 4000 and 4015 (voice server crashed).
func (c CloseCode) Resumable() bool { return c < 4000 || c == CloseServerCrashed }

// clientFrame is one decoded client-to-server WebSocket message.
//
// Text frames are JSON {"op": N, "d": ...}. Binary frames are
// [opcode u8][payload]: the client sends no sequence number
// (https://discord.com/developers/docs/topics/voice-connections#binary-websocket-messages).
type clientFrame struct {
	Op     Op
	Binary bool
	D      json.RawMessage // JSON payload (text frames)
	Body   []byte          // payload after the opcode byte (binary frames); aliases the input
}

var (
	errEmptyFrame = errors.New("empty frame")
	errNoOpcode   = errors.New("missing op")
	errBadOpcode  = errors.New("opcode out of range")
	errFrameType  = errors.New("unsupported frame type")
)

// decodeClientFrame decodes one WebSocket message from a client. The
// returned frame aliases data.
func decodeClientFrame(msgType int, data []byte) (clientFrame, error) {
	switch msgType {
	case websocket.BinaryMessage:
		if len(data) < 1 {
			return clientFrame{}, fmt.Errorf("voicesim: binary frame: %w", errEmptyFrame)
		}
		return clientFrame{Op: Op(data[0]), Binary: true, Body: data[1:]}, nil
	case websocket.TextMessage:
		var raw struct {
			Op *int            `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return clientFrame{}, fmt.Errorf("voicesim: json frame: %w", err)
		}
		if raw.Op == nil {
			return clientFrame{}, fmt.Errorf("voicesim: json frame: %w", errNoOpcode)
		}
		if *raw.Op < 0 || *raw.Op > 255 {
			return clientFrame{}, fmt.Errorf("voicesim: json frame: %w: %d", errBadOpcode, *raw.Op)
		}
		return clientFrame{Op: Op(*raw.Op), D: raw.D}, nil
	default:
		return clientFrame{}, fmt.Errorf("voicesim: %w: %d", errFrameType, msgType)
	}
}

// identifyPayload is the d of op 0 Identify.
type identifyPayload struct {
	ServerID               string `json:"server_id"`
	UserID                 string `json:"user_id"`
	SessionID              string `json:"session_id"`
	Token                  string `json:"token"`
	MaxDAVEProtocolVersion int    `json:"max_dave_protocol_version"`
}

// resumePayload is the d of op 7 Resume.
type resumePayload struct {
	ServerID  string `json:"server_id"`
	SessionID string `json:"session_id"`
	Token     string `json:"token"`
	SeqAck    *int   `json:"seq_ack"`
}

// selectProtocolPayload is the d of op 1 Select Protocol.
type selectProtocolPayload struct {
	Protocol string `json:"protocol"`
	Data     struct {
		Address string `json:"address"`
		Port    int    `json:"port"`
		Mode    string `json:"mode"`
	} `json:"data"`
}

// heartbeatPayload is the d of op 3 Heartbeat (v8: {t, seq_ack}).
type heartbeatPayload struct {
	T      json.RawMessage `json:"t"`
	SeqAck *int            `json:"seq_ack"`
}

// speakingPayload is the d of op 5 Speaking as a client sends it.
type speakingPayload struct {
	Speaking int    `json:"speaking"`
	Delay    int    `json:"delay"`
	SSRC     uint32 `json:"ssrc"`
}

// transitionPayload is the d of ops 23 and 31.
type transitionPayload struct {
	TransitionID int `json:"transition_id"`
}

var (
	errMissingField = errors.New("missing field")
	errNotObject    = errors.New("payload is not an object")
)

// decodePayload unmarshals a JSON payload into v and checks the fields the
// server needs. It returns an error wrapping the reason.
func decodePayload(op Op, d json.RawMessage, v any) error {
	if len(d) == 0 || d[0] != '{' {
		return fmt.Errorf("voicesim: %v payload: %w", op, errNotObject)
	}
	if err := json.Unmarshal(d, v); err != nil {
		return fmt.Errorf("voicesim: %v payload: %w", op, err)
	}
	var missing string
	switch p := v.(type) {
	case *identifyPayload:
		missing = firstEmpty("server_id", p.ServerID, "user_id", p.UserID, "session_id", p.SessionID, "token", p.Token)
	case *resumePayload:
		missing = firstEmpty("server_id", p.ServerID, "session_id", p.SessionID, "token", p.Token)
	case *selectProtocolPayload:
		missing = firstEmpty("protocol", p.Protocol, "data.mode", p.Data.Mode)
	case *heartbeatPayload:
		if len(p.T) == 0 {
			missing = "t"
		}
	}
	if missing != "" {
		return fmt.Errorf("voicesim: %v payload: %w: %s", op, errMissingField, missing)
	}
	return nil
}

func firstEmpty(kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			return kv[i]
		}
	}
	return ""
}

// serverMessage is a JSON server-to-client message. Seq is present only on
// messages that are buffered for resume (voice gateway v8).
type serverMessage struct {
	Op  Op   `json:"op"`
	D   any  `json:"d"`
	Seq *int `json:"seq,omitempty"`
}

// encodeServerJSON marshals a server message; seq < 0 omits the seq field.
func encodeServerJSON(op Op, seq int, d any) []byte {
	m := serverMessage{Op: op, D: d}
	if seq >= 0 {
		m.Seq = &seq
	}
	b, err := json.Marshal(m)
	if err != nil {
		// All payloads are our own plain structs; failure is a programming error.
		panic(fmt.Sprintf("voicesim: marshal op %v: %v", op, err))
	}
	return b
}

// appendServerBinary appends a server-to-client binary frame:
// [seq u16 BE][opcode u8][payload].
func appendServerBinary(dst []byte, seq uint16, op Op, payload []byte) []byte {
	dst = append(dst, byte(seq>>8), byte(seq), byte(op))
	return append(dst, payload...)
}

// Server payloads.

type helloPayload struct {
	HeartbeatInterval float64 `json:"heartbeat_interval"`
}

type readyPayload struct {
	SSRC              uint32   `json:"ssrc"`
	IP                string   `json:"ip"`
	Port              int      `json:"port"`
	Modes             []string `json:"modes"`
	HeartbeatInterval int      `json:"heartbeat_interval"` // Discord sends a bogus value; clients ignore it
}

type sessionDescriptionPayload struct {
	Mode                string  `json:"mode"`
	SecretKey           [32]int `json:"secret_key"`
	DAVEProtocolVersion int     `json:"dave_protocol_version"`
	AudioCodec          string  `json:"audio_codec"`
	VideoCodec          string  `json:"video_codec"`
	MediaSessionID      string  `json:"media_session_id"`
}

type serverSpeakingPayload struct {
	UserID   string `json:"user_id"`
	SSRC     uint32 `json:"ssrc"`
	Speaking int    `json:"speaking"`
}

type clientsConnectPayload struct {
	UserIDs []string `json:"user_ids"`
}

type clientDisconnectPayload struct {
	UserID string `json:"user_id"`
}

type heartbeatACKPayload struct {
	T json.RawMessage `json:"t"`
}
