package mls

import (
	"errors"
	"fmt"
	"slices"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// Tree is a ratchet tree (RFC 9420 §7): nodes in array order, nil for blank.
// The number of leaves is always a power of two.
type Tree struct {
	nodes []*Node
}

var errTree = errors.New("mls: invalid ratchet tree")

// NewTree builds a tree from the ratchet_tree extension node list, padding
// it with blanks to a full tree (RFC 9420 §12.4.3.3).
func NewTree(nodes []*Node) (*Tree, error) {
	if len(nodes) == 0 || len(nodes)%2 == 0 {
		return nil, fmt.Errorf("%w: %d nodes", errTree, len(nodes))
	}
	if nodes[len(nodes)-1] == nil {
		return nil, fmt.Errorf("%w: trailing blank node", errTree)
	}
	w := uint32(1)
	for w < uint32(len(nodes)) {
		w = 2*w + 1
	}
	t := &Tree{nodes: make([]*Node, w)}
	copy(t.nodes, nodes)
	for i, n := range t.nodes {
		if n == nil {
			continue
		}
		if (i%2 == 0) != (n.Leaf != nil) {
			return nil, fmt.Errorf("%w: node %d has the wrong kind", errTree, i)
		}
	}
	return t, nil
}

// UnmarshalTree parses a ratchet_tree extension body.
func UnmarshalTree(b []byte) (*Tree, error) {
	nodes, err := decodeRatchetTree(b)
	if err != nil {
		return nil, err
	}
	return NewTree(nodes)
}

// Marshal returns the ratchet_tree extension body.
func (t *Tree) Marshal() []byte { return encodeRatchetTree(t.nodes) }

// Clone returns a deep enough copy: nodes are copied, their byte fields are
// shared (they are never mutated in place).
func (t *Tree) Clone() *Tree {
	c := &Tree{nodes: make([]*Node, len(t.nodes))}
	for i, n := range t.nodes {
		if n == nil {
			continue
		}
		cn := &Node{}
		if n.Leaf != nil {
			l := *n.Leaf
			cn.Leaf = &l
		} else {
			p := *n.Parent
			p.UnmergedLeaves = slices.Clone(p.UnmergedLeaves)
			cn.Parent = &p
		}
		c.nodes[i] = cn
	}
	return c
}

// LeafCount is the number of leaf slots (a power of two).
func (t *Tree) LeafCount() uint32 { return uint32(len(t.nodes)+1) / 2 }

// Leaf returns the leaf node at leaf index i, or nil if blank or out of range.
func (t *Tree) Leaf(i uint32) *LeafNode {
	if 2*i >= uint32(len(t.nodes)) || t.nodes[2*i] == nil {
		return nil
	}
	return t.nodes[2*i].Leaf
}

func (t *Tree) node(x uint32) *Node {
	if x >= uint32(len(t.nodes)) {
		return nil
	}
	return t.nodes[x]
}

// AddLeaf inserts leaf at the leftmost blank slot, extending the tree if
// needed, and records it as unmerged in its non-blank ancestors (RFC 9420 §12.1.1).
func (t *Tree) AddLeaf(leaf *LeafNode) uint32 {
	i := uint32(0)
	for ; i < t.LeafCount(); i++ {
		if t.nodes[2*i] == nil {
			break
		}
	}
	if i == t.LeafCount() {
		t.nodes = append(t.nodes, make([]*Node, len(t.nodes)+1)...)
	}
	t.nodes[2*i] = &Node{Leaf: leaf}
	for _, p := range directPath(2*i, t.LeafCount()) {
		if n := t.nodes[p]; n != nil {
			n.Parent.UnmergedLeaves = append(n.Parent.UnmergedLeaves, i)
		}
	}
	return i
}

// RemoveLeaf blanks leaf i and its direct path, then truncates the tree
// (RFC 9420 §12.1.3).
func (t *Tree) RemoveLeaf(i uint32) error {
	if t.Leaf(i) == nil {
		return fmt.Errorf("mls: remove blank leaf %d", i)
	}
	t.nodes[2*i] = nil
	for _, p := range directPath(2*i, t.LeafCount()) {
		t.nodes[p] = nil
	}
	for t.LeafCount() > 1 {
		half := t.LeafCount() / 2
		blank := true
		for j := half; j < t.LeafCount(); j++ {
			if t.nodes[2*j] != nil {
				blank = false
				break
			}
		}
		if !blank {
			break
		}
		t.nodes = t.nodes[:nodeWidth(half)]
	}
	return nil
}

// resolution is RFC 9420 §4.1.1.
func (t *Tree) resolution(x uint32) []uint32 {
	n := t.node(x)
	if n != nil {
		r := []uint32{x}
		if n.Parent != nil {
			for _, u := range n.Parent.UnmergedLeaves {
				r = append(r, 2*u)
			}
		}
		return r
	}
	if level(x) == 0 {
		return nil
	}
	return append(t.resolution(left(x)), t.resolution(right(x))...)
}

// filteredDirectPath is RFC 9420 §4.1.2: the direct path of leaf i without
// the nodes whose copath child has an empty resolution.
func (t *Tree) filteredDirectPath(i uint32) []uint32 {
	var out []uint32
	x := 2 * i
	for _, p := range directPath(x, t.LeafCount()) {
		if len(t.resolution(sibling(x))) > 0 {
			out = append(out, p)
		}
		x = p
	}
	return out
}

// TreeHash is the tree hash of the root (RFC 9420 §7.8).
func (t *Tree) TreeHash() []byte { return t.treeHash(root(t.LeafCount()), nil) }

// treeHash of node x, treating the leaves in exclude as blank and removing
// them from unmerged_leaves (used for original sibling tree hashes).
func (t *Tree) treeHash(x uint32, exclude []uint32) []byte {
	n := t.node(x)
	if level(x) == 0 {
		b := tls.AppendU8(nil, 1)
		b = tls.AppendU32(b, x/2)
		if n == nil || slices.Contains(exclude, x/2) {
			return Hash(append(b, 0))
		}
		return Hash(n.Leaf.appendTo(append(b, 1)))
	}
	b := tls.AppendU8(nil, 2)
	if n == nil {
		b = append(b, 0)
	} else {
		p := *n.Parent
		if len(exclude) > 0 {
			p.UnmergedLeaves = slices.DeleteFunc(slices.Clone(p.UnmergedLeaves), func(u uint32) bool { return slices.Contains(exclude, u) })
		}
		b = p.appendTo(append(b, 1))
	}
	b = tls.AppendVec(b, t.treeHash(left(x), exclude))
	b = tls.AppendVec(b, t.treeHash(right(x), exclude))
	return Hash(b)
}

// parentHash is RFC 9420 §7.9: hash of ParentHashInput for parent node p
// with copath child s.
func (t *Tree) parentHash(p, s uint32) []byte {
	pn := t.nodes[p].Parent
	b := tls.AppendVec(nil, pn.EncryptionKey)
	b = tls.AppendVec(b, pn.ParentHash)
	b = tls.AppendVec(b, t.treeHash(s, pn.UnmergedLeaves))
	return Hash(b)
}

func nodeParentHash(n *Node) []byte {
	if n.Leaf != nil {
		return n.Leaf.ParentHash
	}
	return n.Parent.ParentHash
}

// verifyParentHashes checks that every non-blank parent node is
// parent-hash valid (RFC 9420 §7.9.2, top-down variant).
func (t *Tree) verifyParentHashes() error {
	for p := uint32(1); p < uint32(len(t.nodes)); p += 2 {
		pn := t.nodes[p]
		if pn == nil {
			continue
		}
		found := 0
		for _, c := range []uint32{left(p), right(p)} {
			s := sibling(c)
			ph := t.parentHash(p, s)
			lo, hi := leafRange(c)
			var unmergedUnderC []uint32
			for _, u := range pn.Parent.UnmergedLeaves {
				if u >= lo && u <= hi {
					unmergedUnderC = append(unmergedUnderC, 2*u)
				}
			}
			res := t.resolution(c)
			for _, d := range res {
				dn := t.nodes[d]
				if dn.Leaf != nil && dn.Leaf.Source != SourceCommit {
					continue
				}
				if string(nodeParentHash(dn)) != string(ph) {
					continue
				}
				rest := slices.DeleteFunc(slices.Clone(res), func(x uint32) bool { return x == d })
				if sameSet(rest, unmergedUnderC) {
					found++
				}
			}
		}
		if found != 1 {
			return fmt.Errorf("%w: parent node %d is not parent-hash valid (%d chains)", errTree, p, found)
		}
	}
	return nil
}

func sameSet(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Verify checks the tree on join (RFC 9420 §12.4.3.1): leaf signatures,
// parent hashes, unmerged-leaf consistency and unique keys.
func (t *Tree) Verify(groupID []byte) error {
	seen := map[string]bool{}
	for i := uint32(0); i < t.LeafCount(); i++ {
		l := t.Leaf(i)
		if l == nil {
			continue
		}
		if err := l.Verify(groupID, i); err != nil {
			return fmt.Errorf("%w: leaf %d: %w", errTree, i, err)
		}
		for _, k := range [][]byte{l.EncryptionKey, l.SignatureKey} {
			if seen[string(k)] {
				return fmt.Errorf("%w: duplicate key at leaf %d", errTree, i)
			}
			seen[string(k)] = true
		}
	}
	for p := uint32(1); p < uint32(len(t.nodes)); p += 2 {
		pn := t.nodes[p]
		if pn == nil {
			continue
		}
		if seen[string(pn.Parent.EncryptionKey)] {
			return fmt.Errorf("%w: duplicate key at node %d", errTree, p)
		}
		seen[string(pn.Parent.EncryptionKey)] = true
		for _, u := range pn.Parent.UnmergedLeaves {
			if !isAncestor(p, 2*u) || t.Leaf(u) == nil {
				return fmt.Errorf("%w: node %d: bad unmerged leaf %d", errTree, p, u)
			}
		}
	}
	return t.verifyParentHashes()
}

// findLeaf returns the index of the leaf with the given signature key.
func (t *Tree) findLeaf(sigKey []byte) (uint32, bool) {
	for i := uint32(0); i < t.LeafCount(); i++ {
		if l := t.Leaf(i); l != nil && string(l.SignatureKey) == string(sigKey) {
			return i, true
		}
	}
	return 0, false
}

// updateLeaf replaces leaf i and blanks its direct path (Update proposal,
// RFC 9420 §12.1.2).
func (t *Tree) updateLeaf(i uint32, leaf *LeafNode) {
	t.nodes[2*i] = &Node{Leaf: leaf}
	for _, p := range directPath(2*i, t.LeafCount()) {
		t.nodes[p] = nil
	}
}
