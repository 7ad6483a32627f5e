package mls

import (
	"github.com/banterbot/banter/discord/dave/mls/tls"
	"testing"
)

// TestTreeKEM runs the cs2 entries of treekem.json: each UpdatePath is
// merged (parent hashes checked), decrypted by every other leaf (path
// secret and commit secret checked), the tree hash after merging is
// checked, and a fresh UpdatePath of ours is decrypted by every other leaf.
func TestTreeKEM(t *testing.T) {
	var vs []struct {
		CipherSuite int    `json:"cipher_suite"`
		GroupID     hexb   `json:"group_id"`
		Epoch       uint64 `json:"epoch"`
		Confirmed   hexb   `json:"confirmed_transcript_hash"`
		RatchetTree hexb   `json:"ratchet_tree"`
		Leaves      []struct {
			Index          uint32
			EncryptionPriv hexb `json:"encryption_priv"`
			SignaturePriv  hexb `json:"signature_priv"`
			PathSecrets    []struct {
				Node       uint32
				PathSecret hexb `json:"path_secret"`
			} `json:"path_secrets"`
		} `json:"leaves_private"`
		UpdatePaths []struct {
			Sender        uint32
			UpdatePath    hexb   `json:"update_path"`
			PathSecrets   []hexb `json:"path_secrets"`
			CommitSecret  hexb   `json:"commit_secret"`
			TreeHashAfter hexb   `json:"tree_hash_after"`
		} `json:"update_paths"`
	}
	loadVectors(t, "treekem.json", &vs)
	n := 0
	for vi, v := range vs {
		if v.CipherSuite != 2 {
			continue
		}
		n++
		tree, err := UnmarshalTree(v.RatchetTree)
		if err != nil {
			t.Fatal(err)
		}
		privs := map[uint32]privateKeys{}
		for _, l := range v.Leaves {
			p := privateKeys{}
			k, err := HPKEPrivateKey(l.EncryptionPriv)
			if err != nil {
				t.Fatal(err)
			}
			p[2*l.Index] = k
			for _, ps := range l.PathSecrets {
				k, err := DeriveNodeKey(ps.PathSecret)
				if err != nil {
					t.Fatal(err)
				}
				if n := tree.node(ps.Node); n == nil || string(n.encryptionKey()) != string(k.PublicKey().Bytes()) {
					t.Fatalf("%d: private state inconsistent at node %d", vi, ps.Node)
				}
				p[ps.Node] = k
			}
			privs[l.Index] = p
		}
		ctxFor := func(th []byte) []byte {
			gc := GroupContext{Version: 1, CipherSuite: 2, GroupID: v.GroupID, Epoch: v.Epoch, TreeHash: th, ConfirmedTranscriptHash: v.Confirmed}
			return gc.AppendTo(nil)
		}
		for ui, u := range v.UpdatePaths {
			var path UpdatePath
			r := tls.NewReader(u.UpdatePath)
			path.decode(r)
			if err := r.Done(); err != nil {
				t.Fatal(err)
			}
			after := tree.Clone()
			if err := after.mergePath(u.Sender, &path, v.GroupID); err != nil {
				t.Fatalf("%d/%d: merge: %v", vi, ui, err)
			}
			eq(t, "tree hash after", after.TreeHash(), u.TreeHashAfter)
			ctx := ctxFor(after.TreeHash())
			for _, l := range v.Leaves {
				if l.Index == u.Sender {
					continue
				}
				p := privs[l.Index].clone()
				cs, err := decryptPath(tree, u.Sender, l.Index, &path, ctx, nil, p)
				if err != nil {
					t.Fatalf("%d/%d leaf %d: %v", vi, ui, l.Index, err)
				}
				eq(t, "commit secret", cs, u.CommitSecret)
				lca := commonAncestor(2*l.Index, 2*u.Sender)
				if ps := u.PathSecrets[l.Index]; ps != nil {
					k, _ := DeriveNodeKey(ps)
					if p[lca] == nil || string(p[lca].PublicKey().Bytes()) != string(k.PublicKey().Bytes()) {
						t.Errorf("%d/%d leaf %d: path secret at %d differs", vi, ui, l.Index, lca)
					}
				}
			}
			// Our own UpdatePath from the same sender.
			var sigPriv hexb
			for _, l := range v.Leaves {
				if l.Index == u.Sender {
					sigPriv = l.SignaturePriv
				}
			}
			sk, err := ParseSignaturePrivateKey(sigPriv)
			if err != nil {
				t.Fatal(err)
			}
			mine := tree.Clone()
			enc, err := encapPath(mine, u.Sender, v.GroupID, sk, nil, ctxFor)
			if err != nil {
				t.Fatal(err)
			}
			check := tree.Clone()
			if err := check.mergePath(u.Sender, enc.path, v.GroupID); err != nil {
				t.Fatalf("own path does not merge: %v", err)
			}
			eq(t, "own tree hash", check.TreeHash(), mine.TreeHash())
			if err := mine.Verify(v.GroupID); err != nil {
				t.Errorf("tree after own path: %v", err)
			}
			for _, l := range v.Leaves {
				if l.Index == u.Sender {
					continue
				}
				cs, err := decryptPath(tree, u.Sender, l.Index, enc.path, ctxFor(mine.TreeHash()), nil, privs[l.Index].clone())
				if err != nil {
					t.Fatalf("own path, leaf %d: %v", l.Index, err)
				}
				eq(t, "own commit secret", cs, enc.commitSecret)
			}
		}
	}
	if n == 0 {
		t.Fatal("no cs2 vectors")
	}
}
