package dave

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/banterbot/banter/discord/dave/frame"
	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/wire"
)

// ProtocolVersion is the DAVE protocol version this package speaks.
const ProtocolVersion = 1

// Passthrough windows after transitions (djs/libdave behaviour).
const (
	upgradePassthrough = 10 * time.Second
)

// Default bounds on waiting for the voice gateway (see Config).
const (
	DefaultTransitionTimeout = 5 * time.Second
	DefaultJoinTimeout       = 15 * time.Second
)

// Config configures a Session.
type Config struct {
	UserID    uint64 // our user id
	ChannelID uint64 // the voice channel id (the MLS group id, big-endian)
	Logger    *slog.Logger
	Now       func() time.Time // clock for key expiry and timeouts; time.Now if nil
	Metrics   *Metrics         // may be nil
	// TransitionTimeout bounds the wait for op 22 after the session sent op
	// 23: the gateway executes a transition once every member is ready or
	// after its own timeout (WP §"Protocol Version Changes", about two
	// seconds), so an op 22 missing for longer was lost on the way, and the
	// session executes the transition itself (Expire). Default
	// DefaultTransitionTimeout; negative disables.
	TransitionTimeout time.Duration
	// JoinTimeout bounds the wait for a Welcome (or our own first commit)
	// after our key package, while other members are in the call: past it
	// the session reports op 31 and sends a new key package, so that the
	// gateway removes any stale leaf of ours and adds us again (WP
	// §"Recovery from Invalid Commit or Welcome"). Default
	// DefaultJoinTimeout; negative disables.
	JoinTimeout time.Duration
}

// Outbound is a gateway message the session asks the connection to send:
// JSON (Data is the encoded "d") or binary (Payload follows the opcode).
type Outbound struct {
	Op      wire.Opcode
	Binary  bool
	Data    []byte
	Payload []byte
}

// Status is the session's MLS state.
type Status int

// Session states (davey's numbering).
const (
	StatusInactive Status = iota
	StatusPending
	StatusActive
)

// String names the status.
func (s Status) String() string {
	switch s {
	case StatusInactive:
		return "inactive"
	case StatusPending:
		return "pending"
	case StatusActive:
		return "active"
	}
	return "unknown"
}

type transition struct {
	version int
	since   time.Time // when we said ready (op 23)
}

// Session is one DAVE participant. HandleGateway, EncryptOpus and
// DecryptOpus may be called from different goroutines; one mutex guards
// the state (frames take it briefly).
type Session struct {
	log     *slog.Logger
	now     func() time.Time
	metrics *Metrics
	self    uint64
	groupID []byte
	// timeouts (Config.TransitionTimeout, Config.JoinTimeout; 0 = off)
	transitionTimeout, joinTimeout time.Duration

	mu          sync.Mutex // guards following
	version     int        // negotiated protocol version (0 = passthrough)
	recognized  map[uint64]bool
	extSender   []byte
	sig         *ecdsa.PrivateKey
	kp          *mls.KeyPackage
	kpp         *mls.KeyPackagePrivate
	pending     *mls.Group // our own unestablished group (epoch 0)
	group       *mls.Group // the established group
	myCommit    []byte
	myNext      *mls.Group
	transitions map[uint16]transition
	passUntil   time.Time      // unencrypted frames accepted until then after an upgrade
	sendRatchet *frame.Ratchet // installed on execute
	enc         *frame.Encryptor
	dec         map[uint64]*frame.Decryptor
	joinSince   time.Time // when the current wait for a Welcome began (zero: not waiting)
	lastTID     uint16    // the last transition id the gateway named (op 21, 29, 30)
}

