package dave

import (
	"slices"
	"time"

	"github.com/banterbot/banter/discord/dave/wire"
)

// A DAVE transition that never completes must not leave the session stuck
// (for a bot: speaking into a call nobody can decrypt, or not at all). The
// session itself holds no timer: the owner (voiceadapter) asks NextExpiry
// when to call Expire, which acts on what is overdue:
//
//   - op 22 missing TransitionTimeout after our op 23: the gateway
//     executes a transition when every member is ready or after its own
//     timeout, so the op 22 was lost on the way. The transition is executed
//     here (the new sender key, or protocol 0): every member that processed
//     the commit or welcome installed our new receive key at that point.
//   - no Welcome JoinTimeout after our key package while others are in the
//     call: op 31 with the last transition id the gateway named and a new
//     key package (op 26). The gateway then removes whatever leaf of ours it
//     holds and proposes us again (WP §"Recovery from Invalid Commit or
//     Welcome").
//
// Both are logged (dave_transition_timeout, dave_join_timeout) and counted
// (banter_dave_timeouts_total{kind}).

// NextExpiry reports how long from now (the session's clock) Expire has
// something to do, and false when nothing is being waited for.
func (s *Session) NextExpiry() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due time.Time
	if s.transitionTimeout > 0 {
		for _, t := range s.transitions {
			if d := t.since.Add(s.transitionTimeout); due.IsZero() || d.Before(due) {
				due = d
			}
		}
	}
	if s.joinTimeout > 0 && !s.joinSince.IsZero() {
		if d := s.joinSince.Add(s.joinTimeout); due.IsZero() || d.Before(due) {
			due = d
		}
	}
	if due.IsZero() {
		return 0, false
	}
	return max(due.Sub(s.now()), 0), true
}

// Expire acts on overdue waits (see NextExpiry) and returns the messages to
// send (op 31 and op 26 after a join timeout). Calling it early does nothing.
func (s *Session) Expire() []Outbound {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var overdue []uint16
	if s.transitionTimeout > 0 {
		for tid, t := range s.transitions {
			if !now.Before(t.since.Add(s.transitionTimeout)) {
				overdue = append(overdue, tid)
			}
		}
	}
	slices.Sort(overdue)
	for _, tid := range overdue {
		t := s.transitions[tid]
		delete(s.transitions, tid)
		s.metrics.timeout("transition")
		s.log.Warn("dave_transition_timeout", "transition_id", tid, "protocol_version", t.version,
			"waited_ms", now.Sub(t.since).Milliseconds(), "action", "execute")
		s.applyLocked(t.version)
	}
	var out []Outbound
	if s.joinTimeout > 0 && !s.joinSince.IsZero() && !now.Before(s.joinSince.Add(s.joinTimeout)) {
		s.metrics.timeout("join")
		s.log.Warn("dave_join_timeout", "transition_id", s.lastTID, "waited_ms", now.Sub(s.joinSince).Milliseconds(),
			"action", "invalid_commit_welcome")
		out = append(out, jsonOut(wire.OpMLSInvalidCommitWelcome, wire.InvalidCommitWelcomeCommand{TransitionID: s.lastTID}))
		more, err := s.resetLocked()
		if err != nil {
			s.log.Error("dave: new key package", "err", err)
		}
		out = append(out, more...)
	}
	s.updateJoinWaitLocked()
	return out
}

// updateJoinWaitLocked starts or ends the wait for a Welcome: we are
// waiting while DAVE is on, we sent a key package and have no group, and
// another member is in the call (a sole member waits in its pending group
// by design).
func (s *Session) updateJoinWaitLocked() {
	waiting := s.version > 0 && s.group == nil && s.kp != nil && s.extSender != nil && s.othersLocked()
	switch {
	case !waiting:
		s.joinSince = time.Time{}
	case s.joinSince.IsZero():
		s.joinSince = s.now()
	}
}

// othersLocked reports whether another user is in the call.
func (s *Session) othersLocked() bool {
	for id := range s.recognized {
		if id != s.self {
			return true
		}
	}
	return false
}
