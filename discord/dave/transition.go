package dave

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/banterbot/banter/discord/dave/frame"
	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/wire"
)

// commitLocked handles op 29 (WP §"Commit Handling", §"Client Commit Validity").
func (s *Session) commitLocked(t wire.TransitionMessage) ([]Outbound, error) {
	if s.myCommit != nil && bytes.Equal(t.Message, s.myCommit) {
		return s.adoptLocked(s.myNext, t.TransitionID), nil
	}
	if s.group == nil {
		// Not our commit and no established group: refuse to process
		// (libdave ignores it; the Welcome follows).
		return nil, nil
	}
	m, err := mls.UnmarshalMLSMessage(t.Message)
	if err != nil {
		return s.invalidLocked(t.TransitionID, err)
	}
	if m.Public != nil && !bytes.Equal(m.Public.Content.GroupID, s.groupID) {
		return nil, nil // another group's commit: ignored
	}
	if m.Public != nil && m.Public.Content.Commit != nil {
		for _, p := range m.Public.Content.Commit.Proposals {
			if p.Proposal != nil {
				return s.invalidLocked(t.TransitionID, errors.New("commit with an inline proposal"))
			}
		}
	}
	next, _, err := s.group.ProcessCommit(m)
	if errors.Is(err, mls.ErrRemoved) {
		s.log.Info("dave: removed from the group")
		return s.resetLocked()
	}
	if err != nil {
		return s.invalidLocked(t.TransitionID, err)
	}
	if err := checkRoster(next); err != nil {
		return s.invalidLocked(t.TransitionID, err)
	}
	return s.adoptLocked(next, t.TransitionID), nil
}

// welcomeLocked handles op 30 (WP §"Welcome Handling").
func (s *Session) welcomeLocked(t wire.TransitionMessage) ([]Outbound, error) {
	if s.group != nil || s.kp == nil {
		return nil, nil // already in a group, or not initialized: ignored
	}
	w, err := mls.UnmarshalWelcome(t.Message)
	if err != nil {
		return s.invalidLocked(t.TransitionID, err)
	}
	g, err := mls.Join(w, s.kp, s.kpp, nil)
	if err != nil {
		return s.invalidLocked(t.TransitionID, err)
	}
	es := g.ExternalSenders()
	if len(es) != 1 || !bytes.Equal(es[0].AppendTo(nil), s.extSender) {
		return s.invalidLocked(t.TransitionID, errors.New("welcome: external sender differs from op 25"))
	}
	if err := checkRoster(g); err != nil {
		return s.invalidLocked(t.TransitionID, err)
	}
	return s.adoptLocked(g, t.TransitionID), nil
}

// checkRoster rejects groups with malformed or duplicate user credentials (WP §"Client Commit Validity").
func checkRoster(g *mls.Group) error {
	seen := map[string]bool{}
	for _, id := range g.Members() {
		if len(id) != 8 {
			return fmt.Errorf("dave: member credential of %d bytes", len(id))
		}
		if seen[string(id)] {
			return fmt.Errorf("dave: duplicate user %d in the group", binary.BigEndian.Uint64(id))
		}
		seen[string(id)] = true
	}
	return nil
}

// invalidLocked reports an unprocessable commit or welcome with op 31 and
// starts over with a new key package (WP §"Recovery from Invalid Commit or Welcome").
func (s *Session) invalidLocked(tid uint16, cause error) ([]Outbound, error) {
	s.metrics.invalid()
	s.log.Warn("dave: invalid commit or welcome", "transition_id", tid, "err", cause)
	out := []Outbound{jsonOut(wire.OpMLSInvalidCommitWelcome, wire.InvalidCommitWelcomeCommand{TransitionID: tid})}
	more, err := s.resetLocked()
	return append(out, more...), err
}

// adoptLocked makes g the established group: receive ratchets for every
// other member are installed now (old ones expire later), our send ratchet
// on execute. It returns op 23 unless tid is 0 (execute at once).
func (s *Session) adoptLocked(g *mls.Group, tid uint16) []Outbound {
	s.group, s.pending, s.myCommit, s.myNext = g, nil, nil, nil
	for _, id := range g.Members() {
		uid := binary.BigEndian.Uint64(id)
		if uid == s.self {
			continue
		}
		s.decryptorLocked(uid).TransitionToRatchet(frame.NewRatchet(frame.SenderBaseSecret(g, uid)))
	}
	s.sendRatchet = frame.NewRatchet(frame.SenderBaseSecret(g, s.self))
	s.metrics.epoch(g.Epoch())
	if tid == 0 {
		s.applyLocked(ProtocolVersion)
		return nil
	}
	s.transitions[tid] = transition{version: ProtocolVersion, since: s.now()}
	return []Outbound{jsonOut(wire.OpTransitionReady, wire.TransitionReadyCommand{TransitionID: tid})}
}

