package dave

import (
	"math/rand/v2"
	"testing"
)

// runRandomCall drives a call through random joins and departures with
// random committers (seeded, so failures reproduce), checking epoch
// authenticators and frames after every transition. Trees with blank
// leaves, unmerged leaves and truncation arise naturally.
func runRandomCall(t *testing.T, seed uint64, steps int, mk func(uid uint64, i int) member) {
	r := rand.New(rand.NewPCG(seed, 1))
	g := newGateway(t, testChannel)
	next := uint64(3000)
	newMember := func() member {
		next++
		return mk(next, int(next))
	}
	first, second := newMember(), newMember()
	g.connect(first)
	g.connect(second)
	g.commitWinner = func(ss []member) int { return r.IntN(len(ss)) }
	g.create()
	g.checkAuth("create")
	for step := 0; step < steps; step++ {
		if len(g.members) < 3 || (len(g.members) < 6 && r.IntN(2) == 0) {
			m := newMember()
			g.connect(m)
			if inv := g.add(m); len(inv) > 0 {
				t.Fatalf("step %d: %s sent op 31", step, inv[0].Name())
			}
		} else {
			g.remove(g.members[r.IntN(len(g.members))])
		}
		g.checkAuth("random step")
		g.checkFrames("random step")
	}
}

// TestRandomCallGo: banter sessions only.
func TestRandomCallGo(t *testing.T) {
	steps := 30
	if testing.Short() {
		steps = 8
	}
	runRandomCall(t, 42, steps, func(uid uint64, _ int) member { return newGoMember(uid, testChannel) })
}

// TestRandomCallDavey: banter sessions and davey members alternate.
func TestRandomCallDavey(t *testing.T) {
	daveyPeerPath(t)
	steps := 20
	if testing.Short() {
		steps = 6
	}
	runRandomCall(t, 7, steps, func(uid uint64, i int) member {
		if i%2 == 0 {
			return newGoMember(uid, testChannel)
		}
		return newDaveyMember(t, uid, testChannel)
	})
}
