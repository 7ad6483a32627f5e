package voicesim

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/mls"
	davewire "github.com/banterbot/banter/discord/dave/wire"
	"github.com/gorilla/websocket"
)

// rawDAVE is a raw wire client whose DAVE messages are handled by a
// dave.Session under the test's control: it can hold back what the
// session answers to replay it later.
type rawDAVE struct {
	*rawVoice
	d *dave.Session
}

func newRawDAVE(t *testing.T, s *Server, user string) *rawDAVE {
	t.Helper()
	sess := Session{GuildID: daveGuild, ChannelID: daveChannel, UserID: user, SessionID: "sess-" + user, Token: "tok-" + user}
	v := joinRaw(t, s, sess, ModeAES256GCMRTPSize)
	uid, _ := strconv.ParseUint(user, 10, 64)
	cid, _ := strconv.ParseUint(daveChannel, 10, 64)
	r := &rawDAVE{rawVoice: v, d: dave.NewSession(dave.Config{UserID: uid, ChannelID: cid})}
	if got := s.DAVE(daveGuild, daveChannel).Version; got != 1 {
		t.Fatalf("call at protocol %d after a DAVE client joined", got)
	}
	r.sendAll(r.handle(OpSessionDescription, []byte(`{"dave_protocol_version":1}`), false))
	return r
}

// handle passes a server message to the session and returns its answers.
func (r *rawDAVE) handle(op Op, payload []byte, bin bool) []dave.Outbound {
	out, err := r.d.HandleGateway(davewire.Opcode(op), payload, bin)
	if err != nil {
		r.t.Logf("session %s: %v", r.sess.UserID, err)
	}
	return out
}

func (r *rawDAVE) sendAll(out []dave.Outbound) {
	r.t.Helper()
	for _, o := range out {
		if o.Binary {
			r.sendRaw(websocket.BinaryMessage, append([]byte{byte(o.Op)}, o.Payload...))
		} else {
			r.send(Op(o.Op), json.RawMessage(o.Data))
		}
	}
}

// until reads server messages, handing DAVE ones to the session and
// sending its answers, until one with op arrives; that one is handed to
// the session too, and its answers are returned unsent.
func (r *rawDAVE) until(op Op) (msg, []dave.Outbound) {
	r.t.Helper()
	for {
		m, err := r.next(5 * time.Second)
		if err != nil {
			r.t.Fatalf("%s waiting for %v: %v", r.sess.UserID, op, err)
		}
		var out []dave.Outbound
		switch {
		case m.Binary:
			out = r.handle(m.Op, m.Body, true)
		case m.Op == OpClientsConnect || m.Op == OpClientDisconnect || (m.Op >= OpDAVEPrepareTransition && m.Op <= OpDAVEPrepareEpoch):
			out = r.handle(m.Op, m.D, false)
		}
		if m.Op == op {
			return m, out
		}
		r.sendAll(out)
	}
}

