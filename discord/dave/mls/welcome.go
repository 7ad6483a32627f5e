package mls

import (
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// GroupContext is RFC 9420 §8.1.
type GroupContext struct {
	Version                 uint16
	CipherSuite             uint16
	GroupID                 []byte
	Epoch                   uint64
	TreeHash                []byte
	ConfirmedTranscriptHash []byte
	Extensions              []Extension
}

// AppendTo appends the serialized GroupContext.
func (g *GroupContext) AppendTo(b []byte) []byte {
	b = tls.AppendU16(b, g.Version)
	b = tls.AppendU16(b, g.CipherSuite)
	b = tls.AppendVec(b, g.GroupID)
	b = tls.AppendU64(b, g.Epoch)
	b = tls.AppendVec(b, g.TreeHash)
	b = tls.AppendVec(b, g.ConfirmedTranscriptHash)
	return appendExtensions(b, g.Extensions)
}

func (g *GroupContext) decode(r *tls.Reader) {
	g.Version = r.U16()
	g.CipherSuite = r.U16()
	g.GroupID = r.Vec()
	g.Epoch = r.U64()
	g.TreeHash = r.Vec()
	g.ConfirmedTranscriptHash = r.Vec()
	g.Extensions = decodeExtensions(r)
}

// GroupInfo is RFC 9420 §12.4.3.
type GroupInfo struct {
	GroupContext    GroupContext
	Extensions      []Extension
	ConfirmationTag []byte
	Signer          uint32
	Signature       []byte
}

func (g *GroupInfo) tbs() []byte {
	b := g.GroupContext.AppendTo(nil)
	b = appendExtensions(b, g.Extensions)
	b = tls.AppendVec(b, g.ConfirmationTag)
	return tls.AppendU32(b, g.Signer)
}

// AppendTo appends the serialized GroupInfo.
func (g *GroupInfo) AppendTo(b []byte) []byte {
	return tls.AppendVec(append(b, g.tbs()...), g.Signature)
}

func (g *GroupInfo) decode(r *tls.Reader) {
	g.GroupContext.decode(r)
	g.Extensions = decodeExtensions(r)
	g.ConfirmationTag = r.Vec()
	g.Signer = r.U32()
	g.Signature = r.Vec()
}

// Verify checks the GroupInfo signature with the signer's key.
func (g *GroupInfo) Verify(pub []byte) error {
	return VerifyWithLabel(pub, "GroupInfoTBS", g.tbs(), g.Signature)
}

// GroupSecrets is RFC 9420 §12.4.3.1. PathSecret is nil when absent.
type GroupSecrets struct {
	JoinerSecret []byte
	PathSecret   []byte
	PSKs         []PreSharedKeyID
}

func (g *GroupSecrets) appendTo(b []byte) []byte {
	b = tls.AppendVec(b, g.JoinerSecret)
	b = tls.AppendBool(b, g.PathSecret != nil)
	if g.PathSecret != nil {
		b = tls.AppendVec(b, g.PathSecret)
	}
	return tls.AppendNested(b, func(b []byte) []byte {
		for i := range g.PSKs {
			b = g.PSKs[i].appendTo(b)
		}
		return b
	})
}

func (g *GroupSecrets) decode(r *tls.Reader) {
	g.JoinerSecret = r.Vec()
	if r.Bool() {
		g.PathSecret = r.Vec()
	}
	s := r.Sub()
	for s.Len() > 0 && s.Err() == nil {
		var p PreSharedKeyID
		p.decode(s)
		g.PSKs = append(g.PSKs, p)
	}
	r.Join(s)
}

// EncryptedGroupSecrets is RFC 9420 §12.4.3.1.
type EncryptedGroupSecrets struct {
	NewMember             []byte // KeyPackageRef
	EncryptedGroupSecrets HPKECiphertext
}

// Welcome is RFC 9420 §12.4.3.1. DAVE carries it bare in ops 28 and 30.
type Welcome struct {
	CipherSuite        uint16
	Secrets            []EncryptedGroupSecrets
	EncryptedGroupInfo []byte
}

// AppendTo appends the serialized Welcome.
func (w *Welcome) AppendTo(b []byte) []byte {
	b = tls.AppendU16(b, w.CipherSuite)
	b = tls.AppendNested(b, func(b []byte) []byte {
		for i := range w.Secrets {
			b = tls.AppendVec(b, w.Secrets[i].NewMember)
			b = w.Secrets[i].EncryptedGroupSecrets.appendTo(b)
		}
		return b
	})
	return tls.AppendVec(b, w.EncryptedGroupInfo)
}

func (w *Welcome) decode(r *tls.Reader) {
	w.CipherSuite = r.U16()
	s := r.Sub()
	for s.Len() > 0 && s.Err() == nil {
		var e EncryptedGroupSecrets
		e.NewMember = s.Vec()
		e.EncryptedGroupSecrets.decode(s)
		w.Secrets = append(w.Secrets, e)
	}
	r.Join(s)
	w.EncryptedGroupInfo = r.Vec()
}

// UnmarshalWelcome parses a bare Welcome. The result aliases b.
func UnmarshalWelcome(b []byte) (*Welcome, error) {
	r := tls.NewReader(b)
	w := new(Welcome)
	w.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: welcome: %w", err)
	}
	return w, nil
}

// encodeRatchetTree is the ratchet_tree extension body (RFC 9420 §12.4.3.3):
// optional<Node> ratchet_tree<V>, trailing blanks omitted.
func encodeRatchetTree(nodes []*Node) []byte {
	end := len(nodes)
	for end > 0 && nodes[end-1] == nil {
		end--
	}
	return tls.AppendNested(nil, func(b []byte) []byte {
		for _, n := range nodes[:end] {
			b = tls.AppendBool(b, n != nil)
			if n != nil {
				b = n.appendTo(b)
			}
		}
		return b
	})
}

func decodeRatchetTree(b []byte) ([]*Node, error) {
	r := tls.NewReader(b)
	s := r.Sub()
	var nodes []*Node
	for s.Len() > 0 && s.Err() == nil {
		if !s.Bool() {
			nodes = append(nodes, nil)
			continue
		}
		n := new(Node)
		n.decode(s)
		nodes = append(nodes, n)
	}
	r.Join(s)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: ratchet tree: %w", err)
	}
	return nodes, nil
}
