package extsender

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/wire"
)

type client struct {
	uid  uint64
	kp   *mls.KeyPackage
	kpp  *mls.KeyPackagePrivate
	g    *mls.Group
	next *mls.Group // state after our last commit
}

func newClient(t *testing.T, uid uint64, es []byte, channel uint64) *client {
	sig, err := mls.GenerateSignatureKey()
	if err != nil {
		t.Fatal(err)
	}
	kp, kpp, err := mls.NewKeyPackage(binary.BigEndian.AppendUint64(nil, uid), sig)
	if err != nil {
		t.Fatal(err)
	}
	e, err := mls.UnmarshalExternalSender(es)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mls.NewGroup(binary.BigEndian.AppendUint64(nil, channel), kp, kpp, []mls.Extension{mls.ExternalSendersExtension(*e)})
	if err != nil {
		t.Fatal(err)
	}
	return &client{uid: uid, kp: kp, kpp: kpp, g: g}
}

// commitFor feeds an op 27 payload to c's group and returns its op 28.
func (c *client) commitFor(t *testing.T, payload []byte) []byte {
	t.Helper()
	var e wire.ProposalsEvent
	if err := e.Unmarshal(payload); err != nil {
		t.Fatal(err)
	}
	for _, m := range e.Messages {
		if _, err := c.g.AddProposal(m); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.g.Commit()
	if err != nil {
		t.Fatal(err)
	}
	c.next = out.Next
	return (&wire.CommitWelcomeCommand{Commit: out.Commit, Welcome: out.Welcome}).AppendTo(nil)
}

// TestAcceptCommit: the first valid commit of an epoch is announced to the
// right members; stale, foreign and non-member commits are refused.
func TestAcceptCommit(t *testing.T) {
	x, err := New(77)
	if err != nil {
		t.Fatal(err)
	}
	a := newClient(t, 1, x.Package(), 77)
	b := newClient(t, 2, x.Package(), 77)
	payload, refs, err := x.Propose([][]byte{b.kp.AppendTo(nil)}, nil)
	if err != nil || len(refs) != 1 {
		t.Fatal(err)
	}
	op28 := a.commitFor(t, payload)
	ann, err := x.AcceptCommit(1, op28)
	if err != nil {
		t.Fatal(err)
	}
	if ann.TransitionID == 0 || len(ann.CommitTo) != 1 || ann.CommitTo[0] != 1 || len(ann.WelcomeTo) != 1 || ann.WelcomeTo[0] != 2 {
		t.Fatalf("announcement %+v", ann)
	}
	if x.Epoch() != 1 || !x.Established() {
		t.Fatal("epoch")
	}
	if l, ok := x.Leaf(2); !ok || l != 1 {
		t.Fatalf("leaf of 2: %d %v", l, ok)
	}
	// The same commit again is for a past epoch.
	if _, err := x.AcceptCommit(1, op28); err == nil {
		t.Fatal("replayed commit accepted")
	}
	// A commit in epoch 1 attributed to a user who is not the committing leaf.
	a.g = a.next
	payload, _, err = x.Propose(nil, []uint64{2})
	if err != nil {
		t.Fatal(err)
	}
	op28 = a.commitFor(t, payload)
	if _, err := x.AcceptCommit(2, op28); err == nil {
		t.Fatal("commit attributed to the wrong user accepted")
	}
	if ann, err = x.AcceptCommit(1, op28); err != nil || len(ann.CommitTo) != 1 || ann.Welcome != nil {
		t.Fatalf("%+v %v", ann, err)
	}
	if !bytes.Equal(x.Package(), x.pkg) || len(x.Members()) != 1 {
		t.Fatalf("members %v", x.Members())
	}
	if _, _, err := x.Propose([][]byte{[]byte("junk")}, nil); err == nil {
		t.Fatal("junk key package accepted")
	}
}
