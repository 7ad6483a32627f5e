package mls

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/hpke"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
)

// Group is one member's view of an MLS group in one epoch. A Group is
// immutable once built: ProcessCommit and Commit return a new Group and
// leave the receiver untouched, so a failed commit loses nothing. The
// proposal queue (AddProposal, Revoke) is the only mutable part. A Group
// is not safe for concurrent use.
type Group struct {
	ctx       GroupContext
	ctxBytes  []byte
	tree      *Tree
	secrets   *EpochSecrets
	interim   []byte
	confTag   []byte
	me        uint32
	sig       *ecdsa.PrivateKey
	priv      privateKeys
	extSender []ExternalSender

	queue []queuedProposal
}

type queuedProposal struct {
	ref      []byte
	proposal *Proposal
	sender   Sender
}

var (
	errEpoch       = errors.New("mls: wrong epoch")
	errGroupID     = errors.New("mls: wrong group id")
	errUnknownRef  = errors.New("mls: unknown proposal reference")
	errMembership  = errors.New("mls: invalid membership tag")
	errConfirm     = errors.New("mls: invalid confirmation tag")
	errUnsupported = errors.New("mls: unsupported proposal")
)

// ErrRemoved is returned by ProcessCommit when the commit removes us.
var ErrRemoved = errors.New("mls: own leaf was removed")

// KeyPackagePrivate holds the private keys behind a KeyPackage.
type KeyPackagePrivate struct {
	Init       hpke.PrivateKey
	Encryption hpke.PrivateKey
	Signature  *ecdsa.PrivateKey
}

// NewKeyPackage builds and signs a KeyPackage with a basic credential
// holding identity and DAVE's capabilities and infinite lifetime (WP §MLS).
func NewKeyPackage(identity []byte, sig *ecdsa.PrivateKey) (*KeyPackage, *KeyPackagePrivate, error) {
	initKey, err := GenerateHPKEKey()
	if err != nil {
		return nil, nil, err
	}
	encKey, err := GenerateHPKEKey()
	if err != nil {
		return nil, nil, err
	}
	kp := &KeyPackage{
		Version:     ProtocolVersion,
		CipherSuite: CipherSuite,
		InitKey:     initKey.PublicKey().Bytes(),
		LeafNode: LeafNode{
			EncryptionKey: encKey.PublicKey().Bytes(),
			SignatureKey:  SignaturePublicKey(sig),
			Credential:    Credential{Type: CredentialBasic, Identity: slices.Clone(identity)},
			Capabilities: Capabilities{
				Versions:     []uint16{ProtocolVersion},
				CipherSuites: []uint16{CipherSuite},
				Credentials:  []uint16{uint16(CredentialBasic)},
			},
			Source:    SourceKeyPackage,
			NotBefore: 0,
			NotAfter:  ^uint64(0),
		},
	}
	kp.LeafNode.Signature, err = SignWithLabel(sig, "LeafNodeTBS", kp.LeafNode.tbs(nil, 0))
	if err != nil {
		return nil, nil, err
	}
	kp.Signature, err = SignWithLabel(sig, "KeyPackageTBS", kp.appendContent(nil))
	if err != nil {
		return nil, nil, err
	}
	return kp, &KeyPackagePrivate{Init: initKey, Encryption: encKey, Signature: sig}, nil
}

// NewGroup creates a one-member group at epoch 0 (RFC 9420 §11) with the
// given group context extensions.
func NewGroup(groupID []byte, kp *KeyPackage, kpp *KeyPackagePrivate, exts []Extension) (*Group, error) {
	t := &Tree{nodes: []*Node{{Leaf: &kp.LeafNode}}}
	g := &Group{
		ctx: GroupContext{
			Version: ProtocolVersion, CipherSuite: CipherSuite, GroupID: slices.Clone(groupID),
			TreeHash: t.TreeHash(), ConfirmedTranscriptHash: []byte{}, Extensions: exts,
		},
		tree: t,
		sig:  kpp.Signature,
		priv: privateKeys{0: kpp.Encryption},
	}
	if err := g.loadExtensions(); err != nil {
		return nil, err
	}
	epoch := make([]byte, HashSize)
	if _, err := rand.Read(epoch); err != nil {
		return nil, fmt.Errorf("mls: new group: %w", err)
	}
	g.secrets = secretsFromEpoch(epoch)
	g.confTag = MAC(g.secrets.Confirmation, g.ctx.ConfirmedTranscriptHash)
	g.interim = interimTranscriptHash(g.ctx.ConfirmedTranscriptHash, g.confTag)
	g.ctxBytes = g.ctx.AppendTo(nil)
	return g, nil
}

func (g *Group) loadExtensions() error {
	g.extSender = nil
	if data, ok := findExtension(g.ctx.Extensions, ExtensionExternalSenders); ok {
		s, err := decodeExternalSenders(data)
		if err != nil {
			return err
		}
		g.extSender = s
	}
	return nil
}

// Epoch is the current epoch number.
func (g *Group) Epoch() uint64 { return g.ctx.Epoch }