// TestDAVERevokeAndStaleCommit: when a joiner leaves before anyone
// committed its Add, the server revokes the outstanding proposals (op 27
// revoke with exactly the refs it appended); a commit that still
// references them is refused; the next member forms the group.
func TestDAVERevokeAndStaleCommit(t *testing.T) {
	checkGoroutines(t)
	s := serve(t, WithDAVE())
	const u1, u2, u3 = "1200000000000000301", "1200000000000000302", "1200000000000000303"
	r1 := newRawDAVE(t, s, u1)
	_, out := r1.until(OpMLSExternalSender)
	r1.sendAll(out)
	r2 := newRawDAVE(t, s, u2)
	_, out = r2.until(OpMLSExternalSender)
	r2.sendAll(out)

	// Both get Add proposals for the other; r1's commit is held back.
	app, stale := r1.until(OpMLSProposals)
	var ev davewire.ProposalsEvent
	if err := ev.Unmarshal(app.Body); err != nil || ev.Op != davewire.ProposalsAppend || len(ev.Messages) != 1 {
		t.Fatalf("op 27 to r1: %v %+v", err, ev)
	}
	if len(stale) != 1 || stale[0].Op != davewire.OpMLSCommitWelcome {
		t.Fatalf("r1 answered op 27 with %+v", stale)
	}
	s.Revoke(daveGuild, u2) // u2 leaves before anyone committed
	rev, out := r1.until(OpMLSProposals)
	r1.sendAll(out)
	var rv davewire.ProposalsEvent
	if err := rv.Unmarshal(rev.Body); err != nil || rv.Op != davewire.ProposalsRevoke || len(rv.Refs) != 1 {
		t.Fatalf("op 27 revoke to r1: %v %+v", err, rv)
	}
	if ref := ev.Messages[0].Public.ProposalRef(); !bytes.Equal(ref, rv.Refs[0]) {
		t.Fatalf("revoked ref %x, appended %x", rv.Refs[0], ref)
	}
	r1.sendAll(stale) // the commit to the revoked proposal arrives late
	eventually(t, "stale commit refused", func() bool { return s.DAVE(daveGuild, daveChannel).Stats.CommitsRejected == 1 })
	if st := s.DAVE(daveGuild, daveChannel); st.Established || st.Stats.Revokes != 1 {
		t.Fatalf("after the stale commit: %+v", st)
	}

	// A member joins: it commits first, r1 joins by Welcome.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := s.JoinMember(ctx, MemberOptions{GuildID: daveGuild, ChannelID: daveChannel, UserID: u3})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	_, out = r1.until(OpMLSWelcome)
	r1.sendAll(out)
	ex, _ := r1.until(OpDAVEExecuteTransition)
	var e davewire.ExecuteTransitionEvent
	r1.decode(ex, &e)
	if e.TransitionID == 0 {
		t.Fatal("op 22 with transition id 0")
	}
	settledUsers := []string{u1, u3}
	settled(t, s, 1, settledUsers, r1.d, m.DAVE())
}

