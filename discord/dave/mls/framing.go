package mls

import (
	"crypto/ecdsa"
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// WireFormat is RFC 9420 §6.
type WireFormat uint16

// Wire formats.
const (
	WireFormatUnknown       WireFormat = 0
	WireFormatPublicMessage WireFormat = 1
	WireFormatPrivate       WireFormat = 2
	WireFormatWelcome       WireFormat = 3
	WireFormatGroupInfo     WireFormat = 4
	WireFormatKeyPackage    WireFormat = 5
)

// SenderType is RFC 9420 §6.
type SenderType uint8

// Sender types.
const (
	SenderUnknown           SenderType = 0
	SenderMember            SenderType = 1
	SenderExternal          SenderType = 2
	SenderNewMemberProposal SenderType = 3
	SenderNewMemberCommit   SenderType = 4
)

// Sender is RFC 9420 §6: Index is the leaf index for members and the
// external_senders index for external senders.
type Sender struct {
	Type  SenderType
	Index uint32
}

// ContentType is RFC 9420 §6.
type ContentType uint8

// Content types.
const (
	ContentUnknown     ContentType = 0
	ContentApplication ContentType = 1
	ContentProposal    ContentType = 2
	ContentCommit      ContentType = 3
)

// String names the content type.
func (c ContentType) String() string {
	switch c {
	case ContentApplication:
		return "application"
	case ContentProposal:
		return "proposal"
	case ContentCommit:
		return "commit"
	}
	return fmt.Sprintf("unknown(%d)", uint8(c))
}

// FramedContent is RFC 9420 §6.
//
//	struct {
//	    opaque group_id<V>; uint64 epoch; Sender sender;
//	    opaque authenticated_data<V>; ContentType content_type;
//	    select (content_type) { application: opaque application_data<V>;
//	        proposal: Proposal; commit: Commit; }
//	} FramedContent;
type FramedContent struct {
	GroupID           []byte
	Epoch             uint64
	Sender            Sender
	AuthenticatedData []byte
	ContentType       ContentType
	ApplicationData   []byte
	Proposal          *Proposal
	Commit            *Commit
}

// AppendTo appends the serialized FramedContent.
func (f *FramedContent) AppendTo(b []byte) []byte {
	b = tls.AppendVec(b, f.GroupID)
	b = tls.AppendU64(b, f.Epoch)
	b = tls.AppendU8(b, uint8(f.Sender.Type))
	switch f.Sender.Type {
	case SenderMember, SenderExternal:
		b = tls.AppendU32(b, f.Sender.Index)
	}
	b = tls.AppendVec(b, f.AuthenticatedData)
	b = tls.AppendU8(b, uint8(f.ContentType))
	switch f.ContentType {
	case ContentApplication:
		b = tls.AppendVec(b, f.ApplicationData)
	case ContentProposal:
		b = f.Proposal.AppendTo(b)
	case ContentCommit:
		b = f.Commit.AppendTo(b)
	}
	return b
}

func (f *FramedContent) decode(r *tls.Reader) {
	f.GroupID = r.Vec()
	f.Epoch = r.U64()
	f.Sender.Type = SenderType(r.U8())
	switch f.Sender.Type {
	case SenderMember, SenderExternal:
		f.Sender.Index = r.U32()
	case SenderNewMemberProposal, SenderNewMemberCommit:
	default:
		r.Fail(fmt.Errorf("%w: sender %d", errUnknownType, f.Sender.Type))
	}
	f.AuthenticatedData = r.Vec()
	f.ContentType = ContentType(r.U8())
	switch f.ContentType {
	case ContentApplication:
		f.ApplicationData = r.Vec()
	case ContentProposal:
		f.Proposal = new(Proposal)
		f.Proposal.decode(r)
	case ContentCommit:
		f.Commit = new(Commit)
		f.Commit.decode(r)
	default:
		r.Fail(fmt.Errorf("%w: content %d", errUnknownType, f.ContentType))
	}
}

// PublicMessage is RFC 9420 §6.2: FramedContent, FramedContentAuthData
// (signature, and confirmation_tag for commits) and the membership tag for
// member senders.
type PublicMessage struct {
	Content         FramedContent
	Signature       []byte
	ConfirmationTag []byte
	MembershipTag   []byte
}

func (p *PublicMessage) appendAuth(b []byte) []byte {
	b = tls.AppendVec(b, p.Signature)
	if p.Content.ContentType == ContentCommit {
		b = tls.AppendVec(b, p.ConfirmationTag)
	}
	return b
}

func (p *PublicMessage) appendTo(b []byte) []byte {
	b = p.Content.AppendTo(b)
	b = p.appendAuth(b)
	if p.Content.Sender.Type == SenderMember {
		b = tls.AppendVec(b, p.MembershipTag)
	}
	return b
}

func (p *PublicMessage) decode(r *tls.Reader) {
	p.Content.decode(r)
	p.Signature = r.Vec()
	if p.Content.ContentType == ContentCommit {
		p.ConfirmationTag = r.Vec()
	}
	if p.Content.Sender.Type == SenderMember {
		p.MembershipTag = r.Vec()
	}
}

// tbs is FramedContentTBS (RFC 9420 §6.1); ctx is the serialized
// GroupContext, included only for member and new-member-commit senders.
func (p *PublicMessage) tbs(ctx []byte) []byte {
	b := tls.AppendU16(nil, ProtocolVersion)
	b = tls.AppendU16(b, uint16(WireFormatPublicMessage))
	b = p.Content.AppendTo(b)
	switch p.Content.Sender.Type {
	case SenderMember, SenderNewMemberCommit:
		b = append(b, ctx...)
	}
	return b
}

// Sign sets the signature over FramedContentTBS.
func (p *PublicMessage) Sign(priv *ecdsa.PrivateKey, ctx []byte) error {
	sig, err := SignWithLabel(priv, "FramedContentTBS", p.tbs(ctx))
	if err != nil {
		return err
	}
	p.Signature = sig
	return nil
}

// VerifySignature checks the signature against the sender's key pub.
func (p *PublicMessage) VerifySignature(pub, ctx []byte) error {
	return VerifyWithLabel(pub, "FramedContentTBS", p.tbs(ctx), p.Signature)
}

// membershipTagFor computes MAC(membership_key, AuthenticatedContentTBM).
func (p *PublicMessage) membershipTagFor(key, ctx []byte) []byte {
	return MAC(key, p.appendAuth(p.tbs(ctx)))
}

// authenticatedContent is RFC 9420 §6.1 AuthenticatedContent.
func (p *PublicMessage) authenticatedContent() []byte {
	b := tls.AppendU16(nil, uint16(WireFormatPublicMessage))
	b = p.Content.AppendTo(b)
	return p.appendAuth(b)
}

// ProposalRef is RFC 9420 §5.2 for a proposal carried in this message.
func (p *PublicMessage) ProposalRef() []byte {
	return RefHash("MLS 1.0 Proposal Reference", p.authenticatedContent())
}

// PrivateMessage is RFC 9420 §6.3. DAVE never uses it; it is parsed only so
// that MLSMessage round-trips.
type PrivateMessage struct {
	GroupID             []byte
	Epoch               uint64
	ContentType         ContentType
	AuthenticatedData   []byte
	EncryptedSenderData []byte
	Ciphertext          []byte
}

// MLSMessage is RFC 9420 §6. Exactly one body field is set per WireFormat.
type MLSMessage struct {
	Version    uint16
	WireFormat WireFormat
	Public     *PublicMessage
	Private    *PrivateMessage
	Welcome    *Welcome
	GroupInfo  *GroupInfo
	KeyPackage *KeyPackage
}

// AppendTo appends the serialized MLSMessage.
func (m *MLSMessage) AppendTo(b []byte) []byte {
	b = tls.AppendU16(b, m.Version)
	b = tls.AppendU16(b, uint16(m.WireFormat))
	switch m.WireFormat {
	case WireFormatPublicMessage:
		b = m.Public.appendTo(b)
	case WireFormatPrivate:
		p := m.Private
		b = tls.AppendVec(b, p.GroupID)
		b = tls.AppendU64(b, p.Epoch)
		b = tls.AppendU8(b, uint8(p.ContentType))
		b = tls.AppendVec(b, p.AuthenticatedData)
		b = tls.AppendVec(b, p.EncryptedSenderData)
		b = tls.AppendVec(b, p.Ciphertext)
	case WireFormatWelcome:
		b = m.Welcome.AppendTo(b)
	case WireFormatGroupInfo:
		b = m.GroupInfo.AppendTo(b)
	case WireFormatKeyPackage:
		b = m.KeyPackage.AppendTo(b)
	}
	return b
}

// DecodeMLSMessage reads one MLSMessage from r (messages may be
// concatenated, as in DAVE op 27).
func DecodeMLSMessage(r *tls.Reader) *MLSMessage {
	m := new(MLSMessage)
	m.Version = r.U16()
	if r.Err() == nil && m.Version != ProtocolVersion {
		r.Fail(fmt.Errorf("%w: version %d", errVersion, m.Version))
	}
	m.WireFormat = WireFormat(r.U16())
	switch m.WireFormat {
	case WireFormatPublicMessage:
		m.Public = new(PublicMessage)
		m.Public.decode(r)
	case WireFormatPrivate:
		p := new(PrivateMessage)
		p.GroupID = r.Vec()
		p.Epoch = r.U64()
		p.ContentType = ContentType(r.U8())
		p.AuthenticatedData = r.Vec()
		p.EncryptedSenderData = r.Vec()
		p.Ciphertext = r.Vec()
		m.Private = p
	case WireFormatWelcome:
		m.Welcome = new(Welcome)
		m.Welcome.decode(r)
	case WireFormatGroupInfo:
		m.GroupInfo = new(GroupInfo)
		m.GroupInfo.decode(r)
	case WireFormatKeyPackage:
		m.KeyPackage = new(KeyPackage)
		m.KeyPackage.decode(r)
	default:
		r.Fail(fmt.Errorf("%w: wire format %d", errUnknownType, m.WireFormat))
	}
	return m
}

// UnmarshalMLSMessage parses exactly one MLSMessage. The result aliases b.
func UnmarshalMLSMessage(b []byte) (*MLSMessage, error) {
	r := tls.NewReader(b)
	m := DecodeMLSMessage(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: message: %w", err)
	}
	return m, nil
}
