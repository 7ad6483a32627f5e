package voicesim

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/banterbot/banter/discord/dave/extsender"
	"github.com/banterbot/banter/discord/dave/mls"
	davewire "github.com/banterbot/banter/discord/dave/wire"
)

// The DAVE server role (DAVE whitepaper v1.1.4 §"Voice Gateway"; dave-notes
// §1.3, §3.2, §3.3): per voice channel, one MLS external sender
// (discord/dave/extsender) that proposes Adds for the key packages
// clients send (op 26) and Removes for members who left or reported an
// unusable commit or welcome (op 31), revokes proposals that went stale,
// accepts the first valid commit of each epoch (op 28) and announces it
// (op 29 to the group, op 30 to the joiners) with a transition id, and
// runs transitions: op 23 from every recipient, then op 22. Protocol
// version changes (a client without DAVE joins or leaves) are op 21/22
// downgrades and op 24 {epoch 1} re-creations. The server never sees a
// media key: it holds only the external sender's signing key.
//
// Everything here runs under Server.mu. Messages to in-process members are
// handled synchronously by their dave.Session; what they answer is queued
// and processed by the same drain loop, so nothing recurses.

// DAVEStats counts the DAVE server role's work in one channel.
type DAVEStats struct {
	KeyPackages     uint64 // valid op 26 received
	Proposals       uint64 // op 27 append messages sent (one per recipient)
	Revokes         uint64 // op 27 revoke messages sent (one per recipient)
	CommitsAccepted uint64 // op 28 accepted and announced (ops 29/30)
	CommitsRejected uint64 // op 28 that lost the race or failed validation
	Transitions     uint64 // transitions executed (op 22 sent)
	InvalidReports  uint64 // op 31 received
	Malformed       uint64 // undecodable op 26/28/23/31 payloads, key packages that are not the sender's
	Downgrades      uint64 // executed transitions to protocol 0
	Upgrades        uint64 // op 24 {epoch 1, protocol_version 1} re-creations after protocol 0
	Resets          uint64 // group re-creations because no group member was left
	Timeouts        uint64 // proposal rounds or transitions cut short by Options.DAVETimeout
	Withheld        uint64 // messages not sent because of WithholdDAVE
}

// DAVEState is a snapshot of one channel's DAVE state as the server sees it.
type DAVEState struct {
	// Version is the protocol version new clients get in op 4.
	Version int
	// Epoch is the MLS epoch proposals are made for (0 before the group
	// exists); Established reports whether a first commit was accepted.
	Epoch       uint64
	Established bool
	// Members are the user ids in the group, in leaf order.
	Members []string
	// Busy is true while proposals await a commit or a transition awaits
	// op 23 from its recipients.
	Busy  bool
	Stats DAVEStats
}

type davePhase int

const (
	phaseIdle       davePhase = iota
	phaseProposing            // op 27 sent, waiting for the first valid op 28
	phaseTransition           // op 29/30 or op 21 sent, waiting for op 23
)

// String names the phase (for logs).
func (p davePhase) String() string {
	switch p {
	case phaseIdle:
		return "idle"
	case phaseProposing:
		return "proposing"
	case phaseTransition:
		return "transition"
	}
	return "unknown"
}

type daveKey struct{ guild, channel string }

// daveCall is the DAVE state of one voice channel.
type daveCall struct {
	key     daveKey
	x       *extsender.Sender
	version int                 // what new clients are told in op 4
	started bool                // version decided (first op 4 sent)
	kps     map[string][]byte   // op 26 not yet proposed, by user
	flagged map[string]bool     // sent op 31: their leaf must go
	phase   davePhase           //
	refs    map[string][][]byte // proposing: outstanding refs by recipient
	adding  []string            // proposing: users whose Add is outstanding
	tid     uint16              // transitioning: id
	tver    int                 // transitioning: protocol version it executes
	waiting map[string]bool     // transitioning: recipients that owe op 23
	ready   []string            // transitioning: recipients that sent op 23
	nextTID uint16              // ids for op 21 transitions (commits use the sender's)
	stats   DAVEStats
	queue   []daveInput
	busy    bool            // draining
	corrupt map[string]bool // fault: corrupt the next op 30 to this user
	// withhold is a fault: how many of the next messages of an op to a
	// user are not sent (WithholdDAVE).
	withhold map[withholdKey]int
	due      time.Time // when the current round or transition times out
}