// prepareTransitionLocked handles op 21.
func (s *Session) prepareTransitionLocked(e wire.PrepareTransitionEvent) ([]Outbound, error) {
	if e.TransitionID == 0 {
		s.applyLocked(e.ProtocolVersion)
		return nil, nil
	}
	s.transitions[e.TransitionID] = transition{version: e.ProtocolVersion, since: s.now()}
	if e.ProtocolVersion == 0 {
		for _, d := range s.dec {
			d.SetPassthrough(true, 0)
		}
	}
	return []Outbound{jsonOut(wire.OpTransitionReady, wire.TransitionReadyCommand{TransitionID: e.TransitionID})}, nil
}

// executeLocked handles op 22.
func (s *Session) executeLocked(tid uint16) {
	t, ok := s.transitions[tid]
	if !ok {
		return
	}
	delete(s.transitions, tid)
	s.applyLocked(t.version)
}

// applyLocked switches the sender to protocol version v.
func (s *Session) applyLocked(v int) {
	s.metrics.transition()
	old := s.version
	s.version = v
	if v == 0 {
		s.enc.SetPassthrough(true)
		for _, d := range s.dec {
			d.SetPassthrough(true, 0)
		}
		return
	}
	s.enc.SetPassthrough(false)
	if s.sendRatchet == nil && s.group == nil && s.pending != nil {
		// Sole-member reset: transition to our pending group (WP §"Sole member reset").
		s.sendRatchet = frame.NewRatchet(frame.SenderBaseSecret(s.pending, s.self))
	}
	if s.sendRatchet != nil {
		s.enc.SetRatchet(s.sendRatchet)
		s.sendRatchet = nil
	}
	if old == 0 {
		s.passUntil = s.now().Add(upgradePassthrough)
		for _, d := range s.dec {
			d.SetPassthrough(false, upgradePassthrough)
		}
	}
}

func (s *Session) decryptorLocked(uid uint64) *frame.Decryptor {
	d, ok := s.dec[uid]
	if !ok {
		d = frame.NewDecryptor(s.now)
		if s.version == 0 {
			d.SetPassthrough(true, 0)
		} else if left := s.passUntil.Sub(s.now()); left > 0 {
			d.SetPassthrough(false, left)
		}
		s.dec[uid] = d
	}
	return d
}

// ErrNotReady is returned by EncryptOpus before the first transition gives
// us a sender key: the frame should be dropped (WP: send nothing yet).
var ErrNotReady = errors.New("dave: no sender key yet")

// EncryptOpus appends the DAVE frame for opus to dst. Before the first
// transition it fails with an error (send nothing); silence and
// passthrough frames are copied unchanged.
func (s *Session) EncryptOpus(dst, opus []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.enc.Ready() && !frame.IsSilence(opus) {
		return dst, ErrNotReady
	}
	return s.enc.Encrypt(dst, opus)
}

// DecryptOpus appends the Opus payload of a frame sent by userID to dst.
func (s *Session) DecryptOpus(userID string, dst, f []byte) ([]byte, error) {
	uid, err := parseUserID(userID)
	if err != nil {
		return dst, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.decryptorLocked(uid).Decrypt(dst, f)
	if err != nil {
		s.metrics.decryptFailure()
		return out, fmt.Errorf("dave: decrypt from %s: %w", userID, err)
	}
	return out, nil
}

// Status reports the MLS state.
func (s *Session) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.group != nil:
		return StatusActive
	case s.kp != nil:
		return StatusPending
	}
	return StatusInactive
}

// Epoch is the established group's epoch (0 without one).
func (s *Session) Epoch() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.group == nil {
		return 0
	}
	return s.group.Epoch()
}

// EpochAuthenticator is the established group's epoch authenticator (nil
// without one); equal values prove members share the key schedule.
func (s *Session) EpochAuthenticator() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.group == nil {
		return nil
	}
	return bytes.Clone(s.group.EpochAuthenticator())
}

// ProtocolVersion is the protocol version in effect for sending.
func (s *Session) ProtocolVersion() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

func parseUserID(s string) (uint64, error) {
	var v uint64
	if s == "" {
		return 0, fmt.Errorf("dave: empty user id")
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || v > (1<<64-1)/10 {
			return 0, fmt.Errorf("dave: bad user id %q", s)
		}
		v = v*10 + uint64(c-'0')
	}
	return v, nil
}

// Members returns the user ids in the established group (nil without one).
func (s *Session) Members() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.group == nil {
		return nil
	}
	var ids []uint64
	for _, id := range s.group.Members() {
		ids = append(ids, binary.BigEndian.Uint64(id))
	}
	slices.Sort(ids)
	return ids
}
