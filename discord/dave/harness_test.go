package dave

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/dave/extsender"
	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/wire"
)

// member is one call participant as the test gateway sees it.
type member interface {
	UID() uint64
	Name() string
	// Op delivers a gateway message (JSON d or binary payload) and returns what the member sends.
	Op(t testing.TB, op wire.Opcode, payload []byte, binary bool) []Outbound
	Auth(t testing.TB) []byte
	Encrypt(t testing.TB, opus []byte) []byte
	Decrypt(t testing.TB, from uint64, frame []byte) ([]byte, error)
}

// goMember is a banter Session.
type goMember struct {
	uid uint64
	s   *Session
}

func newGoMember(uid, channel uint64) *goMember {
	return &goMember{uid: uid, s: NewSession(Config{UserID: uid, ChannelID: channel})}
}

func (g *goMember) UID() uint64  { return g.uid }
func (g *goMember) Name() string { return "go-" + strconv.FormatUint(g.uid, 10) }
func (g *goMember) Op(t testing.TB, op wire.Opcode, payload []byte, binary bool) []Outbound {
	t.Helper()
	out, err := g.s.HandleGateway(op, payload, binary)
	if err != nil {
		t.Logf("%s: %v", g.Name(), err)
	}
	return out
}
func (g *goMember) Auth(t testing.TB) []byte { return g.s.EpochAuthenticator() }
func (g *goMember) Encrypt(t testing.TB, opus []byte) []byte {
	t.Helper()
	f, err := g.s.EncryptOpus(nil, opus)
	if err != nil {
		t.Fatalf("%s encrypt: %v", g.Name(), err)
	}
	return f
}
func (g *goMember) Decrypt(t testing.TB, from uint64, f []byte) ([]byte, error) {
	return g.s.DecryptOpus(strconv.FormatUint(from, 10), nil, f)
}

// daveyMember is a node child process running interop/dave/peer.js.
type daveyMember struct {
	uid  uint64
	cmd  *exec.Cmd
	in   *json.Encoder
	out  *bufio.Scanner
	mu   sync.Mutex
	stop func() // ends the node process and waits for it (idempotent)
}

// daveyPeerPath returns peer.js, or skips the test with the reason.
func daveyPeerPath(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: skipping the @snazzah/davey interop suite")
	}
	root, err := filepath.Abs("../../interop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@snazzah", "davey")); err != nil {
		t.Skip("interop/node_modules/@snazzah/davey missing (run npm ci in interop/): skipping the davey interop suite")
	}
	return filepath.Join(root, "dave", "peer.js")
}