// daveInput is a message from a participant to the DAVE role.
type daveInput struct {
	from    *participant
	op      Op
	payload []byte
}

var errDAVEUserID = errors.New("DAVE needs numeric user and channel ids")

func parseSnowflake(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("%w: %q", errDAVEUserID, s)
	}
	return v, nil
}

// daveEnabled reports whether the server plays the DAVE server role.
func (s *Server) daveEnabled() bool { return s.opts.DAVE || s.opts.RequireDAVE }

// daveCallLocked returns the channel's DAVE state, creating it.
func (s *Server) daveCallLocked(guild, channel string) *daveCall {
	k := daveKey{guild, channel}
	if c := s.daves[k]; c != nil {
		return c
	}
	cid, err := parseSnowflake(channel)
	if err != nil {
		return nil
	}
	x, err := extsender.New(cid)
	if err != nil {
		s.log.Error("voicesim: dave external sender", "err", err)
		return nil
	}
	c := &daveCall{key: k, x: x, kps: map[string][]byte{}, flagged: map[string]bool{}, nextTID: 0x8000, corrupt: map[string]bool{},
		withhold: map[withholdKey]int{}}
	s.daves[k] = c
	return c
}

// daveCapable reports whether p takes part in DAVE.
func daveCapable(p *participant) bool {
	if p.member != nil {
		return p.member.dave != nil
	}
	return p.maxDAVE >= 1
}

// channelPartsLocked lists the participants in c's channel.
func (s *Server) channelPartsLocked(c *daveCall) []*participant {
	var out []*participant
	for _, q := range s.parts {
		if q.key.guild == c.key.guild && q.sess.ChannelID == c.key.channel {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *participant) int { return strings.Compare(a.key.user, b.key.user) })
	return out
}

// daveJoinVersionLocked returns the dave_protocol_version for p's op 4:
// 1 when DAVE is on, p and everyone in the call support it and the call
// is not at protocol 0. A call at 1 that a client without DAVE joins is
// downgraded by the next reconcile.
func (s *Server) daveJoinVersionLocked(p *participant) int {
	if !s.daveEnabled() || !daveCapable(p) {
		return 0
	}
	c := s.daveCallLocked(p.key.guild, p.sess.ChannelID)
	if c == nil {
		return 0
	}
	want := 1
	for _, q := range s.channelPartsLocked(c) {
		if !daveCapable(q) {
			want = 0
		}
	}
	if !c.started {
		c.version, c.started = want, true // the call's first op 4
	}
	return min(want, c.version)
}

// daveJoinedLocked runs after p got op 4 with version v: DAVE clients get
// the external sender (op 25), and the call is reconciled (a client
// without DAVE downgrades it).
func (s *Server) daveJoinedLocked(p *participant, v int) {
	if !s.daveEnabled() {
		return
	}
	c := s.daveCallLocked(p.key.guild, p.sess.ChannelID)
	if c == nil {
		return
	}
	p.daveVersion = v
	if v == 1 {
		s.daveSendLocked(c, p, OpMLSExternalSender, c.x.Package())
	}
	s.daveDrainLocked(c)
}

// daveLeftLocked runs after p left its channel.
func (s *Server) daveLeftLocked(p *participant) {
	c := s.daves[daveKey{p.key.guild, p.sess.ChannelID}]
	if c == nil {
		return
	}
	u := p.key.user
	delete(c.kps, u)
	delete(c.flagged, u)
	switch c.phase {
	case phaseTransition:
		delete(c.waiting, u)
		c.ready = slices.DeleteFunc(c.ready, func(r string) bool { return r == u })
		s.daveMaybeExecuteLocked(c)
	case phaseProposing:
		if slices.Contains(c.adding, u) || c.refs[u] != nil {
			s.daveRevokeLocked(c) // the joiner or a committer is gone
		}
	}
	if len(s.channelPartsLocked(c)) == 0 {
		delete(s.daves, c.key)
		return
	}
	s.daveDrainLocked(c)
}