// GroupID returns the group id (do not modify).
func (g *Group) GroupID() []byte { return g.ctx.GroupID }

// OwnLeaf is our leaf index.
func (g *Group) OwnLeaf() uint32 { return g.me }

// EpochAuthenticator is the epoch_authenticator secret (RFC 9420 §8.7).
func (g *Group) EpochAuthenticator() []byte { return g.secrets.Authenticator }

// Export is the MLS exporter of the current epoch.
func (g *Group) Export(label string, context []byte, length int) []byte {
	return g.secrets.Export(label, context, length)
}

// ExternalSenders returns the group's external senders (do not modify).
func (g *Group) ExternalSenders() []ExternalSender { return g.extSender }

// Tree returns the ratchet tree (do not modify).
func (g *Group) Tree() *Tree { return g.tree }

// Members returns the credential identities of all non-blank leaves, by leaf index.
func (g *Group) Members() map[uint32][]byte {
	m := map[uint32][]byte{}
	for i := uint32(0); i < g.tree.LeafCount(); i++ {
		if l := g.tree.Leaf(i); l != nil {
			m[i] = l.Credential.Identity
		}
	}
	return m
}

// PendingProposals is the number of queued proposals.
func (g *Group) PendingProposals() int { return len(g.queue) }

// AddProposal validates a proposal message for the current epoch and
// queues it, returning its ProposalRef. Member senders are checked with
// the group context and membership tag; external senders with the
// external_senders key and no context (RFC 9420 §6.1, §12.1.8.1).
func (g *Group) AddProposal(m *MLSMessage) ([]byte, error) {
	if m.WireFormat != WireFormatPublicMessage || m.Public == nil {
		return nil, fmt.Errorf("mls: proposal: wire format %d", m.WireFormat)
	}
	p := m.Public
	c := &p.Content
	if c.ContentType != ContentProposal {
		return nil, fmt.Errorf("mls: proposal: content %s", c.ContentType)
	}
	if err := g.checkFraming(p); err != nil {
		return nil, fmt.Errorf("mls: proposal: %w", err)
	}
	switch c.Proposal.Type {
	case ProposalAdd:
		if err := c.Proposal.KeyPackage.Verify(); err != nil {
			return nil, fmt.Errorf("mls: proposal: %w", err)
		}
	case ProposalRemove:
		if g.tree.Leaf(c.Proposal.Removed) == nil {
			return nil, fmt.Errorf("mls: proposal: remove of blank leaf %d", c.Proposal.Removed)
		}
	default:
		return nil, fmt.Errorf("%w: %s", errUnsupported, c.Proposal.Type)
	}
	ref := p.ProposalRef()
	g.queue = append(g.queue, queuedProposal{ref: ref, proposal: c.Proposal, sender: c.Sender})
	return ref, nil
}

// Revoke removes a queued proposal by reference.
func (g *Group) Revoke(ref []byte) error {
	i := slices.IndexFunc(g.queue, func(q queuedProposal) bool { return string(q.ref) == string(ref) })
	if i < 0 {
		return fmt.Errorf("%w: %x", errUnknownRef, ref)
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	return nil
}

// ClearProposals drops the proposal queue.
func (g *Group) ClearProposals() { g.queue = nil }

// checkFraming checks group, epoch, signature and membership tag.
func (g *Group) checkFraming(p *PublicMessage) error {
	c := &p.Content
	if string(c.GroupID) != string(g.ctx.GroupID) {
		return errGroupID
	}
	if c.Epoch != g.ctx.Epoch {
		return fmt.Errorf("%w: %d, current %d", errEpoch, c.Epoch, g.ctx.Epoch)
	}
	switch c.Sender.Type {
	case SenderMember:
		l := g.tree.Leaf(c.Sender.Index)
		if l == nil {
			return fmt.Errorf("mls: sender leaf %d is blank", c.Sender.Index)
		}
		if err := p.VerifySignature(l.SignatureKey, g.ctxBytes); err != nil {
			return err
		}
		if !hmacEqual(p.membershipTagFor(g.secrets.Membership, g.ctxBytes), p.MembershipTag) {
			return errMembership
		}
	case SenderExternal:
		if c.ContentType != ContentProposal || int(c.Sender.Index) >= len(g.extSender) {
			return fmt.Errorf("mls: bad external sender %d", c.Sender.Index)
		}
		if err := p.VerifySignature(g.extSender[c.Sender.Index].SignatureKey, nil); err != nil {
			return err
		}
	default:
		return fmt.Errorf("mls: unsupported sender type %d", c.Sender.Type)
	}
	return nil
}

func hmacEqual(a, b []byte) bool {
	return len(a) == len(b) && cipherEqual(a, b)
}

// groupInfoAEAD returns the AES-128-GCM used to protect the GroupInfo.
func groupInfoAEAD(welcomeSecret []byte) (cipher.AEAD, []byte, error) {
	key, nonce := welcomeKeyNonce(welcomeSecret)
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, nil, err
	}
	gcm, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, nil, err
	}
	return gcm, nonce, nil
}
