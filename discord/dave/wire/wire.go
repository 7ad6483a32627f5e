// Package wire holds the DAVE voice gateway messages (ops 4, 11, 13 and
// 21–31; DAVE whitepaper §"Voice Gateway Opcodes"): typed opcodes, the JSON
// payloads and the binary payload codecs. It has no state and no I/O; the
// client session (discord/dave) and the gateway's external sender
// (discord/dave/extsender) both use it.
package wire

import (
	"errors"
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// Opcode is a voice gateway opcode handled by DAVE.
type Opcode int

// Voice gateway opcodes relevant to DAVE (Discord voice docs, "Voice
// Opcodes"; WP §"Voice Gateway Opcodes").
const (
	OpUnknown                     Opcode = -1
	OpSessionDescription          Opcode = 4
	OpClientsConnect              Opcode = 11
	OpClientDisconnect            Opcode = 13
	OpPrepareTransition           Opcode = 21
	OpExecuteTransition           Opcode = 22
	OpTransitionReady             Opcode = 23
	OpPrepareEpoch                Opcode = 24
	OpMLSExternalSender           Opcode = 25
	OpMLSKeyPackage               Opcode = 26
	OpMLSProposals                Opcode = 27
	OpMLSCommitWelcome            Opcode = 28
	OpMLSAnnounceCommitTransition Opcode = 29
	OpMLSWelcome                  Opcode = 30
	OpMLSInvalidCommitWelcome     Opcode = 31
)

// String names the opcode.
func (o Opcode) String() string {
	switch o {
	case OpSessionDescription:
		return "SessionDescription"
	case OpClientsConnect:
		return "ClientsConnect"
	case OpClientDisconnect:
		return "ClientDisconnect"
	case OpPrepareTransition:
		return "DAVEPrepareTransition"
	case OpExecuteTransition:
		return "DAVEExecuteTransition"
	case OpTransitionReady:
		return "DAVETransitionReady"
	case OpPrepareEpoch:
		return "DAVEPrepareEpoch"
	case OpMLSExternalSender:
		return "MLSExternalSender"
	case OpMLSKeyPackage:
		return "MLSKeyPackage"
	case OpMLSProposals:
		return "MLSProposals"
	case OpMLSCommitWelcome:
		return "MLSCommitWelcome"
	case OpMLSAnnounceCommitTransition:
		return "MLSAnnounceCommitTransition"
	case OpMLSWelcome:
		return "MLSWelcome"
	case OpMLSInvalidCommitWelcome:
		return "MLSInvalidCommitWelcome"
	}
	return fmt.Sprintf("Opcode(%d)", int(o))
}

var errPayload = errors.New("wire: malformed payload")

// JSON payloads (WP §"Voice Gateway Opcodes").

// SessionDescriptionEvent is the DAVE part of Op 4.
type SessionDescriptionEvent struct {
	DAVEProtocolVersion int `json:"dave_protocol_version"`
}

// ClientsConnectEvent is Op 11.
type ClientsConnectEvent struct {
	UserIDs []string `json:"user_ids"`
}

// ClientDisconnectEvent is Op 13.
type ClientDisconnectEvent struct {
	UserID string `json:"user_id"`
}

// PrepareTransitionEvent is Op 21.
type PrepareTransitionEvent struct {
	TransitionID    uint16 `json:"transition_id"`
	ProtocolVersion int    `json:"protocol_version"`
}

// ExecuteTransitionEvent is Op 22.
type ExecuteTransitionEvent struct {
	TransitionID uint16 `json:"transition_id"`
}

// TransitionReadyCommand is Op 23.
type TransitionReadyCommand struct {
	TransitionID uint16 `json:"transition_id"`
}

// PrepareEpochEvent is Op 24.
type PrepareEpochEvent struct {
	Epoch           uint64 `json:"epoch"`
	ProtocolVersion int    `json:"protocol_version"`
}

// InvalidCommitWelcomeCommand is Op 31.
type InvalidCommitWelcomeCommand struct {
	TransitionID uint16 `json:"transition_id"`
}

// Binary payloads. Each is the bytes after the opcode byte (and after the
// server's u16 sequence number).

// ProposalsOp is the operation byte of Op 27.
type ProposalsOp uint8

// Op 27 operations.
const (
	ProposalsAppend ProposalsOp = 0
	ProposalsRevoke ProposalsOp = 1
)

// ProposalsEvent is Op 27:
//
//	u8 operation (0 append, 1 revoke)
//	append: MLSMessage proposal_messages<V>  (concatenated)
//	revoke: ProposalRef proposal_refs<V>     (each opaque<V>)
type ProposalsEvent struct {
	Op       ProposalsOp
	Messages []*mls.MLSMessage // append
	Raw      [][]byte          // append: the serialized messages
	Refs     [][]byte          // revoke
}

// Unmarshal parses an Op 27 payload. Slices alias b.
func (e *ProposalsEvent) Unmarshal(b []byte) error {
	*e = ProposalsEvent{}
	r := tls.NewReader(b)
	e.Op = ProposalsOp(r.U8())
	s := r.Sub()
	switch e.Op {
	case ProposalsAppend:
		for s.Len() > 0 && s.Err() == nil {
			start := s.Rest()
			m := mls.DecodeMLSMessage(s)
			if s.Err() == nil {
				e.Messages = append(e.Messages, m)
				e.Raw = append(e.Raw, start[:len(start)-s.Len()])
			}
		}
	case ProposalsRevoke:
		for s.Len() > 0 && s.Err() == nil {
			e.Refs = append(e.Refs, s.Vec())
		}
	default:
		return fmt.Errorf("%w: op 27 operation %d", errPayload, e.Op)
	}
	r.Join(s)
	if err := r.Done(); err != nil {
		return fmt.Errorf("%w: op 27: %w", errPayload, err)
	}
	return nil
}

// AppendTo appends the Op 27 payload (used by the gateway side).
func (e *ProposalsEvent) AppendTo(b []byte) []byte {
	b = append(b, byte(e.Op))
	return tls.AppendNested(b, func(b []byte) []byte {
		if e.Op == ProposalsAppend {
			for _, m := range e.Raw {
				b = append(b, m...)
			}
			return b
		}
		for _, r := range e.Refs {
			b = tls.AppendVec(b, r)
		}
		return b
	})
}

// TransitionMessage is Op 29 (commit) and Op 30 (welcome):
//
//	u16 transition_id
//	Op 29: MLSMessage commit | Op 30: Welcome (bare)
type TransitionMessage struct {
	TransitionID uint16
	Message      []byte
}

// Unmarshal parses an Op 29 or 30 payload. Message aliases b.
func (t *TransitionMessage) Unmarshal(b []byte) error {
	if len(b) < 3 {
		return fmt.Errorf("%w: transition message of %d bytes", errPayload, len(b))
	}
	t.TransitionID = uint16(b[0])<<8 | uint16(b[1])
	t.Message = b[2:]
	return nil
}

// AppendTo appends the payload.
func (t *TransitionMessage) AppendTo(b []byte) []byte {
	return append(tls.AppendU16(b, t.TransitionID), t.Message...)
}

// CommitWelcomeCommand is Op 28: MLSMessage commit || [Welcome].
type CommitWelcomeCommand struct {
	Commit  []byte
	Welcome []byte // nil when the commit adds nobody
}

// Unmarshal parses an Op 28 payload (the gateway side). Slices alias b.
func (c *CommitWelcomeCommand) Unmarshal(b []byte) error {
	r := tls.NewReader(b)
	m := mls.DecodeMLSMessage(r)
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: op 28 commit: %w", errPayload, err)
	}
	if m.Public == nil || m.Public.Content.ContentType != mls.ContentCommit {
		return fmt.Errorf("%w: op 28: not a commit", errPayload)
	}
	c.Commit = b[:len(b)-r.Len()]
	c.Welcome = nil
	if r.Len() > 0 {
		if _, err := mls.UnmarshalWelcome(r.Rest()); err != nil {
			return fmt.Errorf("%w: op 28 welcome: %w", errPayload, err)
		}
		c.Welcome = r.Rest()
	}
	return nil
}

// AppendTo appends the payload.
func (c *CommitWelcomeCommand) AppendTo(b []byte) []byte {
	return append(append(b, c.Commit...), c.Welcome...)
}