// daveInputLocked queues a client's DAVE message (ops 23, 26, 28, 31) and
// processes the queue.
func (s *Server) daveInputLocked(p *participant, op Op, payload []byte) {
	c := s.daves[daveKey{p.key.guild, p.sess.ChannelID}]
	if c == nil {
		return
	}
	c.queue = append(c.queue, daveInput{from: p, op: op, payload: payload})
	s.daveDrainLocked(c)
}

// daveDrainLocked processes queued input, then reconciles the group with
// the call, until nothing changes. It does not recurse: a delivery to a
// member queues the member's answers.
func (s *Server) daveDrainLocked(c *daveCall) {
	if c.busy {
		return
	}
	c.busy = true
	defer func() { c.busy = false }()
	for {
		for len(c.queue) > 0 {
			in := c.queue[0]
			c.queue = c.queue[1:]
			if s.parts[in.from.key] != in.from {
				continue // left meanwhile
			}
			s.daveHandleLocked(c, in)
		}
		s.daveReconcileLocked(c)
		if len(c.queue) == 0 {
			return
		}
	}
}

// daveHandleLocked handles one client message.
func (s *Server) daveHandleLocked(c *daveCall, in daveInput) {
	u := in.from.key.user
	switch in.op {
	case OpMLSKeyPackage:
		if err := checkKeyPackage(u, in.payload); err != nil {
			c.stats.Malformed++
			s.log.Info("voicesim: dave: key package refused", "user", u, "err", err)
			return
		}
		c.stats.KeyPackages++
		c.kps[u] = in.payload
		if c.phase == phaseProposing && slices.Contains(c.adding, u) {
			s.daveRevokeLocked(c) // a newer key package replaces the proposed one
		}
	case OpMLSCommitWelcome:
		s.daveCommitLocked(c, in.from, in.payload)
	case OpDAVETransitionReady:
		var d transitionPayload
		if err := json.Unmarshal(in.payload, &d); err != nil {
			c.stats.Malformed++
			return
		}
		if c.phase == phaseTransition && d.TransitionID == int(c.tid) && c.waiting[u] {
			delete(c.waiting, u)
			c.ready = append(c.ready, u)
			s.daveMaybeExecuteLocked(c)
		}
	case OpMLSInvalidCommitWelcome:
		var d transitionPayload
		if err := json.Unmarshal(in.payload, &d); err != nil {
			c.stats.Malformed++
			return
		}
		c.stats.InvalidReports++
		s.log.Info("voicesim: dave: invalid commit or welcome reported", "user", u, "transition_id", d.TransitionID)
		if uid, err := parseSnowflake(u); err == nil {
			if _, in := c.x.Leaf(uid); in {
				c.flagged[u] = true
			}
		}
		if c.phase == phaseTransition {
			delete(c.waiting, u)
			s.daveMaybeExecuteLocked(c)
		}
	}
}

// checkKeyPackage validates an op 26 payload: a KeyPackage that verifies
// and whose basic credential is the sending user's id.
func checkKeyPackage(user string, b []byte) error {
	kp, err := mls.UnmarshalKeyPackage(b)
	if err != nil {
		return err
	}
	if err := kp.Verify(); err != nil {
		return err
	}
	id := kp.LeafNode.Credential.Identity
	uid, err := parseSnowflake(user)
	if err != nil {
		return err
	}
	if len(id) != 8 || binary.BigEndian.Uint64(id) != uid {
		return fmt.Errorf("voicesim: dave: key package credential %x is not user %s", id, user)
	}
	return nil
}