func newDaveyMember(t testing.TB, uid, channel uint64) *daveyMember {
	t.Helper()
	peer := daveyPeerPath(t)
	cmd := exec.Command("node", peer)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daveyMember{uid: uid, cmd: cmd, in: json.NewEncoder(stdin), out: bufio.NewScanner(stdout)}
	d.out.Buffer(make([]byte, 1<<20), 1<<28)
	d.stop = sync.OnceFunc(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	t.Cleanup(d.stop)
	d.call(t, map[string]any{"cmd": "init", "uid": strconv.FormatUint(uid, 10), "channel": strconv.FormatUint(channel, 10)}, nil)
	return d
}

func (d *daveyMember) call(t testing.TB, req map[string]any, resp any) error {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.in.Encode(req); err != nil {
		t.Fatalf("davey %d: write: %v", d.uid, err)
	}
	if !d.out.Scan() {
		t.Fatalf("davey %d: no reply: %v", d.uid, d.out.Err())
	}
	line := d.out.Bytes()
	var e struct{ Err string }
	_ = json.Unmarshal(line, &e)
	if e.Err != "" {
		return fmt.Errorf("davey: %s", e.Err)
	}
	if resp != nil {
		if err := json.Unmarshal(line, resp); err != nil {
			t.Fatalf("davey reply %s: %v", line, err)
		}
	}
	return nil
}

func (d *daveyMember) UID() uint64  { return d.uid }
func (d *daveyMember) Name() string { return "davey-" + strconv.FormatUint(d.uid, 10) }
func (d *daveyMember) Op(t testing.TB, op wire.Opcode, payload []byte, binary bool) []Outbound {
	t.Helper()
	req := map[string]any{"cmd": "op", "op": int(op)}
	if binary {
		req["hex"] = hex.EncodeToString(payload)
	} else {
		req["json"] = json.RawMessage(payload)
	}
	var resp struct {
		Out []struct {
			Op   int
			Hex  *string
			JSON json.RawMessage
			Err  string
		}
	}
	if err := d.call(t, req, &resp); err != nil {
		t.Fatalf("%s op %s: %v", d.Name(), op, err)
	}
	var out []Outbound
	for _, o := range resp.Out {
		if o.Err != "" {
			t.Logf("%s: %s", d.Name(), o.Err)
		}
		if o.Hex != nil {
			b, _ := hex.DecodeString(*o.Hex)
			out = append(out, Outbound{Op: wire.Opcode(o.Op), Binary: true, Payload: b})
		} else {
			out = append(out, Outbound{Op: wire.Opcode(o.Op), Data: o.JSON})
		}
	}
	return out
}

type daveyState struct {
	Epoch   int64
	Status  int
	Ready   bool
	Auth    string
	UserIDs []string
}

func (d *daveyMember) State(t testing.TB) daveyState {
	var s daveyState
	if err := d.call(t, map[string]any{"cmd": "state"}, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (d *daveyMember) Auth(t testing.TB) []byte {
	b, _ := hex.DecodeString(d.State(t).Auth)
	return b
}

func (d *daveyMember) Encrypt(t testing.TB, opus []byte) []byte {
	t.Helper()
	var r struct{ Hex string }
	if err := d.call(t, map[string]any{"cmd": "enc", "hex": hex.EncodeToString(opus)}, &r); err != nil {
		t.Fatalf("%s encrypt: %v", d.Name(), err)
	}
	b, _ := hex.DecodeString(r.Hex)
	return b
}

func (d *daveyMember) Decrypt(t testing.TB, from uint64, f []byte) ([]byte, error) {
	var r struct{ Hex string }
	if err := d.call(t, map[string]any{"cmd": "dec", "uid": strconv.FormatUint(from, 10), "hex": hex.EncodeToString(f)}, &r); err != nil {
		return nil, err
	}
	return hex.DecodeString(r.Hex)
}

// gateway plays the Discord voice gateway around an extsender.Sender:
// connection handshake, proposal broadcast, commit selection, welcome
// routing and transitions (WP §"Voice Gateway"; dave-notes §5.3).
type gateway struct {
	t       testing.TB
	x       *extsender.Sender
	members []member          // connected
	inGroup map[uint64]bool   // established members
	kps     map[uint64][]byte // latest key package per user
	// commitWinner picks the commit to broadcast among the senders' op 28s.
	commitWinner func(senders []member) int
	// lastOut records what each member sent in the last delivery.
	lastOut map[uint64][]Outbound
}

func newGateway(t testing.TB, channel uint64) *gateway {
	x, err := extsender.New(channel)
	if err != nil {
		t.Fatal(err)
	}
	return &gateway{t: t, x: x, inGroup: map[uint64]bool{}, kps: map[uint64][]byte{}, lastOut: map[uint64][]Outbound{}}
}

func jsonBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// deliver sends one message to m and absorbs key packages; it returns the rest.
func (g *gateway) deliver(m member, op wire.Opcode, payload []byte, binary bool) []Outbound {
	g.t.Helper()
	out := m.Op(g.t, op, payload, binary)
	g.lastOut[m.UID()] = out
	var rest []Outbound
	for _, o := range out {
		if o.Op == wire.OpMLSKeyPackage {
			if _, err := mls.UnmarshalKeyPackage(o.Payload); err != nil {
				g.t.Fatalf("%s sent a bad key package: %v", m.Name(), err)
			}
			g.kps[m.UID()] = o.Payload
			continue
		}
		rest = append(rest, o)
	}
	return rest
}

// connect runs the join handshake for m (ops 4, 11, 25, 26) without proposals.
func (g *gateway) connect(m member) {
	g.t.Helper()
	ids := []string{}
	for _, o := range g.members {
		ids = append(ids, strconv.FormatUint(o.UID(), 10))
		g.deliver(o, wire.OpClientsConnect, jsonBytes(wire.ClientsConnectEvent{UserIDs: []string{strconv.FormatUint(m.UID(), 10)}}), false)
	}
	g.members = append(g.members, m)
	g.deliver(m, wire.OpSessionDescription, jsonBytes(map[string]any{"mode": "aead_aes256_gcm_rtpsize", "dave_protocol_version": 1}), false)
	if len(ids) > 0 {
		g.deliver(m, wire.OpClientsConnect, jsonBytes(wire.ClientsConnectEvent{UserIDs: ids}), false)
	}
	g.deliver(m, wire.OpMLSExternalSender, g.x.Package(), true)
	if g.kps[m.UID()] == nil {
		g.t.Fatalf("%s sent no key package", m.Name())
	}
}

func (g *gateway) member(uid uint64) member {
	for _, m := range g.members {
		if m.UID() == uid {
			return m
		}
	}
	return nil
}

// propose makes one op 27 payload adding users (by their latest key
// package) and removing users.
func (g *gateway) propose(adds, removes []uint64) (payload []byte, refs [][]byte) {
	g.t.Helper()
	var kps [][]byte
	for _, u := range adds {
		kps = append(kps, g.kps[u])
	}
	payload, refs, err := g.x.Propose(kps, removes)
	if err != nil {
		g.t.Fatal(err)
	}
	return payload, refs
}

// recipients are the members that take proposals: the established group,
// or every pending member when there is none.
func (g *gateway) recipients(exclude uint64) []member {
	var rs []member
	for _, m := range g.members {
		if m.UID() != exclude && (!g.x.Established() || g.inGroup[m.UID()]) {
			rs = append(rs, m)
		}
	}
	return rs
}

// broadcastProposals sends op 27 and collects the op 28 payloads.
func (g *gateway) broadcastProposals(to []member, payload []byte) (senders []member, commits [][]byte) {
	g.t.Helper()
	for _, m := range to {
		for _, o := range g.deliver(m, wire.OpMLSProposals, payload, true) {
			if o.Op != wire.OpMLSCommitWelcome {
				g.t.Fatalf("%s answered op 27 with %s", m.Name(), o.Op)
			}
			senders = append(senders, m)
			commits = append(commits, o.Payload)
		}
	}
	return senders, commits
}

// pick returns the winning commit among collected ones.
func (g *gateway) pick(senders []member, commits [][]byte) (member, []byte) {
	g.t.Helper()
	if len(commits) == 0 {
		g.t.Fatal("nobody committed")
	}
	i := 0
	if g.commitWinner != nil {
		i = g.commitWinner(senders)
	}
	return senders[i], commits[i]
}

// accept validates the winning op 28 in the external sender.
func (g *gateway) accept(from member, op28 []byte) *extsender.Announcement {
	g.t.Helper()
	a, err := g.x.AcceptCommit(from.UID(), op28)
	if err != nil {
		g.t.Fatalf("gateway refused %s's commit: %v", from.Name(), err)
	}
	return a
}

// announce sends op 29 and op 30, then executes the transition once every
// recipient is ready. It returns the members that answered op 31.
func (g *gateway) announce(a *extsender.Announcement) (invalid []member) {
	g.t.Helper()
	ready := map[uint64]bool{}
	handle := func(m member, out []Outbound) {
		for _, o := range out {
			switch o.Op {
			case wire.OpTransitionReady:
				ready[m.UID()] = true
			case wire.OpMLSInvalidCommitWelcome:
				invalid = append(invalid, m)
			default:
				g.t.Fatalf("%s answered with %s", m.Name(), o.Op)
			}
		}
	}
	for _, u := range a.CommitTo {
		if m := g.member(u); m != nil {
			handle(m, g.deliver(m, wire.OpMLSAnnounceCommitTransition, a.Commit, true))
		}
	}
	for _, u := range a.WelcomeTo {
		if m := g.member(u); m != nil {
			handle(m, g.deliver(m, wire.OpMLSWelcome, a.Welcome, true))
		}
	}
	clear(g.inGroup)
	for _, u := range g.x.Members() {
		if m := g.member(u); m != nil && !contains(invalid, m) {
			g.inGroup[u] = true
			if !ready[u] {
				g.t.Fatalf("%s did not send op 23 for transition %d", m.Name(), a.TransitionID)
			}
		}
	}
	for _, m := range g.members {
		if ready[m.UID()] {
			g.deliver(m, wire.OpExecuteTransition, jsonBytes(wire.ExecuteTransitionEvent{TransitionID: a.TransitionID}), false)
		}
	}
	return invalid
}

func contains(ms []member, m member) bool {
	for _, x := range ms {
		if x.UID() == m.UID() {
			return true
		}
	}
	return false
}

// transition runs op 21 {id, version} (expecting op 23) and op 22 on every
// established member.
func (g *gateway) transition(id uint16, version int) {
	g.t.Helper()
	for _, m := range g.members {
		if !g.inGroup[m.UID()] {
			continue
		}
		out := g.deliver(m, wire.OpPrepareTransition, jsonBytes(wire.PrepareTransitionEvent{TransitionID: id, ProtocolVersion: version}), false)
		if len(out) != 1 || out[0].Op != wire.OpTransitionReady {
			g.t.Fatalf("%s answered op 21 with %v", m.Name(), out)
		}
	}
	for _, m := range g.members {
		if g.inGroup[m.UID()] {
			g.deliver(m, wire.OpExecuteTransition, jsonBytes(wire.ExecuteTransitionEvent{TransitionID: id}), false)
		}
	}
}

// round proposes to the recipients, picks a commit, accepts and announces it.
func (g *gateway) round(to []member, payload []byte) []member {
	g.t.Helper()
	s, c := g.broadcastProposals(to, payload)
	w, cw := g.pick(s, c)
	return g.announce(g.accept(w, cw))
}

// create establishes the group among all connected pending members; each
// gets Add proposals for the others.
func (g *gateway) create() {
	g.t.Helper()
	var senders []member
	var commits [][]byte
	for _, m := range g.members {
		var adds []uint64
		for _, o := range g.members {
			if o.UID() != m.UID() {
				adds = append(adds, o.UID())
			}
		}
		payload, _ := g.propose(adds, nil)
		s, c := g.broadcastProposals([]member{m}, payload)
		senders, commits = append(senders, s...), append(commits, c...)
	}
	w, c := g.pick(senders, commits)
	if inv := g.announce(g.accept(w, c)); len(inv) > 0 {
		g.t.Fatalf("%s rejected the group", inv[0].Name())
	}
}

// add proposes m (already connected) to the established group.
func (g *gateway) add(m member) []member {
	g.t.Helper()
	payload, _ := g.propose([]uint64{m.UID()}, nil)
	return g.round(g.recipients(m.UID()), payload)
}

// disconnect makes m leave the call: op 13 to the others.
func (g *gateway) disconnect(m member) {
	g.t.Helper()
	var rest []member
	for _, o := range g.members {
		if o.UID() != m.UID() {
			rest = append(rest, o)
			g.deliver(o, wire.OpClientDisconnect, jsonBytes(wire.ClientDisconnectEvent{UserID: strconv.FormatUint(m.UID(), 10)}), false)
		}
	}
	g.members = rest
	if d, ok := m.(*daveyMember); ok {
		d.stop() // the member has left the call
	}
}

// remove disconnects m and commits its removal.
func (g *gateway) remove(m member) {
	g.t.Helper()
	g.disconnect(m)
	payload, _ := g.propose(nil, []uint64{m.UID()})
	if inv := g.round(g.recipients(0), payload); len(inv) > 0 {
		g.t.Fatalf("%s rejected a remove commit", inv[0].Name())
	}
}

// checkAuth asserts every established member has the same epoch authenticator.
func (g *gateway) checkAuth(step string) {
	g.t.Helper()
	var want []byte
	var first member
	for _, m := range g.members {
		if !g.inGroup[m.UID()] {
			continue
		}
		a := m.Auth(g.t)
		if len(a) == 0 {
			g.t.Fatalf("%s: %s has no epoch authenticator", step, m.Name())
		}
		if want == nil {
			want, first = a, m
			continue
		}
		if !bytes.Equal(a, want) {
			g.t.Fatalf("%s: epoch authenticator of %s %x != %s %x", step, m.Name(), a, first.Name(), want)
		}
	}
}

// checkFrames has every established member send a frame that every other decrypts.
func (g *gateway) checkFrames(step string) {
	g.t.Helper()
	for _, s := range g.members {
		if !g.inGroup[s.UID()] {
			continue
		}
		opus := []byte(fmt.Sprintf("opus from %s at %s", s.Name(), step))
		f := s.Encrypt(g.t, opus)
		if bytes.Contains(f, opus) {
			g.t.Fatalf("%s: %s sent plaintext", step, s.Name())
		}
		for _, r := range g.members {
			if r.UID() == s.UID() || !g.inGroup[r.UID()] {
				continue
			}
			pt, err := r.Decrypt(g.t, s.UID(), f)
			if err != nil || !bytes.Equal(pt, opus) {
				g.t.Fatalf("%s: %s could not decrypt %s: %v", step, r.Name(), s.Name(), err)
			}
		}
	}
}
