package mls

import (
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// ProposalType is RFC 9420 §17.4.
type ProposalType uint16

// Proposal types. DAVE only uses Add and Remove; the others are parsed so
// that any MLS message round-trips.
const (
	ProposalUnknown                ProposalType = 0
	ProposalAdd                    ProposalType = 1
	ProposalUpdate                 ProposalType = 2
	ProposalRemove                 ProposalType = 3
	ProposalPreSharedKey           ProposalType = 4
	ProposalReInit                 ProposalType = 5
	ProposalExternalInit           ProposalType = 6
	ProposalGroupContextExtensions ProposalType = 7
)

// String names the proposal type.
func (t ProposalType) String() string {
	switch t {
	case ProposalAdd:
		return "add"
	case ProposalUpdate:
		return "update"
	case ProposalRemove:
		return "remove"
	case ProposalPreSharedKey:
		return "psk"
	case ProposalReInit:
		return "reinit"
	case ProposalExternalInit:
		return "external_init"
	case ProposalGroupContextExtensions:
		return "group_context_extensions"
	}
	return fmt.Sprintf("unknown(%d)", uint16(t))
}

// PreSharedKeyID is RFC 9420 §8.4.
type PreSharedKeyID struct {
	PSKType    uint8 // 1 external, 2 resumption
	PSKID      []byte
	Usage      uint8
	PSKGroupID []byte
	PSKEpoch   uint64
	Nonce      []byte
}

func (p *PreSharedKeyID) appendTo(b []byte) []byte {
	b = tls.AppendU8(b, p.PSKType)
	switch p.PSKType {
	case 1:
		b = tls.AppendVec(b, p.PSKID)
	case 2:
		b = tls.AppendU8(b, p.Usage)
		b = tls.AppendVec(b, p.PSKGroupID)
		b = tls.AppendU64(b, p.PSKEpoch)
	}
	return tls.AppendVec(b, p.Nonce)
}

func (p *PreSharedKeyID) decode(r *tls.Reader) {
	p.PSKType = r.U8()
	switch p.PSKType {
	case 1:
		p.PSKID = r.Vec()
	case 2:
		p.Usage = r.U8()
		p.PSKGroupID = r.Vec()
		p.PSKEpoch = r.U64()
	default:
		r.Fail(fmt.Errorf("%w: psk %d", errUnknownType, p.PSKType))
	}
	p.Nonce = r.Vec()
}

// Proposal is RFC 9420 §12.1. Only the field for Type is meaningful.
type Proposal struct {
	Type       ProposalType
	KeyPackage *KeyPackage // Add
	LeafNode   *LeafNode   // Update
	Removed    uint32      // Remove
	PSK        *PreSharedKeyID
	// ReInit
	GroupID     []byte
	Version     uint16
	CipherSuite uint16
	Extensions  []Extension // ReInit, GroupContextExtensions
	KEMOutput   []byte      // ExternalInit
}

// AppendTo appends the serialized Proposal.
func (p *Proposal) AppendTo(b []byte) []byte {
	b = tls.AppendU16(b, uint16(p.Type))
	return p.appendBody(b)
}

func (p *Proposal) appendBody(b []byte) []byte {
	switch p.Type {
	case ProposalAdd:
		b = p.KeyPackage.AppendTo(b)
	case ProposalUpdate:
		b = p.LeafNode.appendTo(b)
	case ProposalRemove:
		b = tls.AppendU32(b, p.Removed)
	case ProposalPreSharedKey:
		b = p.PSK.appendTo(b)
	case ProposalReInit:
		b = tls.AppendVec(b, p.GroupID)
		b = tls.AppendU16(b, p.Version)
		b = tls.AppendU16(b, p.CipherSuite)
		b = appendExtensions(b, p.Extensions)
	case ProposalExternalInit:
		b = tls.AppendVec(b, p.KEMOutput)
	case ProposalGroupContextExtensions:
		b = appendExtensions(b, p.Extensions)
	}
	return b
}

func (p *Proposal) decode(r *tls.Reader) {
	p.Type = ProposalType(r.U16())
	p.decodeBody(r)
}

func (p *Proposal) decodeBody(r *tls.Reader) {
	switch p.Type {
	case ProposalAdd:
		p.KeyPackage = new(KeyPackage)
		p.KeyPackage.decode(r)
	case ProposalUpdate:
		p.LeafNode = new(LeafNode)
		p.LeafNode.decode(r)
	case ProposalRemove:
		p.Removed = r.U32()
	case ProposalPreSharedKey:
		p.PSK = new(PreSharedKeyID)
		p.PSK.decode(r)
	case ProposalReInit:
		p.GroupID = r.Vec()
		p.Version = r.U16()
		p.CipherSuite = r.U16()
		p.Extensions = decodeExtensions(r)
	case ProposalExternalInit:
		p.KEMOutput = r.Vec()
	case ProposalGroupContextExtensions:
		p.Extensions = decodeExtensions(r)
	default:
		r.Fail(fmt.Errorf("%w: proposal %d", errUnknownType, p.Type))
	}
}

// ProposalOrRef is RFC 9420 §12.4: an inline proposal (Type 1) or a
// ProposalRef (Type 2).
type ProposalOrRef struct {
	Proposal *Proposal
	Ref      []byte
}

// Commit is RFC 9420 §12.4.
type Commit struct {
	Proposals []ProposalOrRef
	Path      *UpdatePath
}

// AppendTo appends the serialized Commit.
func (c *Commit) AppendTo(b []byte) []byte {
	b = tls.AppendNested(b, func(b []byte) []byte {
		for _, p := range c.Proposals {
			if p.Proposal != nil {
				b = p.Proposal.AppendTo(append(b, 1))
			} else {
				b = tls.AppendVec(append(b, 2), p.Ref)
			}
		}
		return b
	})
	b = tls.AppendBool(b, c.Path != nil)
	if c.Path != nil {
		b = c.Path.appendTo(b)
	}
	return b
}

func (c *Commit) decode(r *tls.Reader) {
	s := r.Sub()
	for s.Len() > 0 && s.Err() == nil {
		switch t := s.U8(); t {
		case 1:
			p := new(Proposal)
			p.decode(s)
			c.Proposals = append(c.Proposals, ProposalOrRef{Proposal: p})
		case 2:
			c.Proposals = append(c.Proposals, ProposalOrRef{Ref: s.Vec()})
		default:
			s.Fail(fmt.Errorf("%w: proposal_or_ref %d", errUnknownType, t))
		}
	}
	r.Join(s)
	if r.Bool() {
		c.Path = new(UpdatePath)
		c.Path.decode(r)
	}
}

// UnmarshalProposal parses a Proposal. The result aliases b.
func UnmarshalProposal(b []byte) (*Proposal, error) {
	r := tls.NewReader(b)
	p := new(Proposal)
	p.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: proposal: %w", err)
	}
	return p, nil
}
