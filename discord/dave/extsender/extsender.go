// Package extsender is the voice gateway's side of DAVE: the MLS external
// sender (DAVE whitepaper §"Voice Gateway", §"External Sender"). It signs
// Add/Remove proposals (op 27), validates and routes commits and welcomes
// (op 28 → ops 29/30) and tracks the epoch and the roster's leaf indices.
// It holds no private group secrets: the gateway is not a group member.
//
// The Discord simulator's voice server uses it; it does no I/O. A Sender is
// not safe for concurrent use.
package extsender

import (
	"crypto/ecdsa"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/wire"
)

var (
	errCommit  = errors.New("extsender: invalid commit")
	errUnknown = errors.New("extsender: unknown user")
)

type proposal struct {
	ref     []byte
	add     uint64 // user added (Add)
	removed uint32 // leaf removed (Remove)
	isAdd   bool
}

// Sender is the external sender of one voice channel's group.
type Sender struct {
	key         *ecdsa.PrivateKey
	pkg         []byte
	groupID     []byte
	epoch       uint64
	established bool
	roster      []uint64 // leaf index -> user id; 0 is a blank leaf
	proposals   []proposal
	tid         uint16
}

// New makes an external sender with a fresh P-256 key for channel channelID.
func New(channelID uint64) (*Sender, error) {
	key, err := mls.GenerateSignatureKey()
	if err != nil {
		return nil, fmt.Errorf("extsender: %w", err)
	}
	es := mls.ExternalSender{
		SignatureKey: mls.SignaturePublicKey(key),
		Credential:   mls.Credential{Type: mls.CredentialBasic, Identity: make([]byte, 8)},
	}
	return &Sender{key: key, pkg: es.AppendTo(nil), groupID: binary.BigEndian.AppendUint64(nil, channelID)}, nil
}

// Package is the op 25 payload (ExternalSender).
func (s *Sender) Package() []byte { return s.pkg }

// Epoch is the epoch proposals are made for (0 before the group exists).
func (s *Sender) Epoch() uint64 { return s.epoch }

// Established reports whether a first commit has been accepted.
func (s *Sender) Established() bool { return s.established }

// Leaf returns uid's leaf index in the established group.
func (s *Sender) Leaf(uid uint64) (uint32, bool) {
	i := slices.Index(s.roster, uid)
	return uint32(i), i >= 0 && uid != 0
}

// Members lists the user ids in the established group, by leaf order.
func (s *Sender) Members() []uint64 {
	var m []uint64
	for _, u := range s.roster {
		if u != 0 {
			m = append(m, u)
		}
	}
	return m
}

func (s *Sender) propose(p *mls.Proposal) (msg, ref []byte, err error) {
	return mls.NewExternalProposal(s.groupID, s.epoch, 0, p, s.key)
}

// Propose returns one op 27 payload proposing the addition of the members
// whose op 26 key packages are given and the removal of the given users,
// and the ProposalRefs (for revokes). Key packages are validated first.
func (s *Sender) Propose(addKeyPackages [][]byte, removeUsers []uint64) (payload []byte, refs [][]byte, err error) {
	e := wire.ProposalsEvent{Op: wire.ProposalsAppend}
	var added []proposal
	for _, u := range removeUsers {
		leaf, ok := s.Leaf(u)
		if !ok || !s.established {
			return nil, nil, fmt.Errorf("%w: %d", errUnknown, u)
		}
		msg, ref, err := s.propose(&mls.Proposal{Type: mls.ProposalRemove, Removed: leaf})
		if err != nil {
			return nil, nil, err
		}
		e.Raw = append(e.Raw, msg)
		added = append(added, proposal{ref: ref, removed: leaf})
	}
	for _, b := range addKeyPackages {
		kp, err := mls.UnmarshalKeyPackage(b)
		if err != nil {
			return nil, nil, fmt.Errorf("extsender: add: %w", err)
		}
		if err := kp.Verify(); err != nil {
			return nil, nil, fmt.Errorf("extsender: add: %w", err)
		}
		lf := &kp.LeafNode
		if len(lf.Credential.Identity) != 8 || lf.NotBefore != 0 || lf.NotAfter != ^uint64(0) {
			return nil, nil, fmt.Errorf("extsender: add: not a DAVE key package")
		}
		msg, ref, err := s.propose(&mls.Proposal{Type: mls.ProposalAdd, KeyPackage: kp})
		if err != nil {
			return nil, nil, err
		}
		e.Raw = append(e.Raw, msg)
		added = append(added, proposal{ref: ref, isAdd: true, add: binary.BigEndian.Uint64(lf.Credential.Identity)})
	}
	s.proposals = append(s.proposals, added...)
	for _, p := range added {
		refs = append(refs, p.ref)
	}
	return e.AppendTo(nil), refs, nil
}