// TestDAVEKeyPackageChecks: op 26 must be a verifiable KeyPackage whose
// credential is the sender's own user id; others are counted and dropped.
func TestDAVEKeyPackageChecks(t *testing.T) {
	const user = "1200000000000000401"
	kp := func(uid uint64) []byte {
		sig, err := mls.GenerateSignatureKey()
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := mls.NewKeyPackage(binary.BigEndian.AppendUint64(nil, uid), sig)
		if err != nil {
			t.Fatal(err)
		}
		return k.AppendTo(nil)
	}
	good := kp(1200000000000000401)
	tampered := bytes.Clone(good)
	tampered[len(tampered)-3] ^= 1 // inside the signature
	for _, tt := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"own", good, true},
		{"another user's", kp(1200000000000000402), false},
		{"tampered signature", tampered, false},
		{"truncated", good[:len(good)/2], false},
		{"empty", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkKeyPackage(user, tt.b); (err == nil) != tt.ok {
				t.Fatalf("checkKeyPackage = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// FuzzDAVEKeyPackage: the op 26 check never panics and accepts only key
// packages that parse and verify.
func FuzzDAVEKeyPackage(f *testing.F) {
	sig, err := mls.GenerateSignatureKey()
	if err != nil {
		f.Fatal(err)
	}
	k, _, err := mls.NewKeyPackage(binary.BigEndian.AppendUint64(nil, 1200000000000000401), sig)
	if err != nil {
		f.Fatal(err)
	}
	good := k.AppendTo(nil)
	f.Add(good)
	f.Add(good[:40])
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkKeyPackage("1200000000000000401", b) == nil {
			kp, err := mls.UnmarshalKeyPackage(b)
			if err != nil || kp.Verify() != nil {
				t.Fatalf("accepted a key package that does not verify: %x", b)
			}
		}
	})
}

// FuzzDAVEInput feeds arbitrary DAVE client messages (ops 23, 26, 28, 31)
// from a participant into a channel whose group (two DAVE members) is
// established: the server never panics, the group keeps its members and
// their keys, and the members still agree on the epoch authenticator.
func FuzzDAVEInput(f *testing.F) {
	s, err := New(Options{DAVE: true})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ms []*Member
	for _, u := range []string{"1200000000000000501", "1200000000000000502"} {
		m, err := s.JoinMember(ctx, MemberOptions{GuildID: daveGuild, ChannelID: daveChannel, UserID: u})
		if err != nil {
			f.Fatal(err)
		}
		ms = append(ms, m)
	}
	st := s.DAVE(daveGuild, daveChannel)
	if !st.Established || len(st.Members) != 2 || st.Busy {
		f.Fatalf("group not formed: %+v", st)
	}
	auth := ms[0].DAVE().EpochAuthenticator()
	const fuzzer = "1200000000000000503"
	p := &participant{
		key:  partKey{daveGuild, fuzzer},
		sess: Session{GuildID: daveGuild, ChannelID: daveChannel, UserID: fuzzer},
		// No conn: what the server sends it is only buffered.
		maxDAVE: 1, out: newSeqBuffer(16), knows: map[uint32]bool{},
	}
	s.mu.Lock()
	s.parts[p.key] = p
	s.mu.Unlock()

	f.Add(byte(23), []byte(`{"transition_id":1}`))
	f.Add(byte(31), []byte(`{"transition_id":65535}`))
	f.Add(byte(26), []byte{0, 1, 0, 2, 0, 1})
	f.Add(byte(28), []byte{0, 1, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(byte(28), []byte{})
	f.Add(byte(23), []byte(`null`))
	f.Fuzz(func(t *testing.T, op byte, payload []byte) {
		ops := []Op{OpDAVETransitionReady, OpMLSKeyPackage, OpMLSCommitWelcome, OpMLSInvalidCommitWelcome}
		s.mu.Lock()
		s.daveInputLocked(p, ops[int(op)%len(ops)], bytes.Clone(payload))
		s.mu.Unlock()
		st := s.DAVE(daveGuild, daveChannel)
		if !st.Established || len(st.Members) != 2 {
			t.Fatalf("group changed by input %d %x: %+v", op, payload, st)
		}
		for _, m := range ms {
			if !bytes.Equal(m.DAVE().EpochAuthenticator(), auth) {
				t.Fatalf("member %s changed epoch after input %d %x", m.UserID(), op, payload)
			}
		}
	})
}

// TestDAVETimeouts: a proposal round nobody commits to is revoked and
// proposed again after Options.DAVETimeout; a transition whose recipient
// never sends op 23 is executed for the others.
func TestDAVETimeouts(t *testing.T) {
	checkGoroutines(t)
	s := serve(t, WithDAVE(), WithDAVETimeout(150*time.Millisecond))
	const u1, u2, u3 = "1200000000000000601", "1200000000000000602", "1200000000000000603"
	r1 := newRawDAVE(t, s, u1)
	_, out := r1.until(OpMLSExternalSender)
	r1.sendAll(out)
	r2 := newRawDAVE(t, s, u2)
	_, out = r2.until(OpMLSExternalSender)
	r2.sendAll(out)

	// Neither commits: append, then (timeout) revoke and a new append.
	var ops []davewire.ProposalsOp
	for range 3 {
		m, _ := r1.until(OpMLSProposals) // answers withheld
		var ev davewire.ProposalsEvent
		if err := ev.Unmarshal(m.Body); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, ev.Op)
	}
	if ops[0] != davewire.ProposalsAppend || ops[1] != davewire.ProposalsRevoke || ops[2] != davewire.ProposalsAppend {
		t.Fatalf("op 27 sequence %v, want append, revoke, append", ops)
	}
	if st := s.DAVE(daveGuild, daveChannel); st.Stats.Timeouts < 1 || st.Established {
		t.Fatalf("after the round timed out: %+v", st)
	}

	// r2 leaves; a member joins and commits; r1 processes the Welcome but
	// never sends op 23: the member's transition executes anyway.
	s.Revoke(daveGuild, u2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := s.JoinMember(ctx, MemberOptions{GuildID: daveGuild, ChannelID: daveChannel, UserID: u3})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	_, out = r1.until(OpMLSWelcome)
	if len(out) != 1 || out[0].Op != davewire.OpTransitionReady {
		t.Fatalf("r1 answered the Welcome with %+v", out)
	}
	eventually(t, "transition executed without r1", func() bool {
		st := s.DAVE(daveGuild, daveChannel)
		return st.Established && !st.Busy && st.Stats.Transitions == 1 && m.DAVE().ProtocolVersion() == 1
	})
	if _, err := m.DAVE().EncryptOpus(nil, []byte{1, 2, 3}); err != nil {
		t.Fatalf("member has no sender key after the transition: %v", err)
	}
	r1.sendAll(out) // a late op 23 is ignored
	if st := s.DAVE(daveGuild, daveChannel); st.Stats.Transitions != 1 || st.Busy {
		t.Fatalf("late op 23 changed the state: %+v", st)
	}
}
