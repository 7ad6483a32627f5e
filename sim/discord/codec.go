package discordsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Gateway payloads: the codec, with no I/O. Clients are untrusted; every
// decode error maps to a close code (DecodeError 4002, UnknownOpcode 4001).
// https://discord.com/developers/docs/topics/gateway-events#payload-structure
//
//	{"op": <int>, "d": <any>, "s": <int|null>, "t": <string|null>}

// Opcode is a gateway opcode.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway-gateway-opcodes
type Opcode int

// Gateway opcodes.
const (
	OpDispatch            Opcode = 0
	OpHeartbeat           Opcode = 1
	OpIdentify            Opcode = 2
	OpPresenceUpdate      Opcode = 3
	OpVoiceStateUpdate    Opcode = 4
	OpResume              Opcode = 6
	OpReconnect           Opcode = 7
	OpRequestGuildMembers Opcode = 8
	OpInvalidSession      Opcode = 9
	OpHello               Opcode = 10
	OpHeartbeatACK        Opcode = 11
	opUnknown             Opcode = -1
)

// String names the opcode.
func (o Opcode) String() string {
	switch o {
	case OpDispatch:
		return "Dispatch"
	case OpHeartbeat:
		return "Heartbeat"
	case OpIdentify:
		return "Identify"
	case OpPresenceUpdate:
		return "PresenceUpdate"
	case OpVoiceStateUpdate:
		return "VoiceStateUpdate"
	case OpResume:
		return "Resume"
	case OpReconnect:
		return "Reconnect"
	case OpRequestGuildMembers:
		return "RequestGuildMembers"
	case OpInvalidSession:
		return "InvalidSession"
	case OpHello:
		return "Hello"
	case OpHeartbeatACK:
		return "HeartbeatACK"
	}
	return fmt.Sprintf("Opcode(%d)", int(o))
}

// Intents is the gateway intents bit set.
// https://discord.com/developers/docs/events/gateway#gateway-intents
type Intents int64

// Intents the simulator checks.
const (
	IntentGuilds                Intents = 1 << 0
	IntentGuildMembers          Intents = 1 << 1
	IntentGuildVoiceStates      Intents = 1 << 7
	IntentGuildPresences        Intents = 1 << 8
	IntentGuildMessages         Intents = 1 << 9
	IntentGuildMessageReactions Intents = 1 << 10
	IntentGuildMessageTyping    Intents = 1 << 11
	IntentDirectMessages        Intents = 1 << 12
	IntentDirectMessageTyping   Intents = 1 << 14
	IntentMessageContent        Intents = 1 << 15
	intentsAll                  Intents = 1<<26 - 1
)

// CloseCode is a WebSocket close code: the gateway's 4000-4014, or a
// standard one (1000, 1006, 1012) seen from a client.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway-gateway-close-event-codes
type CloseCode int

// Gateway close codes.
const (
	CloseUnknownError         CloseCode = 4000
	CloseUnknownOpcode        CloseCode = 4001
	CloseDecodeError          CloseCode = 4002
	CloseNotAuthenticated     CloseCode = 4003
	CloseAuthenticationFailed CloseCode = 4004
	CloseAlreadyAuthenticated CloseCode = 4005
	CloseInvalidSeq           CloseCode = 4007
	CloseSessionTimedOut      CloseCode = 4009
	CloseInvalidShard         CloseCode = 4010
	CloseInvalidAPIVersion    CloseCode = 4012
	CloseInvalidIntents       CloseCode = 4013
	CloseDisallowedIntents    CloseCode = 4014
)

// clientPayload is a decoded frame from a client. Exactly one of the
// command pointers is set for the opcodes that carry one.
type clientPayload struct {
	Op        Opcode
	Heartbeat *int64 // op 1: last sequence, nil for null
	Identify  *identifyCommand
	Resume    *resumeCommand
	Voice     *voiceStateCommand
	Members   *requestMembersCommand
}

// identifyCommand is Op 2.
// https://discord.com/developers/docs/events/gateway-events#identify
type identifyCommand struct {
	Token          string          `json:"token"`
	Properties     json.RawMessage `json:"properties"`
	Compress       bool            `json:"compress"`
	LargeThreshold int             `json:"large_threshold"`
	Shard          []int           `json:"shard"`
	Presence       json.RawMessage `json:"presence"`
	Intents        *Intents        `json:"intents"`
}

// resumeCommand is Op 6.
// https://discord.com/developers/docs/events/gateway-events#resume
type resumeCommand struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Seq       int64  `json:"seq"`
}

// voiceStateCommand is Op 4.
// https://discord.com/developers/docs/events/gateway-events#update-voice-state
type voiceStateCommand struct {
	GuildID   GuildID    `json:"guild_id"`
	ChannelID *ChannelID `json:"channel_id"`
	SelfMute  bool       `json:"self_mute"`
	SelfDeaf  bool       `json:"self_deaf"`
}

// requestMembersCommand is Op 8.
type requestMembersCommand struct {
	GuildID json.RawMessage `json:"guild_id"` // a string or an array of strings
	Query   *string         `json:"query"`
	Limit   int             `json:"limit"`
	UserIDs json.RawMessage `json:"user_ids"`
	Nonce   string          `json:"nonce"`
}

