package mls

import (
	"slices"
	"testing"
)

// TestTreeValidation runs the cs2 entries of tree-validation.json: tree
// hashes and resolutions of every node, and full tree verification.
func TestTreeValidation(t *testing.T) {
	var vs []struct {
		CipherSuite int `json:"cipher_suite"`
		Tree        hexb
		GroupID     hexb   `json:"group_id"`
		TreeHashes  []hexb `json:"tree_hashes"`
		Resolutions [][]uint32
	}
	loadVectors(t, "tree-validation.json", &vs)
	n := 0
	for i, v := range vs {
		if v.CipherSuite != 2 {
			continue
		}
		n++
		tr, err := UnmarshalTree(v.Tree)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		eq(t, "tree round trip", tr.Marshal(), v.Tree)
		for x := range v.TreeHashes {
			eq(t, "tree hash", tr.treeHash(uint32(x), nil), v.TreeHashes[x])
			if got := tr.resolution(uint32(x)); !slices.Equal(got, v.Resolutions[x]) && !(len(got) == 0 && len(v.Resolutions[x]) == 0) {
				t.Errorf("%d: resolution(%d) = %v, want %v", i, x, got, v.Resolutions[x])
			}
		}
		if err := tr.Verify(v.GroupID); err != nil {
			t.Errorf("%d: verify: %v", i, err)
		}
		// A tampered parent node must fail validation.
		for x := 1; x < len(tr.nodes); x += 2 {
			if tr.nodes[x] != nil {
				bad := tr.Clone()
				bad.nodes[x].Parent.ParentHash = append(slices.Clone(tr.nodes[x].Parent.ParentHash), 1)
				if bad.Verify(v.GroupID) == nil {
					t.Errorf("%d: tampered node %d verified", i, x)
				}
				break
			}
		}
	}
	if n == 0 {
		t.Fatal("no cs2 vectors")
	}
}

// TestTreeOperations runs tree-operations.json (cipher suite 1 only, but
// the operations and tree hash use SHA-256 and opaque keys, so they apply).
func TestTreeOperations(t *testing.T) {
	var vs []struct {
		Proposal       hexb
		ProposalSender uint32 `json:"proposal_sender"`
		TreeBefore     hexb   `json:"tree_before"`
		TreeAfter      hexb   `json:"tree_after"`
		TreeHashBefore hexb   `json:"tree_hash_before"`
		TreeHashAfter  hexb   `json:"tree_hash_after"`
	}
	loadVectors(t, "tree-operations.json", &vs)
	for i, v := range vs {
		tr, err := UnmarshalTree(v.TreeBefore)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "hash before", tr.TreeHash(), v.TreeHashBefore)
		p, err := UnmarshalProposal(v.Proposal)
		if err != nil {
			t.Fatal(err)
		}
		switch p.Type {
		case ProposalAdd:
			tr.AddLeaf(&p.KeyPackage.LeafNode)
		case ProposalRemove:
			if err := tr.RemoveLeaf(p.Removed); err != nil {
				t.Fatal(err)
			}
		case ProposalUpdate:
			tr.updateLeaf(v.ProposalSender, p.LeafNode)
		}
		eq(t, "tree after", tr.Marshal(), v.TreeAfter)
		eq(t, "hash after", tr.TreeHash(), v.TreeHashAfter)
		_ = i
	}
}