// daveSendLocked sends a binary DAVE message to p: over its WebSocket, or
// to a member's session (whose answers are queued).
func (s *Server) daveSendLocked(c *daveCall, p *participant, op Op, payload []byte) {
	if s.withheldLocked(c, p, op) {
		return
	}
	if p.member != nil {
		s.daveToMemberLocked(c, p, op, payload, true)
		return
	}
	f := p.out.add(func(seq uint16) outFrame {
		return outFrame{binary: true, data: appendServerBinary(nil, seq, op, payload)}
	})
	s.deliverLocked(p, f)
}

// daveSendJSONLocked sends a JSON DAVE message to p.
func (s *Server) daveSendJSONLocked(c *daveCall, p *participant, op Op, d any) {
	if s.withheldLocked(c, p, op) {
		return
	}
	if p.member != nil {
		b, err := json.Marshal(d)
		if err != nil {
			panic("voicesim: marshal " + op.String() + ": " + err.Error())
		}
		s.daveToMemberLocked(c, p, op, b, false)
		return
	}
	s.sendSeqJSONLocked(p, op, d)
}

// daveToMemberLocked hands a message to a member's dave.Session and queues
// what it answers.
func (s *Server) daveToMemberLocked(c *daveCall, p *participant, op Op, payload []byte, bin bool) {
	m := p.member
	if m.dave == nil {
		return
	}
	out, err := m.dave.HandleGateway(davewire.Opcode(op), payload, bin)
	if err != nil {
		s.log.Debug("voicesim: dave: member", "user", p.key.user, "op", op.String(), "err", err)
	}
	for _, o := range out {
		b := o.Payload
		if !o.Binary {
			b = o.Data
		}
		if c != nil {
			c.queue = append(c.queue, daveInput{from: p, op: Op(o.Op), payload: b})
		}
	}
}

// DAVE returns a snapshot of the DAVE state of a voice channel (the zero
// DAVEState if nobody is in it or DAVE is off).
func (s *Server) DAVE(guildID, channelID string) DAVEState {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.daves[daveKey{guildID, channelID}]
	if c == nil {
		return DAVEState{}
	}
	st := DAVEState{Version: c.version, Epoch: c.x.Epoch(), Established: c.x.Established(), Busy: c.phase != phaseIdle, Stats: c.stats}
	for _, u := range c.x.Members() {
		st.Members = append(st.Members, strconv.FormatUint(u, 10))
	}
	return st
}

// CorruptNextWelcome is a fault: the next op 30 (Welcome) sent to the user
// in the channel has a byte of its encrypted GroupInfo flipped, so the
// client cannot join and must answer op 31; the server then removes its
// leaf and re-adds it from its next key package.
func (s *Server) CorruptNextWelcome(guildID, channelID, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.daveCallLocked(guildID, channelID); c != nil {
		c.corrupt[userID] = true
	}
}

type withholdKey struct {
	user string
	op   Op
}

// withheldLocked reports (and uses up) a WithholdDAVE fault for this
// message.
func (s *Server) withheldLocked(c *daveCall, p *participant, op Op) bool {
	if c == nil {
		return false
	}
	k := withholdKey{p.key.user, op}
	if c.withhold[k] <= 0 {
		return false
	}
	c.withhold[k]--
	if c.withhold[k] == 0 {
		delete(c.withhold, k)
	}
	c.stats.Withheld++
	s.log.Info("voicesim: dave: message withheld (fault)", "user", p.key.user, "op", op.String())
	return true
}

// WithholdDAVE is a fault: the next n DAVE messages with opcode op that the
// server role would send the user in the channel are never sent (nor
// replayed on resume), as if lost between the gateway and the client. The
// role goes on as if they had been delivered. With op 22 (Execute
// Transition) the user's transition never completes: it said ready (op 23),
// the others switched keys. With op 30 (Welcome) the user never joins the
// group the others think it is in. DAVEStats.Withheld counts them.
func (s *Server) WithholdDAVE(guildID, channelID, userID string, op Op, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.daveCallLocked(guildID, channelID); c != nil && n > 0 {
		c.withhold[withholdKey{userID, op}] += n
	}
}
