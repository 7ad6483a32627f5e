package gateway

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// NoSeq is the Seq of a message that carries no sequence number, and the
// seq_ack to send when none has been received.
const NoSeq = -1

var errMalformed = errors.New("gateway: malformed message")

// Message is one decoded server message, JSON or binary.
//
// JSON (text frames): {"op": N, "d": ..., "seq": S}; "seq" is present on
// messages the server may replay after a resume (API "Buffered Resume").
//
// Binary frames from the server (API "Binary Websocket Messages"):
//
//	| seq u16 BE | opcode u8 | payload ... |
//
// Both kinds of seq count toward seq_ack.
type Message struct {
	Op     Opcode
	Seq    int             // NoSeq if absent
	Data   json.RawMessage // the "d" field of a JSON message
	Binary bool
	// Payload is the bytes after the opcode of a binary message.
	Payload []byte
}

// DecodeText decodes a JSON server message. Data aliases b.
func DecodeText(b []byte) (Message, error) {
	var env struct {
		Op   *int            `json:"op"`
		Data json.RawMessage `json:"d"`
		Seq  *int            `json:"seq"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return Message{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if env.Op == nil {
		return Message{}, fmt.Errorf("%w: no op", errMalformed)
	}
	m := Message{Op: Opcode(*env.Op), Seq: NoSeq, Data: env.Data}
	if env.Seq != nil {
		if *env.Seq < 0 {
			return Message{}, fmt.Errorf("%w: seq %d", errMalformed, *env.Seq)
		}
		m.Seq = *env.Seq
	}
	return m, nil
}

// DecodeBinary decodes a binary server message. Payload aliases b.
func DecodeBinary(b []byte) (Message, error) {
	if len(b) < 3 {
		return Message{}, fmt.Errorf("%w: binary frame of %d bytes", errMalformed, len(b))
	}
	return Message{
		Op:      Opcode(b[2]),
		Seq:     int(binary.BigEndian.Uint16(b)),
		Binary:  true,
		Payload: b[3:],
	}, nil
}

// AppendBinaryEvent appends a server→client binary frame (seq, op, payload)
// to b. The simulator and tests use it; clients send AppendBinaryCommand.
func AppendBinaryEvent(b []byte, seq uint16, op Opcode, payload []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, seq)
	b = append(b, byte(op))
	return append(b, payload...)
}

// AppendBinaryCommand appends a client→server binary frame to b:
//
//	| opcode u8 | payload ... |
func AppendBinaryCommand(b []byte, op Opcode, payload []byte) []byte {
	return append(append(b, byte(op)), payload...)
}

// EncodeCommand encodes a JSON client message {"op": op, "d": d}.
func EncodeCommand(op Opcode, d any) ([]byte, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("gateway: encode %v: %w", op, err)
	}
	return json.Marshal(struct {
		Op   Opcode          `json:"op"`
		Data json.RawMessage `json:"d"`
	}{op, data})
}

// EncodeEvent encodes a JSON server message, with "seq" when seq ≥ 0.
func EncodeEvent(op Opcode, seq int, d any) ([]byte, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("gateway: encode %v: %w", op, err)
	}
	env := struct {
		Op   Opcode          `json:"op"`
		Data json.RawMessage `json:"d"`
		Seq  *int            `json:"seq,omitempty"`
	}{Op: op, Data: data}
	if seq >= 0 {
		env.Seq = &seq
	}
	return json.Marshal(env)
}

// Decode unmarshals the message's JSON data into v.
func (m Message) Decode(v any) error {
	if m.Binary {
		return fmt.Errorf("gateway: decode %v: binary message", m.Op)
	}
	if len(m.Data) == 0 || bytes.Equal(m.Data, []byte("null")) {
		return fmt.Errorf("gateway: decode %v: %w: no data", m.Op, errMalformed)
	}
	if err := json.Unmarshal(m.Data, v); err != nil {
		return fmt.Errorf("gateway: decode %v: %w: %w", m.Op, errMalformed, err)
	}
	return nil
}
