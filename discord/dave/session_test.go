package dave

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/dave/wire"
	"github.com/prometheus/client_golang/prometheus"
)

// TestSessionRules covers DAVE rules that the scenarios do not reach.
func TestSessionRules(t *testing.T) {
	t.Run("proposals without a group are ignored", func(t *testing.T) {
		g := newGateway(t, testChannel)
		g.connect(newGoMember(2, testChannel))
		s := NewSession(Config{UserID: 1, ChannelID: testChannel})
		payload, _ := g.propose([]uint64{2}, nil)
		out, err := s.HandleGateway(wire.OpMLSProposals, payload, true)
		if err != nil || len(out) != 0 {
			t.Fatalf("%v %v", out, err)
		}
	})
	t.Run("add of an unrecognized user is refused", func(t *testing.T) {
		g := newGateway(t, testChannel)
		a, b := newGoMember(1, testChannel), newGoMember(2, testChannel)
		g.connect(a)
		g.members = nil // b connects unseen by a: no op 11 for a
		g.connect(b)
		g.members = []member{a, b}
		payload, _ := g.propose([]uint64{2}, nil)
		out, err := a.s.HandleGateway(wire.OpMLSProposals, payload, true)
		if err == nil || !strings.Contains(err.Error(), "unrecognized") || len(out) != 0 {
			t.Fatalf("%v %v", out, err)
		}
	})
	t.Run("malformed JSON is an error and counted", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := NewMetrics(reg)
		s := NewSession(Config{UserID: 1, ChannelID: 2, Metrics: m})
		if _, err := s.HandleGateway(wire.OpPrepareTransition, []byte("{"), false); err == nil {
			t.Fatal("no error")
		}
		if n := gathered(t, reg, "banter_dave_gateway_errors_total"); n != 1 {
			t.Fatalf("counter %v", n)
		}
	})
	t.Run("encrypt before the first transition", func(t *testing.T) {
		s := NewSession(Config{UserID: 1, ChannelID: 2})
		if _, err := s.EncryptOpus(nil, []byte{1, 2, 3}); !errors.Is(err, ErrNotReady) {
			t.Fatalf("encrypt without a key: %v", err)
		}
		if f, err := s.EncryptOpus(nil, []byte{0xF8, 0xFF, 0xFE}); err != nil || !bytes.Equal(f, []byte{0xF8, 0xFF, 0xFE}) {
			t.Fatalf("silence: %x %v", f, err)
		}
	})
}

// TestDuplicateUserRejected: a commit that puts the same user id in two
// leaves is refused with op 31 (WP §"Client Commit Validity").
func TestDuplicateUserRejected(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	g := newGateway(t, testChannel)
	a := &goMember{uid: 1, s: NewSession(Config{UserID: 1, ChannelID: testChannel, Metrics: m})}
	b := newGoMember(2, testChannel)
	g.connect(a)
	g.connect(b)
	g.commitWinner = prefer(b)
	g.create()
	// A second session of user 2 sends a key package; b commits its add.
	b2 := newGoMember(2, testChannel)
	g.connect(b2)
	payload, _ := g.propose([]uint64{2}, nil)
	g.commitWinner = prefer(b)
	inv := g.round([]member{a, b}, payload)
	if len(inv) != 1 || inv[0].UID() != 1 {
		t.Fatalf("op 31 from %v", inv)
	}
	if !hasOp(g.lastOut[1], wire.OpMLSKeyPackage) {
		t.Fatal("no new key package")
	}
	if n := gathered(t, reg, "banter_dave_invalid_commit_welcome_total"); n != 1 {
		t.Fatalf("invalid counter %v", n)
	}
}

// TestPassthroughTransitions: downgrade to protocol 0 and back, with the
// 10 s window for unencrypted frames after the upgrade.
func TestPassthroughTransitions(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	g := newGateway(t, testChannel)
	a := &goMember{uid: 1, s: NewSession(Config{UserID: 1, ChannelID: testChannel, Now: clock})}
	b := newGoMember(2, testChannel)
	g.connect(a)
	g.connect(b)
	g.create()
	g.checkFrames("created")
	if _, err := a.Decrypt(t, 2, []byte("plain opus")); err == nil {
		t.Fatal("plaintext accepted in protocol 1")
	}
	steps := []struct {
		op   wire.Opcode
		v    any
		want wire.Opcode // expected reply, or wire.OpUnknown
	}{
		{wire.OpPrepareTransition, wire.PrepareTransitionEvent{TransitionID: 7, ProtocolVersion: 0}, wire.OpTransitionReady},
		{wire.OpExecuteTransition, wire.ExecuteTransitionEvent{TransitionID: 7}, wire.OpUnknown},
	}
	for _, st := range steps {
		out, err := a.s.HandleGateway(st.op, jsonBytes(st.v), false)
		if err != nil || (st.want != wire.OpUnknown && !hasOp(out, st.want)) {
			t.Fatalf("%s: %v %v", st.op, out, err)
		}
	}
	if a.s.ProtocolVersion() != 0 {
		t.Fatal("still protocol 1")
	}
	if f := a.Encrypt(t, []byte("plain")); string(f) != "plain" {
		t.Fatalf("passthrough send: %q", f)
	}
	if pt, err := a.Decrypt(t, 2, []byte("plain opus")); err != nil || string(pt) != "plain opus" {
		t.Fatalf("passthrough receive: %q %v", pt, err)
	}
	// Upgrade: encryption resumes with the epoch's key where it stopped.
	a.s.HandleGateway(wire.OpPrepareTransition, jsonBytes(wire.PrepareTransitionEvent{TransitionID: 8, ProtocolVersion: 1}), false)
	a.s.HandleGateway(wire.OpExecuteTransition, jsonBytes(wire.ExecuteTransitionEvent{TransitionID: 8}), false)
	if _, err := a.Decrypt(t, 2, []byte("late plain")); err != nil {
		t.Fatalf("plaintext inside the upgrade window: %v", err)
	}
	now = now.Add(11 * time.Second)
	if _, err := a.Decrypt(t, 2, []byte("late plain")); err == nil {
		t.Fatal("plaintext after the upgrade window")
	}
}

