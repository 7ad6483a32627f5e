package mls

import (
	"errors"
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// Wire structs of RFC 9420. Every type has appendTo (serialize, append
// style) and decode (from a sticky tls.Reader). Decoded slices alias the
// input buffer; Unmarshal* functions document that.

var (
	errUnknownType = errors.New("mls: unknown type")
	errVersion     = errors.New("mls: unsupported version or cipher suite")
)

// CredentialType is RFC 9420 §5.3.
type CredentialType uint16

// Credential types.
const (
	CredentialUnknown CredentialType = 0
	CredentialBasic   CredentialType = 1
	CredentialX509    CredentialType = 2
)

// Credential is RFC 9420 §5.3. DAVE uses basic credentials whose identity is
// the 8-byte big-endian user id.
type Credential struct {
	Type         CredentialType
	Identity     []byte   // basic
	Certificates [][]byte // x509
}

func (c *Credential) appendTo(b []byte) []byte {
	b = tls.AppendU16(b, uint16(c.Type))
	switch c.Type {
	case CredentialBasic:
		b = tls.AppendVec(b, c.Identity)
	case CredentialX509:
		b = tls.AppendNested(b, func(b []byte) []byte {
			for _, cert := range c.Certificates {
				b = tls.AppendVec(b, cert)
			}
			return b
		})
	}
	return b
}

func (c *Credential) decode(r *tls.Reader) {
	c.Type = CredentialType(r.U16())
	switch c.Type {
	case CredentialBasic:
		c.Identity = r.Vec()
	case CredentialX509:
		s := r.Sub()
		for s.Len() > 0 && s.Err() == nil {
			c.Certificates = append(c.Certificates, s.Vec())
		}
		r.Join(s)
	default:
		r.Fail(fmt.Errorf("%w: credential %d", errUnknownType, c.Type))
	}
}

func appendU16s(b []byte, v []uint16) []byte {
	return tls.AppendNested(b, func(b []byte) []byte {
		for _, x := range v {
			b = tls.AppendU16(b, x)
		}
		return b
	})
}

func decodeU16s(r *tls.Reader) []uint16 {
	s := r.Sub()
	var v []uint16
	for s.Len() > 0 && s.Err() == nil {
		v = append(v, s.U16())
	}
	r.Join(s)
	return v
}

// Capabilities is RFC 9420 §7.2.
type Capabilities struct {
	Versions     []uint16
	CipherSuites []uint16
	Extensions   []uint16
	Proposals    []uint16
	Credentials  []uint16
}

func (c *Capabilities) appendTo(b []byte) []byte {
	b = appendU16s(b, c.Versions)
	b = appendU16s(b, c.CipherSuites)
	b = appendU16s(b, c.Extensions)
	b = appendU16s(b, c.Proposals)
	return appendU16s(b, c.Credentials)
}

func (c *Capabilities) decode(r *tls.Reader) {
	c.Versions = decodeU16s(r)
	c.CipherSuites = decodeU16s(r)
	c.Extensions = decodeU16s(r)
	c.Proposals = decodeU16s(r)
	c.Credentials = decodeU16s(r)
}

// ExtensionType is RFC 9420 §17.3.
type ExtensionType uint16

// Extension types used by DAVE.
const (
	ExtensionRatchetTree     ExtensionType = 2
	ExtensionExternalSenders ExtensionType = 5
)

// Extension is RFC 9420 §13.
type Extension struct {
	Type ExtensionType
	Data []byte
}

func appendExtensions(b []byte, exts []Extension) []byte {
	return tls.AppendNested(b, func(b []byte) []byte {
		for _, e := range exts {
			b = tls.AppendU16(b, uint16(e.Type))
			b = tls.AppendVec(b, e.Data)
		}
		return b
	})
}

func decodeExtensions(r *tls.Reader) []Extension {
	s := r.Sub()
	var exts []Extension
	for s.Len() > 0 && s.Err() == nil {
		exts = append(exts, Extension{Type: ExtensionType(s.U16()), Data: s.Vec()})
	}
	r.Join(s)
	return exts
}

// findExtension returns the data of the extension of type t, or nil.
func findExtension(exts []Extension, t ExtensionType) ([]byte, bool) {
	for _, e := range exts {
		if e.Type == t {
			return e.Data, true
		}
	}
	return nil, false
}

// LeafNodeSource is RFC 9420 §7.2.
type LeafNodeSource uint8

// Leaf node sources.
const (
	SourceKeyPackage LeafNodeSource = 1
	SourceUpdate     LeafNodeSource = 2
	SourceCommit     LeafNodeSource = 3
)

// LeafNode is RFC 9420 §7.2.
type LeafNode struct {
	EncryptionKey []byte
	SignatureKey  []byte
	Credential    Credential
	Capabilities  Capabilities
	Source        LeafNodeSource
	NotBefore     uint64 // Source == SourceKeyPackage
	NotAfter      uint64
	ParentHash    []byte // Source == SourceCommit
	Extensions    []Extension
	Signature     []byte
}

func (l *LeafNode) appendContent(b []byte) []byte {
	b = tls.AppendVec(b, l.EncryptionKey)
	b = tls.AppendVec(b, l.SignatureKey)
	b = l.Credential.appendTo(b)
	b = l.Capabilities.appendTo(b)
	b = tls.AppendU8(b, uint8(l.Source))
	switch l.Source {
	case SourceKeyPackage:
		b = tls.AppendU64(b, l.NotBefore)
		b = tls.AppendU64(b, l.NotAfter)
	case SourceCommit:
		b = tls.AppendVec(b, l.ParentHash)
	}
	return appendExtensions(b, l.Extensions)
}

// tbs is LeafNodeTBS (RFC 9420 §7.2).
func (l *LeafNode) tbs(groupID []byte, leaf uint32) []byte {
	b := l.appendContent(nil)
	if l.Source == SourceUpdate || l.Source == SourceCommit {
		b = tls.AppendVec(b, groupID)
		b = tls.AppendU32(b, leaf)
	}
	return b
}

// Verify checks the leaf signature; groupID and leaf are used only for
// update and commit sources.
func (l *LeafNode) Verify(groupID []byte, leaf uint32) error {
	return VerifyWithLabel(l.SignatureKey, "LeafNodeTBS", l.tbs(groupID, leaf), l.Signature)
}

func (l *LeafNode) appendTo(b []byte) []byte {
	return tls.AppendVec(l.appendContent(b), l.Signature)
}

func (l *LeafNode) decode(r *tls.Reader) {
	l.EncryptionKey = r.Vec()
	l.SignatureKey = r.Vec()
	l.Credential.decode(r)
	l.Capabilities.decode(r)
	l.Source = LeafNodeSource(r.U8())
	switch l.Source {
	case SourceKeyPackage:
		l.NotBefore = r.U64()
		l.NotAfter = r.U64()
	case SourceUpdate:
	case SourceCommit:
		l.ParentHash = r.Vec()
	default:
		r.Fail(fmt.Errorf("%w: leaf node source %d", errUnknownType, l.Source))
	}
	l.Extensions = decodeExtensions(r)
	l.Signature = r.Vec()
}

// KeyPackage is RFC 9420 §10. DAVE sends it bare in op 26.
type KeyPackage struct {
	Version     uint16
	CipherSuite uint16
	InitKey     []byte
	LeafNode    LeafNode
	Extensions  []Extension
	Signature   []byte
}

func (k *KeyPackage) appendContent(b []byte) []byte {
	b = tls.AppendU16(b, k.Version)
	b = tls.AppendU16(b, k.CipherSuite)
	b = tls.AppendVec(b, k.InitKey)
	b = k.LeafNode.appendTo(b)
	return appendExtensions(b, k.Extensions)
}

// AppendTo appends the serialized KeyPackage.
func (k *KeyPackage) AppendTo(b []byte) []byte {
	return tls.AppendVec(k.appendContent(b), k.Signature)
}

func (k *KeyPackage) decode(r *tls.Reader) {
	k.Version = r.U16()
	k.CipherSuite = r.U16()
	k.InitKey = r.Vec()
	k.LeafNode.decode(r)
	k.Extensions = decodeExtensions(r)
	k.Signature = r.Vec()
}

// Ref is the KeyPackageRef (RFC 9420 §5.2).
func (k *KeyPackage) Ref() []byte {
	return RefHash("MLS 1.0 KeyPackage Reference", k.AppendTo(nil))
}

// Verify checks the KeyPackage and leaf signatures and the suite.
func (k *KeyPackage) Verify() error {
	if k.Version != ProtocolVersion || k.CipherSuite != CipherSuite {
		return fmt.Errorf("%w: %d/%d", errVersion, k.Version, k.CipherSuite)
	}
	if k.LeafNode.Source != SourceKeyPackage {
		return fmt.Errorf("mls: key package leaf source %d", k.LeafNode.Source)
	}
	if string(k.InitKey) == string(k.LeafNode.EncryptionKey) {
		return fmt.Errorf("mls: key package init key equals its encryption key") // RFC 9420 §10.1
	}
	if err := k.LeafNode.Verify(nil, 0); err != nil {
		return fmt.Errorf("mls: key package leaf: %w", err)
	}
	if err := VerifyWithLabel(k.LeafNode.SignatureKey, "KeyPackageTBS", k.appendContent(nil), k.Signature); err != nil {
		return fmt.Errorf("mls: key package: %w", err)
	}
	return nil
}

// UnmarshalKeyPackage parses a bare KeyPackage. The result aliases b.
func UnmarshalKeyPackage(b []byte) (*KeyPackage, error) {
	r := tls.NewReader(b)
	k := new(KeyPackage)
	k.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: key package: %w", err)
	}
	return k, nil
}

