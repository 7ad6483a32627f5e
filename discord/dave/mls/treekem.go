package mls

import (
	"crypto/ecdsa"
	"crypto/hpke"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// TreeKEM (RFC 9420 §7.4–§7.6): merging, decrypting and creating UpdatePaths.

var errPath = errors.New("mls: invalid update path")

// privateKeys maps node index to the HPKE private key we hold for it.
type privateKeys map[uint32]hpke.PrivateKey

func (p privateKeys) clone() privateKeys { return maps.Clone(p) }

// copathChild is the child of ancestor p that does not contain leaf node x.
func copathChild(p, x uint32) uint32 {
	if isAncestor(left(p), x) {
		return right(p)
	}
	return left(p)
}

// setPathParentHashes fills the parent_hash fields along the filtered
// direct path fdp of leaf (top-down) and returns the leaf's parent hash.
func (t *Tree) setPathParentHashes(leaf uint32, fdp []uint32) []byte {
	ph := []byte{}
	for i := len(fdp) - 1; i >= 0; i-- {
		t.nodes[fdp[i]].Parent.ParentHash = ph
		ph = t.parentHash(fdp[i], copathChild(fdp[i], 2*leaf))
	}
	return ph
}

// mergePath applies an UpdatePath from leaf sender to the tree: it blanks the
// direct path, installs the new keys, recomputes parent hashes and checks
// the new leaf's parent hash and signature (RFC 9420 §7.5, §12.4.2).
func (t *Tree) mergePath(sender uint32, path *UpdatePath, groupID []byte) error {
	fdp := t.filteredDirectPath(sender)
	if len(path.Nodes) != len(fdp) {
		return fmt.Errorf("%w: %d nodes for a filtered path of %d", errPath, len(path.Nodes), len(fdp))
	}
	if path.LeafNode.Source != SourceCommit {
		return fmt.Errorf("%w: leaf source %d", errPath, path.LeafNode.Source)
	}
	for _, p := range directPath(2*sender, t.LeafCount()) {
		t.nodes[p] = nil
	}
	for i, x := range fdp {
		t.nodes[x] = &Node{Parent: &ParentNode{EncryptionKey: path.Nodes[i].EncryptionKey}}
	}
	ph := t.setPathParentHashes(sender, fdp)
	if string(ph) != string(path.LeafNode.ParentHash) {
		return fmt.Errorf("%w: leaf parent hash mismatch", errPath)
	}
	if err := path.LeafNode.Verify(groupID, sender); err != nil {
		return fmt.Errorf("%w: %w", errPath, err)
	}
	leaf := path.LeafNode
	t.nodes[2*sender] = &Node{Leaf: &leaf}
	return nil
}

// decryptPath recovers the path secret for the lowest node of sender's
// filtered direct path above us and ratchets it to the root. fdp and the
// resolutions are those of the tree before merging; exclude lists leaves
// added by the same commit. It stores the derived private keys in priv and
// returns the commit secret.
func decryptPath(before *Tree, sender, me uint32, path *UpdatePath, ctx []byte, exclude []uint32, priv privateKeys) ([]byte, error) {
	fdp := before.filteredDirectPath(sender)
	if len(fdp) != len(path.Nodes) {
		return nil, fmt.Errorf("%w: length", errPath)
	}
	i := slices.IndexFunc(fdp, func(p uint32) bool { return isAncestor(p, 2*me) })
	if i < 0 {
		return nil, fmt.Errorf("%w: no common ancestor with leaf %d", errPath, me)
	}
	res := slices.DeleteFunc(before.resolution(copathChild(fdp[i], 2*sender)), func(x uint32) bool {
		return x%2 == 0 && slices.Contains(exclude, x/2)
	})
	k := slices.IndexFunc(res, func(x uint32) bool { return priv[x] != nil })
	if k < 0 {
		return nil, fmt.Errorf("%w: no private key in the copath resolution", errPath)
	}
	cts := path.Nodes[i].EncryptedPathSecrets
	if len(cts) != len(res) {
		return nil, fmt.Errorf("%w: %d ciphertexts for a resolution of %d", errPath, len(cts), len(res))
	}
	secret, err := DecryptWithLabel(priv[res[k]], "UpdatePathNode", ctx, cts[k])
	if err != nil {
		return nil, err
	}
	for j := i; j < len(fdp); j++ {
		if j > i {
			secret = DeriveSecret(secret, "path")
		}
		key, err := DeriveNodeKey(secret)
		if err != nil {
			return nil, err
		}
		if string(key.PublicKey().Bytes()) != string(path.Nodes[j].EncryptionKey) {
			return nil, fmt.Errorf("%w: derived key mismatch at node %d", errPath, fdp[j])
		}
		priv[fdp[j]] = key
	}
	return DeriveSecret(secret, "path"), nil
}

// pathSecrets maps node index to the path secret that seeded its key.
type pathSecrets map[uint32][]byte

// encapResult is the output of creating an UpdatePath.
type encapResult struct {
	path         *UpdatePath
	commitSecret []byte
	secrets      pathSecrets // node -> path secret
	priv         privateKeys // new keys for our leaf and path
}

// encapPath creates an UpdatePath for leaf me in t (which must already have
// the commit's proposals applied) and merges it into t. ctxFor builds the
// provisional GroupContext from the new tree hash. exclude lists leaves
// added by this commit (RFC 9420 §7.5).
func encapPath(t *Tree, me uint32, groupID []byte, sig *ecdsa.PrivateKey, exclude []uint32, ctxFor func(treeHash []byte) []byte) (*encapResult, error) {
	old := t.Leaf(me)
	if old == nil {
		return nil, fmt.Errorf("mls: encap: own leaf %d is blank", me)
	}
	fdp := t.filteredDirectPath(me)
	for _, p := range directPath(2*me, t.LeafCount()) {
		t.nodes[p] = nil
	}
	res := &encapResult{secrets: pathSecrets{}, priv: privateKeys{}}
	leafKey, err := GenerateHPKEKey()
	if err != nil {
		return nil, err
	}
	res.priv[2*me] = leafKey
	secret := make([]byte, HashSize)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("mls: encap: %w", err)
	}
	path := &UpdatePath{}
	for i, x := range fdp {
		if i > 0 {
			secret = DeriveSecret(secret, "path")
		}
		key, err := DeriveNodeKey(secret)
		if err != nil {
			return nil, err
		}
		res.secrets[x] = secret
		res.priv[x] = key
		t.nodes[x] = &Node{Parent: &ParentNode{EncryptionKey: key.PublicKey().Bytes()}}
		path.Nodes = append(path.Nodes, UpdatePathNode{EncryptionKey: key.PublicKey().Bytes()})
	}
	res.commitSecret = DeriveSecret(secret, "path")
	leaf := *old
	leaf.EncryptionKey = leafKey.PublicKey().Bytes()
	leaf.Source = SourceCommit
	leaf.NotBefore, leaf.NotAfter = 0, 0
	leaf.ParentHash = t.setPathParentHashes(me, fdp)
	leaf.Signature, err = SignWithLabel(sig, "LeafNodeTBS", leaf.tbs(groupID, me))
	if err != nil {
		return nil, err
	}
	t.nodes[2*me] = &Node{Leaf: &leaf}
	path.LeafNode = leaf

	ctx := ctxFor(t.TreeHash())
	for i, x := range fdp {
		c := copathChild(x, 2*me)
		for _, r := range t.resolution(c) {
			if r%2 == 0 && slices.Contains(exclude, r/2) {
				continue
			}
			ct, err := EncryptWithLabel(t.nodes[r].encryptionKey(), "UpdatePathNode", ctx, res.secrets[x])
			if err != nil {
				return nil, err
			}
			path.Nodes[i].EncryptedPathSecrets = append(path.Nodes[i].EncryptedPathSecrets, ct)
		}
	}
	res.path = path
	return res, nil
}
