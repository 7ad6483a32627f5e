package mls

import (
	"crypto/ecdsa"
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// ExternalSender is RFC 9420 §12.1.8.1, the body of DAVE op 25:
//
//	struct { SignaturePublicKey signature_key<V>; Credential credential; } ExternalSender;
type ExternalSender struct {
	SignatureKey []byte
	Credential   Credential
}

// AppendTo appends the serialized ExternalSender.
func (e *ExternalSender) AppendTo(b []byte) []byte {
	b = tls.AppendVec(b, e.SignatureKey)
	return e.Credential.appendTo(b)
}

func (e *ExternalSender) decode(r *tls.Reader) {
	e.SignatureKey = r.Vec()
	e.Credential.decode(r)
}

// UnmarshalExternalSender parses one ExternalSender (the op 25 payload).
// The result aliases b.
func UnmarshalExternalSender(b []byte) (*ExternalSender, error) {
	r := tls.NewReader(b)
	e := new(ExternalSender)
	e.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: external sender: %w", err)
	}
	if _, err := ParseSignaturePublicKey(e.SignatureKey); err != nil {
		return nil, fmt.Errorf("mls: external sender: %w", err)
	}
	return e, nil
}

// ExternalSendersExtension returns the external_senders group context
// extension holding senders.
func ExternalSendersExtension(senders ...ExternalSender) Extension {
	data := tls.AppendNested(nil, func(b []byte) []byte {
		for i := range senders {
			b = senders[i].AppendTo(b)
		}
		return b
	})
	return Extension{Type: ExtensionExternalSenders, Data: data}
}

func decodeExternalSenders(data []byte) ([]ExternalSender, error) {
	r := tls.NewReader(data)
	s := r.Sub()
	var out []ExternalSender
	for s.Len() > 0 && s.Err() == nil {
		var e ExternalSender
		e.decode(s)
		out = append(out, e)
	}
	r.Join(s)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: external_senders extension: %w", err)
	}
	return out, nil
}

// NewExternalProposal builds the MLSMessage (PublicMessage) carrying
// proposal p from external sender index senderIndex, signed with sig over
// FramedContentTBS without a group context (RFC 9420 §6.1). This is what the
// DAVE voice gateway sends in op 27. It returns the message and its
// ProposalRef (used by op 27 revokes).
func NewExternalProposal(groupID []byte, epoch uint64, senderIndex uint32, p *Proposal, sig *ecdsa.PrivateKey) (msg, ref []byte, err error) {
	pm := &PublicMessage{Content: FramedContent{
		GroupID: groupID, Epoch: epoch, Sender: Sender{Type: SenderExternal, Index: senderIndex},
		AuthenticatedData: []byte{}, ContentType: ContentProposal, Proposal: p,
	}}
	if err := pm.Sign(sig, nil); err != nil {
		return nil, nil, fmt.Errorf("mls: external proposal: %w", err)
	}
	m := &MLSMessage{Version: ProtocolVersion, WireFormat: WireFormatPublicMessage, Public: pm}
	return m.AppendTo(nil), pm.ProposalRef(), nil
}

// CommitInfo is what a relay (the DAVE voice gateway) needs to know about a
// commit: its epoch, committer and the proposals it covers.
type CommitInfo struct {
	GroupID   []byte
	Epoch     uint64
	Committer uint32
	Refs      [][]byte    // proposals by reference
	Inline    []*Proposal // inline proposals
	HasPath   bool
}

// InspectCommit parses an MLSMessage commit without verifying it.
func InspectCommit(b []byte) (*CommitInfo, error) {
	m, err := UnmarshalMLSMessage(b)
	if err != nil {
		return nil, err
	}
	if m.Public == nil || m.Public.Content.ContentType != ContentCommit || m.Public.Content.Sender.Type != SenderMember {
		return nil, fmt.Errorf("mls: inspect commit: not a member commit")
	}
	c := &m.Public.Content
	ci := &CommitInfo{GroupID: c.GroupID, Epoch: c.Epoch, Committer: c.Sender.Index, HasPath: c.Commit.Path != nil}
	for _, p := range c.Commit.Proposals {
		if p.Proposal != nil {
			ci.Inline = append(ci.Inline, p.Proposal)
		} else {
			ci.Refs = append(ci.Refs, p.Ref)
		}
	}
	return ci, nil
}

// WelcomeRecipients returns the KeyPackageRefs a Welcome is addressed to.
func WelcomeRecipients(b []byte) ([][]byte, error) {
	w, err := UnmarshalWelcome(b)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(w.Secrets))
	for i := range w.Secrets {
		out[i] = w.Secrets[i].NewMember
	}
	return out, nil
}