// ParentNode is RFC 9420 §7.1.
type ParentNode struct {
	EncryptionKey  []byte
	ParentHash     []byte
	UnmergedLeaves []uint32
}

func (p *ParentNode) appendTo(b []byte) []byte {
	b = tls.AppendVec(b, p.EncryptionKey)
	b = tls.AppendVec(b, p.ParentHash)
	return tls.AppendNested(b, func(b []byte) []byte {
		for _, u := range p.UnmergedLeaves {
			b = tls.AppendU32(b, u)
		}
		return b
	})
}

func (p *ParentNode) decode(r *tls.Reader) {
	p.EncryptionKey = r.Vec()
	p.ParentHash = r.Vec()
	s := r.Sub()
	for s.Len() > 0 && s.Err() == nil {
		p.UnmergedLeaves = append(p.UnmergedLeaves, s.U32())
	}
	r.Join(s)
}

// Node is a ratchet tree node: exactly one of Leaf and Parent is set.
type Node struct {
	Leaf   *LeafNode
	Parent *ParentNode
}

func (n *Node) appendTo(b []byte) []byte {
	if n.Leaf != nil {
		return n.Leaf.appendTo(append(b, 1))
	}
	return n.Parent.appendTo(append(b, 2))
}

func (n *Node) decode(r *tls.Reader) {
	switch t := r.U8(); t {
	case 1:
		n.Leaf = new(LeafNode)
		n.Leaf.decode(r)
	case 2:
		n.Parent = new(ParentNode)
		n.Parent.decode(r)
	default:
		r.Fail(fmt.Errorf("%w: node %d", errUnknownType, t))
	}
}