// NewSession returns a session for user cfg.UserID in channel cfg.ChannelID.
func NewSession(cfg Config) *Session {
	s := &Session{
		log:         cfg.Logger,
		now:         cfg.Now,
		metrics:     cfg.Metrics,
		self:        cfg.UserID,
		groupID:     binary.BigEndian.AppendUint64(nil, cfg.ChannelID),
		recognized:  map[uint64]bool{},
		transitions: map[uint16]transition{},
		enc:         frame.NewEncryptor(),
		dec:         map[uint64]*frame.Decryptor{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.transitionTimeout = timeoutOr(cfg.TransitionTimeout, DefaultTransitionTimeout)
	s.joinTimeout = timeoutOr(cfg.JoinTimeout, DefaultJoinTimeout)
	return s
}

// timeoutOr is d, def when d is 0, and 0 (off) when d is negative.
func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// MaxProtocolVersion is sent in Identify as max_dave_protocol_version.
func (s *Session) MaxProtocolVersion() int { return ProtocolVersion }

var errMalformed = errors.New("dave: malformed message")

// HandleGateway handles one gateway message (ops 4, 11, 13, 21–31):
// payload is the JSON "d" value or the binary payload after the opcode
// byte. It returns the messages to send, in order. An error means the
// message was malformed or unusable; the session stays consistent and any
// recovery messages (op 31, op 26) are still returned.
func (s *Session) HandleGateway(op wire.Opcode, payload []byte, binary bool) ([]Outbound, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.handleLocked(op, payload)
	s.updateJoinWaitLocked()
	if err != nil {
		s.metrics.malformed(op)
		return out, fmt.Errorf("dave: %s: %w", op, err)
	}
	return out, nil
}

func (s *Session) handleLocked(op wire.Opcode, payload []byte) ([]Outbound, error) {
	switch op {
	case wire.OpSessionDescription:
		var e wire.SessionDescriptionEvent
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		return s.setVersionLocked(e.DAVEProtocolVersion)
	case wire.OpClientsConnect:
		var e wire.ClientsConnectEvent
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		for _, u := range e.UserIDs {
			if id, err := strconv.ParseUint(u, 10, 64); err == nil {
				s.recognized[id] = true
			}
		}
	case wire.OpClientDisconnect:
		var e wire.ClientDisconnectEvent
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		if id, err := strconv.ParseUint(e.UserID, 10, 64); err == nil {
			delete(s.recognized, id)
			delete(s.dec, id)
		}
	case wire.OpPrepareTransition:
		var e wire.PrepareTransitionEvent
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		s.lastTID = e.TransitionID
		return s.prepareTransitionLocked(e)
	case wire.OpExecuteTransition:
		var e wire.ExecuteTransitionEvent
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		s.executeLocked(e.TransitionID)
	case wire.OpPrepareEpoch:
		var e wire.PrepareEpochEvent
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		if e.Epoch == 1 {
			// The new version takes effect with the next transition.
			return s.resetLocked()
		}
	case wire.OpMLSExternalSender:
		if _, err := mls.UnmarshalExternalSender(payload); err != nil {
			return nil, err
		}
		s.extSender = bytes.Clone(payload)
		if s.group == nil && s.kp != nil {
			return nil, s.createPendingLocked()
		}
	case wire.OpMLSProposals:
		var e wire.ProposalsEvent
		if err := e.Unmarshal(payload); err != nil {
			return nil, err
		}
		return s.proposalsLocked(&e)
	case wire.OpMLSAnnounceCommitTransition:
		var t wire.TransitionMessage
		if err := t.Unmarshal(payload); err != nil {
			return nil, err
		}
		s.lastTID = t.TransitionID
		return s.commitLocked(t)
	case wire.OpMLSWelcome:
		var t wire.TransitionMessage
		if err := t.Unmarshal(payload); err != nil {
			return nil, err
		}
		s.lastTID = t.TransitionID
		return s.welcomeLocked(t)
	}
	return nil, nil
}

func jsonOut(op wire.Opcode, v any) Outbound {
	b, err := json.Marshal(v)
	if err != nil {
		panic("dave: marshal " + op.String() + ": " + err.Error())
	}
	return Outbound{Op: op, Data: b}
}

// setVersionLocked handles op 4's dave_protocol_version.
func (s *Session) setVersionLocked(v int) ([]Outbound, error) {
	s.version = v
	if v == 0 {
		s.enc.SetPassthrough(true)
		for _, d := range s.dec {
			d.SetPassthrough(true, 0)
		}
		return nil, nil
	}
	return s.resetLocked()
}

// resetLocked drops all MLS state, makes a new key package and, if the
// external sender is known, a new pending group; it returns op 26.
func (s *Session) resetLocked() ([]Outbound, error) {
	s.group, s.pending, s.myCommit, s.myNext = nil, nil, nil, nil
	clear(s.transitions)
	s.joinSince = time.Time{} // a new key package: a new wait
	sig, err := mls.GenerateSignatureKey()
	if err != nil {
		return nil, err
	}
	kp, kpp, err := mls.NewKeyPackage(binary.BigEndian.AppendUint64(nil, s.self), sig)
	if err != nil {
		return nil, err
	}
	s.sig, s.kp, s.kpp = sig, kp, kpp
	if s.extSender != nil {
		if err := s.createPendingLocked(); err != nil {
			return nil, err
		}
	}
	s.log.Debug("dave: new key package", "epoch_reset", true)
	return []Outbound{{Op: wire.OpMLSKeyPackage, Binary: true, Payload: kp.AppendTo(nil)}}, nil
}

func (s *Session) createPendingLocked() error {
	es, err := mls.UnmarshalExternalSender(s.extSender)
	if err != nil {
		return err
	}
	g, err := mls.NewGroup(s.groupID, s.kp, s.kpp, []mls.Extension{mls.ExternalSendersExtension(*es)})
	if err != nil {
		return err
	}
	s.pending = g
	return nil
}

// current is the group proposals apply to: the established group, else
// our pending one.
func (s *Session) currentLocked() *mls.Group {
	if s.group != nil {
		return s.group
	}
	return s.pending
}

// proposalsLocked handles op 27 (WP §"Proposal Handling").
func (s *Session) proposalsLocked(e *wire.ProposalsEvent) ([]Outbound, error) {
	g := s.currentLocked()
	if g == nil {
		return nil, nil // no local group: ignored (WP §"Initial Group Creation")
	}
	switch e.Op {
	case wire.ProposalsAppend:
		for _, m := range e.Messages {
			if err := s.checkProposalLocked(m); err != nil {
				return nil, err
			}
			if _, err := g.AddProposal(m); err != nil {
				return nil, err
			}
		}
	case wire.ProposalsRevoke:
		for _, ref := range e.Refs {
			if err := g.Revoke(ref); err != nil {
				return nil, err
			}
		}
	}
	s.myCommit, s.myNext = nil, nil
	if g.PendingProposals() == 0 {
		return nil, nil
	}
	out, err := g.Commit()
	if err != nil {
		return nil, err
	}
	s.myCommit, s.myNext = out.Commit, out.Next
	cw := wire.CommitWelcomeCommand{Commit: out.Commit, Welcome: out.Welcome}
	return []Outbound{{Op: wire.OpMLSCommitWelcome, Binary: true, Payload: cw.AppendTo(nil)}}, nil
}

// checkProposalLocked applies DAVE's rules to an external proposal.
func (s *Session) checkProposalLocked(m *mls.MLSMessage) error {
	if m.Public == nil || m.Public.Content.Sender.Type != mls.SenderExternal || m.Public.Content.Proposal == nil {
		return fmt.Errorf("%w: proposal not from the external sender", errMalformed)
	}
	p := m.Public.Content.Proposal
	if p.Type == mls.ProposalAdd {
		id := p.KeyPackage.LeafNode.Credential.Identity
		if len(id) != 8 {
			return fmt.Errorf("%w: credential of %d bytes", errMalformed, len(id))
		}
		uid := binary.BigEndian.Uint64(id)
		if uid != s.self && !s.recognized[uid] {
			return fmt.Errorf("dave: add proposal for unrecognized user %d", uid)
		}
	}
	return nil
}
