package mls

import (
	"errors"
	"fmt"
	"slices"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

var errWelcome = errors.New("mls: invalid welcome")

// Join processes a Welcome for the key package kp (RFC 9420 §12.4.3.1).
// If the GroupInfo carries no ratchet_tree extension, tree must be given.
func Join(w *Welcome, kp *KeyPackage, kpp *KeyPackagePrivate, tree *Tree) (*Group, error) {
	return join(w, kp, kpp, tree, nil)
}

// pskSecret is RFC 9420 §8.4 for external PSKs looked up by psk_id.
func pskSecret(ids []PreSharedKeyID, psks map[string][]byte) ([]byte, error) {
	secret := zeroSecret()
	for i := range ids {
		id := &ids[i]
		psk, ok := psks[string(id.PSKID)]
		if id.PSKType != 1 || !ok {
			return nil, fmt.Errorf("%w: unknown PSK %x", errWelcome, id.PSKID)
		}
		lbl := id.appendTo(nil)
		lbl = tls.AppendU16(lbl, uint16(i))
		lbl = tls.AppendU16(lbl, uint16(len(ids)))
		input := ExpandWithLabel(Extract(zeroSecret(), psk), "derived psk", lbl, HashSize)
		secret = Extract(input, secret)
	}
	return secret, nil
}

// join is Join with external PSKs (only the RFC test vectors use them).
func join(w *Welcome, kp *KeyPackage, kpp *KeyPackagePrivate, tree *Tree, psks map[string][]byte) (*Group, error) {
	gs, err := openGroupSecrets(w, kp, kpp)
	if err != nil {
		return nil, err
	}
	psk, err := pskSecret(gs.PSKs, psks)
	if err != nil {
		return nil, err
	}
	gi, err := openGroupInfo(w, gs.JoinerSecret, psk)
	if err != nil {
		return nil, err
	}
	gc := &gi.GroupContext
	if tree, err = welcomeTree(gi, tree); err != nil {
		return nil, err
	}
	me, ok := tree.findLeaf(kp.LeafNode.SignatureKey)
	if !ok || string(tree.Leaf(me).EncryptionKey) != string(kp.LeafNode.EncryptionKey) {
		return nil, fmt.Errorf("%w: our leaf is not in the tree", errWelcome)
	}
	g := &Group{ctx: *gc, tree: tree, me: me, sig: kpp.Signature, priv: privateKeys{2 * me: kpp.Encryption}}
	if err := g.loadExtensions(); err != nil {
		return nil, fmt.Errorf("%w: %w", errWelcome, err)
	}
	if gs.PathSecret != nil {
		if err := g.installPathSecret(gs.PathSecret, gi.Signer); err != nil {
			return nil, err
		}
	}
	g.ctxBytes = gc.AppendTo(nil)
	g.secrets = deriveEpochSecrets(gs.JoinerSecret, psk, g.ctxBytes)
	if !hmacEqual(MAC(g.secrets.Confirmation, gc.ConfirmedTranscriptHash), gi.ConfirmationTag) {
		return nil, fmt.Errorf("%w: %w", errWelcome, errConfirm)
	}
	g.confTag = gi.ConfirmationTag
	g.interim = interimTranscriptHash(gc.ConfirmedTranscriptHash, gi.ConfirmationTag)
	return g, nil
}

// openGroupSecrets finds the Welcome's secrets addressed to kp and decrypts
// them with its init key (RFC 9420 §12.4.3.1).
func openGroupSecrets(w *Welcome, kp *KeyPackage, kpp *KeyPackagePrivate) (*GroupSecrets, error) {
	if w.CipherSuite != CipherSuite {
		return nil, fmt.Errorf("%w: cipher suite %d", errWelcome, w.CipherSuite)
	}
	ref := kp.Ref()
	i := slices.IndexFunc(w.Secrets, func(s EncryptedGroupSecrets) bool { return string(s.NewMember) == string(ref) })
	if i < 0 {
		return nil, fmt.Errorf("%w: not addressed to our key package", errWelcome)
	}
	pt, err := DecryptWithLabel(kpp.Init, "Welcome", w.EncryptedGroupInfo, w.Secrets[i].EncryptedGroupSecrets)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errWelcome, err)
	}
	var gs GroupSecrets
	r := tls.NewReader(pt)
	gs.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("%w: group secrets: %w", errWelcome, err)
	}
	return &gs, nil
}

