package dave

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
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
	uid uint64
	cmd *exec.Cmd
	in  *json.Encoder
	out *bufio.Scanner
	mu  sync.Mutex
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
	t.Cleanup(func() {
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

// gateway plays the Discord voice gateway: the external sender, proposal
// broadcast, commit selection, welcome routing and transitions
// (WP §"Voice Gateway"; dave-notes §5.3).
type gateway struct {
	t       testing.TB
	channel uint64
	key     *ecdsa.PrivateKey
	es      []byte
	members []member          // connected
	inGroup map[uint64]bool   // established members
	kps     map[uint64][]byte // latest key package per user
	leaf    map[uint64]uint32 // leaf index per established user
	epoch   uint64            // established epoch (0: none)
	tid     uint16
	// commitWinner picks the commit to broadcast among the senders' op 28s.
	commitWinner func(senders []member) int
	// lastOut records what each member sent in the last delivery.
	lastOut map[uint64][]Outbound
}

func newGateway(t testing.TB, channel uint64) *gateway {
	key, err := mls.GenerateSignatureKey()
	if err != nil {
		t.Fatal(err)
	}
	es := mls.ExternalSender{SignatureKey: mls.SignaturePublicKey(key), Credential: mls.Credential{Type: mls.CredentialBasic, Identity: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
	return &gateway{t: t, channel: channel, key: key, es: es.AppendTo(nil),
		inGroup: map[uint64]bool{}, kps: map[uint64][]byte{}, leaf: map[uint64]uint32{}, lastOut: map[uint64][]Outbound{}}
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
	g.deliver(m, wire.OpMLSExternalSender, g.es, true)
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

// propose builds external proposals at the gateway's epoch.
func (g *gateway) propose(ps ...*mls.Proposal) (payload []byte, refs [][]byte) {
	g.t.Helper()
	gid := make([]byte, 8)
	for i := range 8 {
		gid[i] = byte(g.channel >> (56 - 8*i))
	}
	e := wire.ProposalsEvent{Op: wire.ProposalsAppend}
	for _, p := range ps {
		msg, ref, err := mls.NewExternalProposal(gid, g.epoch, 0, p, g.key)
		if err != nil {
			g.t.Fatal(err)
		}
		e.Raw = append(e.Raw, msg)
		refs = append(refs, ref)
	}
	return e.AppendTo(nil), refs
}

func (g *gateway) addProposal(uid uint64) *mls.Proposal {
	kp, err := mls.UnmarshalKeyPackage(g.kps[uid])
	if err != nil {
		g.t.Fatal(err)
	}
	return &mls.Proposal{Type: mls.ProposalAdd, KeyPackage: kp}
}

// recipients are the members that take proposals: the established group,
// or every pending member when there is none.
func (g *gateway) recipients(exclude uint64) []member {
	var rs []member
	for _, m := range g.members {
		if m.UID() == exclude {
			continue
		}
		if g.epoch == 0 || g.inGroup[m.UID()] {
			rs = append(rs, m)
		}
	}
	return rs
}

// broadcastProposals sends op 27 and collects the op 28 commits.
func (g *gateway) broadcastProposals(to []member, payload []byte) (senders []member, commits []wire.CommitWelcomeCommand) {
	g.t.Helper()
	for _, m := range to {
		for _, o := range g.deliver(m, wire.OpMLSProposals, payload, true) {
			if o.Op != wire.OpMLSCommitWelcome {
				g.t.Fatalf("%s answered op 27 with %s", m.Name(), o.Op)
			}
			var c wire.CommitWelcomeCommand
			if err := c.Unmarshal(o.Payload); err != nil {
				g.t.Fatalf("%s sent a bad op 28: %v", m.Name(), err)
			}
			senders = append(senders, m)
			commits = append(commits, c)
		}
	}
	return senders, commits
}

// announce broadcasts the winning commit (op 29 to members of the
// committer's group) and welcome (op 30 to joiners), then executes the
// transition once every recipient is ready. It returns the op 31 senders.
func (g *gateway) announce(committer member, c wire.CommitWelcomeCommand, joiners []member) (invalid []member) {
	g.t.Helper()
	g.tid++
	tid := g.tid
	info, err := mls.InspectCommit(c.Commit)
	if err != nil {
		g.t.Fatal(err)
	}
	var oldMembers []member
	if g.epoch == 0 {
		oldMembers = []member{committer}
	} else {
		for _, m := range g.members {
			if g.inGroup[m.UID()] {
				oldMembers = append(oldMembers, m)
			}
		}
	}
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
	tm := wire.TransitionMessage{TransitionID: tid, Message: c.Commit}
	for _, m := range oldMembers {
		handle(m, g.deliver(m, wire.OpMLSAnnounceCommitTransition, tm.AppendTo(nil), true))
	}
	if len(joiners) > 0 {
		wm := wire.TransitionMessage{TransitionID: tid, Message: c.Welcome}
		for _, m := range joiners {
			handle(m, g.deliver(m, wire.OpMLSWelcome, wm.AppendTo(nil), true))
		}
	}
	g.epoch = info.Epoch + 1
	for _, m := range joiners {
		g.inGroup[m.UID()] = true
	}
	g.inGroup[committer.UID()] = true
	for _, m := range g.members {
		if g.inGroup[m.UID()] && !ready[m.UID()] && !contains(invalid, m) {
			g.t.Fatalf("%s did not send op 23 for transition %d", m.Name(), tid)
		}
	}
	for _, m := range g.members {
		if ready[m.UID()] {
			g.deliver(m, wire.OpExecuteTransition, jsonBytes(wire.ExecuteTransitionEvent{TransitionID: tid}), false)
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

// pick returns the winning commit among collected ones.
func (g *gateway) pick(senders []member, commits []wire.CommitWelcomeCommand) (member, wire.CommitWelcomeCommand) {
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

// create establishes the group among all connected pending members.
func (g *gateway) create() {
	g.t.Helper()
	var senders []member
	var commits []wire.CommitWelcomeCommand
	for _, m := range g.members {
		var ps []*mls.Proposal
		for _, o := range g.members {
			if o.UID() != m.UID() {
				ps = append(ps, g.addProposal(o.UID()))
			}
		}
		payload, _ := g.propose(ps...)
		s, c := g.broadcastProposals([]member{m}, payload)
		senders, commits = append(senders, s...), append(commits, c...)
	}
	w, c := g.pick(senders, commits)
	var joiners []member
	for _, m := range g.members {
		if m.UID() != w.UID() {
			joiners = append(joiners, m)
		}
	}
	if inv := g.announce(w, c, joiners); len(inv) > 0 {
		g.t.Fatalf("%s rejected the group", inv[0].Name())
	}
	g.refreshLeaves()
}

// add proposes m (already connected) to the established group.
func (g *gateway) add(m member) []member {
	g.t.Helper()
	payload, _ := g.propose(g.addProposal(m.UID()))
	s, c := g.broadcastProposals(g.recipients(m.UID()), payload)
	w, cw := g.pick(s, c)
	inv := g.announce(w, cw, []member{m})
	g.refreshLeaves()
	return inv
}

// remove disconnects m and commits its removal.
func (g *gateway) remove(m member) {
	g.t.Helper()
	var rest []member
	for _, o := range g.members {
		if o.UID() != m.UID() {
			rest = append(rest, o)
			g.deliver(o, wire.OpClientDisconnect, jsonBytes(wire.ClientDisconnectEvent{UserID: strconv.FormatUint(m.UID(), 10)}), false)
		}
	}
	g.members = rest
	leaf := g.leaf[m.UID()]
	delete(g.inGroup, m.UID())
	payload, _ := g.propose(&mls.Proposal{Type: mls.ProposalRemove, Removed: leaf})
	s, c := g.broadcastProposals(g.recipients(0), payload)
	w, cw := g.pick(s, c)
	if inv := g.announce(w, cw, nil); len(inv) > 0 {
		g.t.Fatalf("%s rejected a remove commit", inv[0].Name())
	}
	g.refreshLeaves()
}

// refreshLeaves learns leaf indices from a Go member's view (the gateway
// would track them from the commits it validates).
func (g *gateway) refreshLeaves() {
	for _, m := range g.members {
		if gm, ok := m.(*goMember); ok && g.inGroup[m.UID()] {
			gm.s.mu.Lock()
			members := gm.s.group.Members()
			gm.s.mu.Unlock()
			clear(g.leaf)
			for i, id := range members {
				var uid uint64
				for _, b := range id {
					uid = uid<<8 | uint64(b)
				}
				g.leaf[uid] = i
			}
			return
		}
	}
	g.t.Fatal("no Go member in the group to learn leaves from")
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