// Revoke returns the op 27 payload revoking proposals by reference and
// forgets them.
func (s *Sender) Revoke(refs ...[]byte) []byte {
	for _, r := range refs {
		s.proposals = slices.DeleteFunc(s.proposals, func(p proposal) bool { return string(p.ref) == string(r) })
	}
	e := wire.ProposalsEvent{Op: wire.ProposalsRevoke, Refs: refs}
	return e.AppendTo(nil)
}

// Announcement is what the gateway broadcasts for an accepted commit.
type Announcement struct {
	TransitionID uint16
	Commit       []byte   // op 29 payload
	Welcome      []byte   // op 30 payload, nil when nobody joins
	CommitTo     []uint64 // members that process the commit (incl. the committer)
	WelcomeTo    []uint64 // members that join by the welcome
}

// AcceptCommit validates a member's op 28 (WP §"Voice Gateway Commit
// Validity": current epoch, only references to known unrevoked Add/Remove
// proposals) and, if it is the first for this epoch, returns the
// announcement and moves to the next epoch. The roster follows MLS leaf
// placement (leftmost blank leaf, truncation of trailing blanks).
func (s *Sender) AcceptCommit(from uint64, op28 []byte) (*Announcement, error) {
	var cw wire.CommitWelcomeCommand
	if err := cw.Unmarshal(op28); err != nil {
		return nil, err
	}
	ci, err := mls.InspectCommit(cw.Commit)
	if err != nil {
		return nil, err
	}
	if string(ci.GroupID) != string(s.groupID) || ci.Epoch != s.epoch {
		return nil, fmt.Errorf("%w: epoch %d, expected %d", errCommit, ci.Epoch, s.epoch)
	}
	if len(ci.Inline) > 0 || len(ci.Refs) == 0 {
		return nil, fmt.Errorf("%w: %d inline proposals, %d references", errCommit, len(ci.Inline), len(ci.Refs))
	}
	if s.established {
		if leaf, ok := s.Leaf(from); !ok || leaf != ci.Committer {
			return nil, fmt.Errorf("%w: committer leaf %d is not user %d", errCommit, ci.Committer, from)
		}
	}
	var adds []uint64
	var removes []uint32
	for _, r := range ci.Refs {
		i := slices.IndexFunc(s.proposals, func(p proposal) bool { return string(p.ref) == string(r) })
		if i < 0 {
			return nil, fmt.Errorf("%w: unknown proposal %x", errCommit, r)
		}
		if p := s.proposals[i]; p.isAdd {
			adds = append(adds, p.add)
		} else {
			removes = append(removes, p.removed)
		}
	}
	if (len(adds) > 0) != (cw.Welcome != nil) {
		return nil, fmt.Errorf("%w: %d adds with welcome %v", errCommit, len(adds), cw.Welcome != nil)
	}
	a := &Announcement{}
	if s.established {
		a.CommitTo = s.Members()
	} else {
		a.CommitTo = []uint64{from}
		s.roster = []uint64{from}
	}
	for _, l := range removes {
		if int(l) < len(s.roster) {
			gone := s.roster[l]
			s.roster[l] = 0
			a.CommitTo = slices.DeleteFunc(a.CommitTo, func(u uint64) bool { return u == gone })
		}
	}
	for len(s.roster) > 0 && s.roster[len(s.roster)-1] == 0 {
		s.roster = s.roster[:len(s.roster)-1]
	}
	for _, u := range adds {
		if i := slices.Index(s.roster, 0); i >= 0 {
			s.roster[i] = u
		} else {
			s.roster = append(s.roster, u)
		}
	}
	s.tid++
	if s.tid == 0 {
		s.tid = 1 // 0 means "execute now"
	}
	a.TransitionID = s.tid
	a.Commit = (&wire.TransitionMessage{TransitionID: s.tid, Message: cw.Commit}).AppendTo(nil)
	if cw.Welcome != nil {
		a.Welcome = (&wire.TransitionMessage{TransitionID: s.tid, Message: cw.Welcome}).AppendTo(nil)
		a.WelcomeTo = adds
	}
	s.epoch = ci.Epoch + 1
	s.established = true
	s.proposals = nil
	return a, nil
}

// Reset forgets the group (sole-member reset, WP §"Sole member reset"):
// the caller sends op 24 {epoch: 1} and op 21 {transition_id: 0}.
func (s *Sender) Reset() {
	s.epoch, s.established, s.roster, s.proposals = 0, false, nil, nil
}
