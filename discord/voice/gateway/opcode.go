// Package gateway encodes and decodes voice gateway v8 messages: the JSON
// envelope, the binary frames DAVE uses, typed payloads and the close codes
// with the action each calls for. It has no I/O.
//
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#voice
// https://discord.com/developers/docs/topics/voice-connections
package gateway

import "fmt"

// Opcode is a voice gateway opcode. Op 0 is Identify on the wire, so the
// package uses OpUnknown (-1) as "no opcode" instead of the zero value.
type Opcode int

// Voice gateway opcodes (v8).
const (
	OpUnknown                     Opcode = -1
	OpIdentify                    Opcode = 0
	OpSelectProtocol              Opcode = 1
	OpReady                       Opcode = 2
	OpHeartbeat                   Opcode = 3
	OpSessionDescription          Opcode = 4
	OpSpeaking                    Opcode = 5
	OpHeartbeatACK                Opcode = 6
	OpResume                      Opcode = 7
	OpHello                       Opcode = 8
	OpResumed                     Opcode = 9
	OpClientsConnect              Opcode = 11
	OpClientDisconnect            Opcode = 13
	OpDAVEPrepareTransition       Opcode = 21
	OpDAVEExecuteTransition       Opcode = 22
	OpDAVETransitionReady         Opcode = 23
	OpDAVEPrepareEpoch            Opcode = 24
	OpMLSExternalSender           Opcode = 25
	OpMLSKeyPackage               Opcode = 26
	OpMLSProposals                Opcode = 27
	OpMLSCommitWelcome            Opcode = 28
	OpMLSAnnounceCommitTransition Opcode = 29
	OpMLSWelcome                  Opcode = 30
	OpMLSInvalidCommitWelcome     Opcode = 31
)

// String returns the opcode's name, or "Opcode(n)".
func (o Opcode) String() string {
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
	case OpMLSAnnounceCommitTransition:
		return "MLSAnnounceCommitTransition"
	case OpMLSWelcome:
		return "MLSWelcome"
	case OpMLSInvalidCommitWelcome:
		return "MLSInvalidCommitWelcome"
	default:
		return fmt.Sprintf("Opcode(%d)", int(o))
	}
}

// IsDAVE reports whether o is one of the DAVE opcodes 21–31, which the
// voice connection hands to its E2EE session.
func (o Opcode) IsDAVE() bool { return o >= 21 && o <= 31 }