// openGroupInfo decrypts the Welcome's GroupInfo with the welcome secret of
// the joiner secret and PSK secret, and checks its version and suite.
func openGroupInfo(w *Welcome, joinerSecret, psk []byte) (*GroupInfo, error) {
	member := Extract(joinerSecret, psk)
	aead, nonce, err := groupInfoAEAD(DeriveSecret(member, "welcome"))
	if err != nil {
		return nil, err
	}
	giBytes, err := aead.Open(nil, nonce, w.EncryptedGroupInfo, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: group info: %w", errWelcome, err)
	}
	var gi GroupInfo
	r := tls.NewReader(giBytes)
	gi.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("%w: group info: %w", errWelcome, err)
	}
	if gi.GroupContext.Version != ProtocolVersion || gi.GroupContext.CipherSuite != CipherSuite {
		return nil, fmt.Errorf("%w: %w", errWelcome, errVersion)
	}
	return &gi, nil
}

// welcomeTree returns the ratchet tree the joiner adopts (the GroupInfo's
// ratchet_tree extension, else a copy of the one given out of band) after
// checking the GroupInfo's signature, the tree hash and the tree itself.
func welcomeTree(gi *GroupInfo, tree *Tree) (*Tree, error) {
	if data, ok := findExtension(gi.Extensions, ExtensionRatchetTree); ok {
		var err error
		if tree, err = UnmarshalTree(data); err != nil {
			return nil, fmt.Errorf("%w: %w", errWelcome, err)
		}
	} else if tree == nil {
		return nil, fmt.Errorf("%w: no ratchet tree", errWelcome)
	} else {
		tree = tree.Clone()
	}
	signer := tree.Leaf(gi.Signer)
	if signer == nil {
		return nil, fmt.Errorf("%w: signer leaf %d is blank", errWelcome, gi.Signer)
	}
	if err := gi.Verify(signer.SignatureKey); err != nil {
		return nil, fmt.Errorf("%w: group info: %w", errWelcome, err)
	}
	if string(tree.TreeHash()) != string(gi.GroupContext.TreeHash) {
		return nil, fmt.Errorf("%w: tree hash mismatch", errWelcome)
	}
	if err := tree.Verify(gi.GroupContext.GroupID); err != nil {
		return nil, fmt.Errorf("%w: %w", errWelcome, err)
	}
	return tree, nil
}

// installPathSecret derives the private keys of the signer's filtered direct
// path from the lowest common ancestor with our leaf up, checking each
// against the tree's public key (RFC 9420 §12.4.3.1).
func (g *Group) installPathSecret(secret []byte, signerLeaf uint32) error {
	lca := commonAncestor(2*g.me, 2*signerLeaf)
	fdp := g.tree.filteredDirectPath(signerLeaf)
	k := slices.Index(fdp, lca)
	if k < 0 {
		return fmt.Errorf("%w: path secret for a node off the signer's path", errWelcome)
	}
	for j := k; j < len(fdp); j++ {
		if j > k {
			secret = DeriveSecret(secret, "path")
		}
		key, err := DeriveNodeKey(secret)
		if err != nil {
			return err
		}
		if n := g.tree.node(fdp[j]); n == nil || string(n.encryptionKey()) != string(key.PublicKey().Bytes()) {
			return fmt.Errorf("%w: path secret does not match node %d", errWelcome, fdp[j])
		}
		g.priv[fdp[j]] = key
	}
	return nil
}