// encryptionKey returns the node's HPKE public key.
func (n *Node) encryptionKey() []byte {
	if n.Leaf != nil {
		return n.Leaf.EncryptionKey
	}
	return n.Parent.EncryptionKey
}

// HPKECiphertext is RFC 9420 §5.1.3.
type HPKECiphertext struct {
	KEMOutput  []byte
	Ciphertext []byte
}

func (h *HPKECiphertext) appendTo(b []byte) []byte {
	b = tls.AppendVec(b, h.KEMOutput)
	return tls.AppendVec(b, h.Ciphertext)
}

func (h *HPKECiphertext) decode(r *tls.Reader) {
	h.KEMOutput = r.Vec()
	h.Ciphertext = r.Vec()
}

// UpdatePathNode is RFC 9420 §7.6.
type UpdatePathNode struct {
	EncryptionKey        []byte
	EncryptedPathSecrets []HPKECiphertext
}

// UpdatePath is RFC 9420 §7.6.
type UpdatePath struct {
	LeafNode LeafNode
	Nodes    []UpdatePathNode
}

func (u *UpdatePath) appendTo(b []byte) []byte {
	b = u.LeafNode.appendTo(b)
	return tls.AppendNested(b, func(b []byte) []byte {
		for i := range u.Nodes {
			n := &u.Nodes[i]
			b = tls.AppendVec(b, n.EncryptionKey)
			b = tls.AppendNested(b, func(b []byte) []byte {
				for j := range n.EncryptedPathSecrets {
					b = n.EncryptedPathSecrets[j].appendTo(b)
				}
				return b
			})
		}
		return b
	})
}

func (u *UpdatePath) decode(r *tls.Reader) {
	u.LeafNode.decode(r)
	s := r.Sub()
	for s.Len() > 0 && s.Err() == nil {
		var n UpdatePathNode
		n.EncryptionKey = s.Vec()
		cs := s.Sub()
		for cs.Len() > 0 && cs.Err() == nil {
			var c HPKECiphertext
			c.decode(cs)
			n.EncryptedPathSecrets = append(n.EncryptedPathSecrets, c)
		}
		s.Join(cs)
		u.Nodes = append(u.Nodes, n)
	}
	r.Join(s)
}
