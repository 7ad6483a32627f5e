package mls

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

type testMember struct {
	kp  *KeyPackage
	kpp *KeyPackagePrivate
	g   *Group
}

func newTestMember(t *testing.T, uid uint64) *testMember {
	t.Helper()
	sig, err := GenerateSignatureKey()
	if err != nil {
		t.Fatal(err)
	}
	kp, kpp, err := NewKeyPackage(binary.BigEndian.AppendUint64(nil, uid), sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Verify(); err != nil {
		t.Fatal(err)
	}
	return &testMember{kp: kp, kpp: kpp}
}

// TestGroupLifecycle drives three Go members through an external sender:
// create, add two (add-only commit, no path), remove one (path commit),
// checking equal epoch authenticators and exporter values after each step.
func TestGroupLifecycle(t *testing.T) {
	esKey, err := GenerateSignatureKey()
	if err != nil {
		t.Fatal(err)
	}
	es := ExternalSender{SignatureKey: SignaturePublicKey(esKey), Credential: Credential{Type: CredentialBasic, Identity: []byte{0}}}
	gid := []byte{0, 0, 0, 0, 0, 0, 0, 42}
	exts := []Extension{ExternalSendersExtension(es)}

	a, b, c := newTestMember(t, 1), newTestMember(t, 2), newTestMember(t, 3)
	if a.g, err = NewGroup(gid, a.kp, a.kpp, exts); err != nil {
		t.Fatal(err)
	}
	// propose sends one external proposal to every member in ms.
	propose := func(p *Proposal, ms ...*testMember) []byte {
		t.Helper()
		msg, ref, err := NewExternalProposal(gid, ms[0].g.Epoch(), 0, p, esKey)
		if err != nil {
			t.Fatal(err)
		}
		for _, mb := range ms {
			m, err := UnmarshalMLSMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := mb.g.AddProposal(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, ref) {
				t.Fatal("proposal ref differs")
			}
		}
		return ref
	}
	propose(&Proposal{Type: ProposalAdd, KeyPackage: b.kp}, a)
	propose(&Proposal{Type: ProposalAdd, KeyPackage: c.kp}, a)
	out, err := a.g.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if ci, err := InspectCommit(out.Commit); err != nil || ci.HasPath || len(ci.Refs) != 2 {
		t.Fatalf("inspect: %+v %v", ci, err)
	}
	w, err := UnmarshalWelcome(out.Welcome)
	if err != nil {
		t.Fatal(err)
	}
	a.g = out.Next
	for _, m := range []*testMember{b, c} {
		if m.g, err = Join(w, m.kp, m.kpp, nil); err != nil {
			t.Fatal(err)
		}
	}
	same := func(ms ...*testMember) {
		t.Helper()
		for _, m := range ms[1:] {
			if !bytes.Equal(m.g.EpochAuthenticator(), ms[0].g.EpochAuthenticator()) || m.g.Epoch() != ms[0].g.Epoch() {
				t.Fatalf("epoch authenticators differ at epoch %d", ms[0].g.Epoch())
			}
			if !bytes.Equal(m.g.Export("x", nil, 16), ms[0].g.Export("x", nil, 16)) {
				t.Fatal("exporters differ")
			}
		}
	}
	same(a, b, c)
	if len(a.g.Members()) != 3 {
		t.Fatalf("members %v", a.g.Members())
	}

	// The external sender removes c; b commits with a path.
	propose(&Proposal{Type: ProposalRemove, Removed: 2}, a, b, c)
	out, err = b.g.Commit()
	if err != nil {
		t.Fatal(err)
	}
	cm, err := UnmarshalMLSMessage(out.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Public.Content.Commit.Path == nil {
		t.Fatal("remove commit without path")
	}
	next, res, err := a.g.ProcessCommit(cm)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 1 || res.Removed[0] != 2 {
		t.Fatalf("result %+v", res)
	}
	if _, _, err := c.g.ProcessCommit(cm); !errors.Is(err, ErrRemoved) {
		t.Fatalf("removed member: %v", err)
	}
	a.g, b.g = next, out.Next
	same(a, b)

	// A revoked proposal cannot be committed by reference.
	ref := propose(&Proposal{Type: ProposalRemove, Removed: 1}, a)
	if err := a.g.Revoke(ref); err != nil {
		t.Fatal(err)
	}
	if err := a.g.Revoke(ref); err == nil {
		t.Fatal("double revoke succeeded")
	}
	// An empty commit (path) from a.
	out, err = a.g.Commit()
	if err != nil {
		t.Fatal(err)
	}
	cm, _ = UnmarshalMLSMessage(out.Commit)
	if b.g, _, err = b.g.ProcessCommit(cm); err != nil {
		t.Fatal(err)
	}
	a.g = out.Next
	same(a, b)

	// Tampering with the commit is detected, and the old state still works.
	bad := bytes.Clone(out.Commit)
	bad[len(bad)-40] ^= 1
	if m, err := UnmarshalMLSMessage(bad); err == nil {
		if _, _, err := a.g.ProcessCommit(m); err == nil {
			t.Fatal("tampered commit accepted")
		}
	}
}