// TestForeignCommitIgnored: a commit for another group changes nothing.
func TestForeignCommitIgnored(t *testing.T) {
	g := newGateway(t, testChannel)
	a, b := newGoMember(1, testChannel), newGoMember(2, testChannel)
	g.connect(a)
	g.connect(b)
	g.create()
	other := newGateway(t, 99)
	x, y := newGoMember(1, 99), newGoMember(2, 99)
	other.connect(x)
	other.connect(y)
	payload, _ := other.propose([]uint64{2}, nil)
	_, cs := other.broadcastProposals([]member{x}, payload)
	before := a.s.EpochAuthenticator()
	var cw wire.CommitWelcomeCommand
	if err := cw.Unmarshal(cs[0]); err != nil {
		t.Fatal(err)
	}
	tm := wire.TransitionMessage{TransitionID: 3, Message: cw.Commit}
	out, err := a.s.HandleGateway(wire.OpMLSAnnounceCommitTransition, tm.AppendTo(nil), true)
	if err != nil || len(out) != 0 || !bytes.Equal(a.s.EpochAuthenticator(), before) {
		t.Fatalf("%v %v", out, err)
	}
	if a.s.Status() != StatusActive || a.s.Epoch() != 1 {
		t.Fatalf("status %s epoch %d", a.s.Status(), a.s.Epoch())
	}
	if m := a.s.Members(); len(m) != 2 || m[0] != 1 || m[1] != 2 {
		t.Fatalf("members %v", m)
	}
}

// gathered sums the samples of metric name in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestConcurrentMediaAndGateway sends and receives frames on other
// goroutines while the gateway changes the group (run with -race).
func TestConcurrentMediaAndGateway(t *testing.T) {
	g := newGateway(t, testChannel)
	a, b := newGoMember(1, testChannel), newGoMember(2, testChannel)
	g.connect(a)
	g.connect(b)
	g.create()
	frameFromB, err := b.s.EncryptOpus(nil, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 0, 64)
		for {
			select {
			case <-stop:
				return
			default:
			}
			buf, _ = a.s.EncryptOpus(buf[:0], []byte("opus"))
		}
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 0, 64)
		for {
			select {
			case <-stop:
				return
			default:
			}
			buf, _ = a.s.DecryptOpus("2", buf[:0], frameFromB) // replays fail, but race-free
		}
	}()
	c := newGoMember(3, testChannel)
	g.connect(c)
	g.add(c)
	g.remove(c)
	close(stop)
	wg.Wait()
	g.checkAuth("after concurrent media")
	g.checkFrames("after concurrent media")
}

// TestUpgradeFromPassthrough: a call that starts at protocol 0 and is
// upgraded with op 24 (epoch 1) + op 21 (id 0) accepts unencrypted frames
// only for the 10 s window after the upgrade, also from decryptors made
// while it was at protocol 0.
func TestUpgradeFromPassthrough(t *testing.T) {
	now := time.Unix(5000, 0)
	s := NewSession(Config{UserID: 1, ChannelID: testChannel, Now: func() time.Time { return now }})
	g := newGateway(t, testChannel)
	steps := []struct {
		op     wire.Opcode
		d      []byte
		binary bool
	}{
		{wire.OpSessionDescription, jsonBytes(map[string]int{"dave_protocol_version": 0}), false},
		{wire.OpMLSExternalSender, g.x.Package(), true},
	}
	for _, st := range steps {
		if out, err := s.HandleGateway(st.op, st.d, st.binary); err != nil || len(out) != 0 {
			t.Fatalf("%s: %v %v", st.op, out, err)
		}
	}
	if f, err := s.EncryptOpus(nil, []byte("plain")); err != nil || string(f) != "plain" {
		t.Fatalf("protocol 0 send: %q %v", f, err)
	}
	if _, err := s.DecryptOpus("2", nil, []byte("plain")); err != nil {
		t.Fatalf("protocol 0 receive: %v", err)
	}
	out, err := s.HandleGateway(wire.OpPrepareEpoch, jsonBytes(wire.PrepareEpochEvent{Epoch: 1, ProtocolVersion: 1}), false)
	if err != nil || !hasOp(out, wire.OpMLSKeyPackage) {
		t.Fatalf("op 24: %v %v", out, err)
	}
	if s.ProtocolVersion() != 0 {
		t.Fatal("version changed before the transition")
	}
	if _, err := s.HandleGateway(wire.OpPrepareTransition, jsonBytes(wire.PrepareTransitionEvent{TransitionID: 0, ProtocolVersion: 1}), false); err != nil {
		t.Fatal(err)
	}
	if f, err := s.EncryptOpus(nil, []byte("secret")); err != nil || bytes.Contains(f, []byte("secret")) {
		t.Fatalf("protocol 1 send: %q %v", f, err)
	}
	for _, user := range []string{"2", "3"} { // old and new decryptor
		if _, err := s.DecryptOpus(user, nil, []byte("plain")); err != nil {
			t.Fatalf("user %s inside the window: %v", user, err)
		}
	}
	now = now.Add(11 * time.Second)
	for _, user := range []string{"2", "3", "4"} {
		if _, err := s.DecryptOpus(user, nil, []byte("plain")); err == nil {
			t.Fatalf("user %s: plaintext after the window", user)
		}
	}
}
