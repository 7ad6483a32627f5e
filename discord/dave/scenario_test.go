package dave

import (
	"bytes"
	"testing"

	"github.com/banterbot/banter/discord/dave/wire"
)

const testChannel = 1234567890123456789

// prefer makes the gateway broadcast m's commit when m sent one.
func prefer(m member) func([]member) int {
	return func(ss []member) int {
		for i, s := range ss {
			if s.UID() == m.UID() {
				return i
			}
		}
		return 0
	}
}

// runScenarios is the interop-test design of dave-notes §5.3: a (always a
// banter Session) and members made by other go through group creation
// with either side committing, add, remove with path commits from both
// sides, revoke, an invalid welcome (op 31), and a sole-member reset,
// checking equal epoch authenticators and frames both ways after every
// transition.
func runScenarios(t *testing.T, other func(uid uint64) member) {
	g := newGateway(t, testChannel)
	a := newGoMember(1001, testChannel)
	b := other(1002)
	g.connect(a)
	g.connect(b)

	// 1. Group creation, the other side's commit wins.
	g.commitWinner = prefer(b)
	g.create()
	g.checkAuth("create")
	g.checkFrames("create")

	// 2. A third member; the Go side commits the add (no path).
	c := other(1003)
	g.connect(c)
	g.commitWinner = prefer(a)
	if inv := g.add(c); len(inv) > 0 {
		t.Fatalf("%s rejected the add", inv[0].Name())
	}
	g.checkAuth("add c")
	g.checkFrames("add c")

	// 3. Remove c; the other side commits with a path, Go processes it.
	g.commitWinner = prefer(b)
	g.remove(c)
	g.checkAuth("remove c")
	g.checkFrames("remove c")

	// 4. Revoke: proposals answered with commits, then revoked; nothing changes.
	d := other(1004)
	g.connect(d)
	epoch := g.x.Epoch()
	payload, refs := g.propose([]uint64{d.UID()}, nil)
	if s, _ := g.broadcastProposals(g.recipients(d.UID()), payload); len(s) == 0 {
		t.Fatal("no commit for the add proposal")
	}
	if s, _ := g.broadcastProposals(g.recipients(d.UID()), g.x.Revoke(refs...)); len(s) != 0 {
		t.Fatalf("%s committed after the revoke", s[0].Name())
	}
	if g.x.Epoch() != epoch {
		t.Fatal("epoch changed by a revoke")
	}
	// Then the add, committed by the other side (Go processes an add-only commit).
	g.commitWinner = prefer(b)
	if inv := g.add(d); len(inv) > 0 {
		t.Fatalf("%s rejected the add", inv[0].Name())
	}
	g.checkAuth("add d")
	g.checkFrames("add d")

	// 5. Remove d; Go commits with a path, the other side processes it.
	g.commitWinner = prefer(a)
	g.remove(d)
	g.checkAuth("remove d")
	g.checkFrames("remove d")

	// 5b. Downgrade to protocol 0 and back: plaintext both ways, then
	// encryption resumes with the same epoch's keys.
	g.transition(900, 0)
	for _, s := range g.members {
		opus := []byte("plain from " + s.Name())
		if f := s.Encrypt(t, opus); !bytes.Equal(f, opus) {
			t.Fatalf("%s encrypts at protocol 0", s.Name())
		}
		for _, r := range g.members {
			if r.UID() != s.UID() {
				if pt, err := r.Decrypt(t, s.UID(), opus); err != nil || !bytes.Equal(pt, opus) {
					t.Fatalf("%s refused %s's plaintext at protocol 0: %v", r.Name(), s.Name(), err)
				}
			}
		}
	}
	g.transition(901, 1)
	g.checkAuth("upgrade")
	g.checkFrames("upgrade")

	// 6. Invalid welcome: the joiner answers op 31 and a new key package.
	e := other(1005)
	g.connect(e)
	oldKP := g.kps[e.UID()]
	payload, _ = g.propose([]uint64{e.UID()}, nil)
	s, cs := g.broadcastProposals(g.recipients(e.UID()), payload)
	w, cw := g.pick(s, cs)
	ann := g.accept(w, cw)
	ann.Welcome[len(ann.Welcome)-5] ^= 0xFF // corrupt the encrypted GroupInfo
	inv := g.announce(ann)
	if len(inv) != 1 || inv[0].UID() != e.UID() {
		t.Fatalf("invalid welcome: op 31 from %v", inv)
	}
	if bytes.Equal(g.kps[e.UID()], oldKP) {
		t.Fatal("no new key package after op 31")
	}
	g.checkAuth("invalid welcome")
	// The gateway removes the stale leaf and re-adds e with its new key package.
	g.commitWinner = prefer(b)
	payload, _ = g.propose([]uint64{e.UID()}, []uint64{e.UID()})
	if inv := g.round(g.recipients(e.UID()), payload); len(inv) > 0 {
		t.Fatalf("%s rejected the re-add", inv[0].Name())
	}
	g.checkAuth("re-add e")
	g.checkFrames("re-add e")

	// 6b. One commit by Go removes e and adds h: h joins with a path secret
	// in its Welcome, b processes a path commit that also adds.
	h := other(1007)
	g.connect(h)
	g.disconnect(e)
	g.commitWinner = prefer(a)
	payload, _ = g.propose([]uint64{h.UID()}, []uint64{e.UID()})
	if inv := g.round(g.recipients(h.UID()), payload); len(inv) > 0 {
		t.Fatalf("%s rejected the remove+add", inv[0].Name())
	}
	g.checkAuth("remove e, add h")
	g.checkFrames("remove e, add h")

	// 7. Sole-member reset: everyone but a leaves.
	g.commitWinner = prefer(a)
	g.remove(b)
	g.remove(h)
	g.checkAuth("remove b, e")
	g.x.Reset()
	clear(g.inGroup)
	g.deliver(a, wire.OpPrepareEpoch, jsonBytes(wire.PrepareEpochEvent{Epoch: 1, ProtocolVersion: 1}), false)
	if !hasOp(g.lastOut[a.UID()], wire.OpMLSKeyPackage) {
		t.Fatal("no key package after op 24 epoch 1")
	}
	g.deliver(a, wire.OpPrepareTransition, jsonBytes(wire.PrepareTransitionEvent{TransitionID: 0, ProtocolVersion: 1}), false)
	if f := a.Encrypt(t, []byte("alone")); bytes.Contains(f, []byte("alone")) {
		t.Fatal("sole member sends plaintext")
	}

	// 8. A new call forms; the Go side's creation commit wins.
	f := other(1006)
	g.connect(f)
	g.commitWinner = prefer(a)
	g.create()
	g.checkAuth("recreate")
	g.checkFrames("recreate")
}

func hasOp(out []Outbound, op wire.Opcode) bool {
	for _, o := range out {
		if o.Op == op {
			return true
		}
	}
	return false
}

// TestScenariosGo runs the scenarios with banter Sessions only.
func TestScenariosGo(t *testing.T) {
	runScenarios(t, func(uid uint64) member { return newGoMember(uid, testChannel) })
}

// TestInteropDavey runs the scenarios with @snazzah/davey 0.1.12 (node) as
// every other call member.
func TestInteropDavey(t *testing.T) {
	daveyPeerPath(t)
	runScenarios(t, func(uid uint64) member { return newDaveyMember(t, uid, testChannel) })
}