// String names the close code.
func (c CloseCode) String() string {
	switch c {
	case 0:
		return "none"
	case 1000:
		return "normal"
	case 1006:
		return "abnormal"
	case 1012:
		return "service restart"
	case CloseUnknownError:
		return "unknown error"
	case CloseUnknownOpcode:
		return "unknown opcode"
	case CloseDecodeError:
		return "decode error"
	case CloseNotAuthenticated:
		return "not authenticated"
	case CloseAuthenticationFailed:
		return "authentication failed"
	case CloseAlreadyAuthenticated:
		return "already authenticated"
	case CloseInvalidSeq:
		return "invalid seq"
	case CloseSessionTimedOut:
		return "session timed out"
	case CloseInvalidShard:
		return "invalid shard"
	case CloseInvalidAPIVersion:
		return "invalid API version"
	case CloseInvalidIntents:
		return "invalid intents"
	case CloseDisallowedIntents:
		return "disallowed intents"
	}
	return fmt.Sprintf("CloseCode(%d)", int(c))
}

// codecError carries the close code a decode failure earns.
type codecError struct {
	Code CloseCode
	Err  error
}

func (e *codecError) Error() string {
	return fmt.Sprintf("gateway payload (close %d): %v", e.Code, e.Err)
}
func (e *codecError) Unwrap() error { return e.Err }

var errEmptyData = errors.New("missing d")

// decodeClientPayload parses one client frame (JSON text, a trailing
// newline allowed). The result holds no references to data.
func decodeClientPayload(data []byte) (clientPayload, error) {
	var raw struct {
		Op *Opcode         `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if !json.Valid(data) {
		return clientPayload{Op: opUnknown}, &codecError{CloseDecodeError, errors.New("invalid JSON")}
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return clientPayload{Op: opUnknown}, &codecError{CloseDecodeError, err}
	}
	if raw.Op == nil {
		return clientPayload{Op: opUnknown}, &codecError{CloseDecodeError, errors.New("missing op")}
	}
	p := clientPayload{Op: *raw.Op}
	isNull := len(raw.D) == 0 || string(raw.D) == "null"
	decodeD := func(v any) error {
		if isNull {
			return &codecError{CloseDecodeError, fmt.Errorf("%v: %w", p.Op, errEmptyData)}
		}
		if err := json.Unmarshal(raw.D, v); err != nil {
			return &codecError{CloseDecodeError, fmt.Errorf("%v: %w", p.Op, err)}
		}
		return nil
	}
	switch p.Op {
	case OpHeartbeat:
		if !isNull {
			var n int64
			if err := json.Unmarshal(raw.D, &n); err != nil {
				return p, &codecError{CloseDecodeError, fmt.Errorf("heartbeat: %w", err)}
			}
			p.Heartbeat = &n
		}
	case OpIdentify:
		p.Identify = new(identifyCommand)
		if err := decodeD(p.Identify); err != nil {
			return p, err
		}
		p.Identify.Token = stripBotPrefix(p.Identify.Token)
		if p.Identify.Token == "" {
			return p, &codecError{CloseAuthenticationFailed, errors.New("identify: empty token")}
		}
	case OpResume:
		p.Resume = new(resumeCommand)
		if err := decodeD(p.Resume); err != nil {
			return p, err
		}
		p.Resume.Token = stripBotPrefix(p.Resume.Token)
	case OpVoiceStateUpdate:
		p.Voice = new(voiceStateCommand)
		if err := decodeD(p.Voice); err != nil {
			return p, err
		}
		if p.Voice.GuildID == "" {
			return p, &codecError{CloseDecodeError, errors.New("voice state update: missing guild_id")}
		}
	case OpRequestGuildMembers:
		p.Members = new(requestMembersCommand)
		if err := decodeD(p.Members); err != nil {
			return p, err
		}
	case OpPresenceUpdate:
		// Accepted and ignored: presences are not simulated.
	default:
		return p, &codecError{CloseUnknownOpcode, fmt.Errorf("unknown opcode %d", int(p.Op))}
	}
	return p, nil
}

// stripBotPrefix removes an optional "Bot " prefix (discordgo sends it in
// Identify and Resume; discord.js does not).
func stripBotPrefix(t string) string {
	t = strings.TrimSpace(t)
	if len(t) > 4 && strings.EqualFold(t[:4], "bot ") {
		return strings.TrimSpace(t[4:])
	}
	return t
}

// serverPayload is a frame the server sends.
type serverPayload struct {
	Op Opcode  `json:"op"`
	D  any     `json:"d"`
	S  *int64  `json:"s"`
	T  *string `json:"t"`
}

// encodeDispatch renders an op 0 frame.
func encodeDispatch(seq int64, t string, d any) ([]byte, error) {
	b, err := json.Marshal(serverPayload{Op: OpDispatch, D: d, S: &seq, T: &t})
	if err != nil {
		return nil, fmt.Errorf("discordsim: encode %s: %w", t, err)
	}
	return b, nil
}

// encodeOp renders a non-dispatch frame.
func encodeOp(op Opcode, d any) []byte {
	b, err := json.Marshal(serverPayload{Op: op, D: d})
	if err != nil {
		panic(fmt.Sprintf("discordsim: encode %v: %v", op, err)) // only fixed shapes are encoded here
	}
	return b
}
