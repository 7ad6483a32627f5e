package voicesim

import (
	"slices"
	"strconv"
	"time"
)

// The DAVE role's rounds: proposals, commit selection, transitions,
// version changes and timeouts (see dave.go). Everything runs under
// Server.mu.

// daveCommitLocked handles op 28: the first valid commit of the epoch is
// announced, the others are dropped.
func (s *Server) daveCommitLocked(c *daveCall, from *participant, payload []byte) {
	uid, err := parseSnowflake(from.key.user)
	if err != nil || c.phase != phaseProposing || c.refs[from.key.user] == nil {
		c.stats.CommitsRejected++
		return
	}
	a, err := c.x.AcceptCommit(uid, payload)
	if err != nil {
		c.stats.CommitsRejected++
		s.log.Debug("voicesim: dave: commit refused", "user", from.key.user, "err", err)
		return
	}
	c.stats.CommitsAccepted++
	for _, u := range a.WelcomeTo {
		su := strconv.FormatUint(u, 10)
		delete(c.kps, su)
		delete(c.flagged, su)
	}
	for u := range c.flagged {
		if uid, err := parseSnowflake(u); err == nil {
			if _, in := c.x.Leaf(uid); !in {
				delete(c.flagged, u)
			}
		}
	}
	c.phase, c.refs, c.adding, c.due = phaseTransition, nil, nil, time.Now().Add(s.opts.DAVETimeout)
	c.tid, c.tver, c.waiting, c.ready = a.TransitionID, 1, map[string]bool{}, nil
	for _, u := range a.CommitTo {
		if q := s.daveUserLocked(c, u); q != nil {
			c.waiting[q.key.user] = true
			s.daveSendLocked(c, q, OpMLSAnnounceCommit, a.Commit)
		}
	}
	for _, u := range a.WelcomeTo {
		if q := s.daveUserLocked(c, u); q != nil {
			c.waiting[q.key.user] = true
			w := a.Welcome
			if c.corrupt[q.key.user] {
				delete(c.corrupt, q.key.user)
				w = slices.Clone(w)
				w[len(w)-5] ^= 0xFF // inside the encrypted GroupInfo
			}
			s.daveSendLocked(c, q, OpMLSWelcome, w)
		}
	}
	s.daveMaybeExecuteLocked(c)
}

// daveUserLocked returns the participant for a user id in c's channel.
func (s *Server) daveUserLocked(c *daveCall, uid uint64) *participant {
	p := s.parts[partKey{c.key.guild, strconv.FormatUint(uid, 10)}]
	if p == nil || p.sess.ChannelID != c.key.channel {
		return nil
	}
	return p
}

// daveMaybeExecuteLocked sends op 22 once no recipient owes op 23.
func (s *Server) daveMaybeExecuteLocked(c *daveCall) {
	if c.phase != phaseTransition || len(c.waiting) > 0 {
		return
	}
	for _, u := range c.ready {
		if q := s.parts[partKey{c.key.guild, u}]; q != nil {
			q.daveVersion = c.tver
			s.daveSendJSONLocked(c, q, OpDAVEExecuteTransition, map[string]any{"transition_id": c.tid})
		}
	}
	if c.tver == 0 {
		c.stats.Downgrades++
	}
	c.stats.Transitions++
	c.phase, c.waiting, c.ready = phaseIdle, nil, nil
}

// daveRevokeLocked revokes every outstanding proposal and goes idle; the
// next reconcile proposes afresh.
func (s *Server) daveRevokeLocked(c *daveCall) {
	for u, refs := range c.refs {
		payload := c.x.Revoke(refs...)
		if q := s.parts[partKey{c.key.guild, u}]; q != nil {
			c.stats.Revokes++
			s.daveSendLocked(c, q, OpMLSProposals, payload)
		}
	}
	c.phase, c.refs, c.adding = phaseIdle, nil, nil
}

// daveReconcileLocked moves the call toward its target when idle: the
// protocol version everyone supports, and a group holding exactly the
// connected DAVE clients that sent a key package.
func (s *Server) daveReconcileLocked(c *daveCall) {
	if c.phase != phaseIdle {
		return
	}
	parts := s.channelPartsLocked(c)
	if len(parts) == 0 {
		return
	}
	want := 1
	for _, p := range parts {
		if !daveCapable(p) {
			want = 0
		}
	}
	if want != c.version {
		if want == 0 {
			s.daveDowngradeLocked(c, parts)
		} else {
			c.stats.Upgrades++
			s.daveRecreateLocked(c, parts)
		}
		return
	}
	if c.version == 0 {
		return
	}
	if c.x.Established() {
		s.daveProposeLocked(c, parts)
	} else {
		s.daveCreateLocked(c, parts)
	}
}

// daveDowngradeLocked starts a transition to protocol 0 (op 21).
func (s *Server) daveDowngradeLocked(c *daveCall, parts []*participant) {
	c.version = 0
	c.nextTID++
	c.phase, c.tid, c.tver, c.waiting, c.ready = phaseTransition, c.nextTID, 0, map[string]bool{}, nil
	c.due = time.Now().Add(s.opts.DAVETimeout)
	for _, p := range parts {
		if daveCapable(p) && p.daveVersion == 1 {
			c.waiting[p.key.user] = true
			s.daveSendJSONLocked(c, p, OpDAVEPrepareTransition, map[string]any{"transition_id": c.tid, "protocol_version": 0})
		}
	}
	s.daveMaybeExecuteLocked(c)
}

// daveRecreateLocked starts a new group at protocol 1: op 24 {epoch 1}
// and op 25 to every client; their new key packages follow.
func (s *Server) daveRecreateLocked(c *daveCall, parts []*participant) {
	c.version = 1
	c.x.Reset()
	clear(c.kps)
	clear(c.flagged)
	for _, p := range parts {
		s.daveSendJSONLocked(c, p, OpDAVEPrepareEpoch, map[string]any{"epoch": 1, "protocol_version": 1})
		s.daveSendLocked(c, p, OpMLSExternalSender, c.x.Package())
	}
}

// daveCreateLocked handles a call without an established group: once two
// clients sent key packages, each gets Add proposals for the others; the
// first commit creates the group and the rest join by Welcome.
func (s *Server) daveCreateLocked(c *daveCall, parts []*participant) {
	var pending []*participant
	for _, p := range parts {
		if c.kps[p.key.user] != nil {
			pending = append(pending, p)
		}
	}
	if len(pending) < 2 {
		return // a sole member waits in its pending group
	}
	c.refs = map[string][][]byte{}
	c.adding = nil
	for _, p := range pending {
		var kps [][]byte
		for _, q := range pending {
			if q != p {
				kps = append(kps, c.kps[q.key.user])
			}
		}
		payload, refs, err := c.x.Propose(kps, nil)
		if err != nil {
			s.log.Error("voicesim: dave: propose", "err", err)
			return
		}
		c.refs[p.key.user] = refs
		c.stats.Proposals++
		s.daveSendLocked(c, p, OpMLSProposals, payload)
		c.adding = append(c.adding, p.key.user)
	}
	c.phase, c.due = phaseProposing, time.Now().Add(s.opts.DAVETimeout)
}

// daveProposeLocked proposes, to the group's connected members, Removes
// for members who left or reported op 31 and Adds for clients with a key
// package. With nobody left to commit the group is re-created.
func (s *Server) daveProposeLocked(c *daveCall, parts []*participant) {
	here := map[string]*participant{}
	for _, p := range parts {
		here[p.key.user] = p
	}
	var removes []uint64
	var recipients []*participant
	inGroup := map[string]bool{}
	for _, uid := range c.x.Members() {
		u := strconv.FormatUint(uid, 10)
		inGroup[u] = true
		if p := here[u]; p != nil && !c.flagged[u] {
			recipients = append(recipients, p)
		} else {
			removes = append(removes, uid)
		}
	}
	if len(recipients) == 0 {
		c.stats.Resets++
		s.daveRecreateLocked(c, parts)
		return
	}
	var adds [][]byte
	var adding []string
	for _, p := range parts {
		u := p.key.user
		if kp := c.kps[u]; kp != nil && (!inGroup[u] || c.flagged[u]) {
			adds = append(adds, kp)
			adding = append(adding, u)
		}
	}
	if len(adds) == 0 && len(removes) == 0 {
		return
	}
	payload, refs, err := c.x.Propose(adds, removes)
	if err != nil {
		s.log.Error("voicesim: dave: propose", "err", err)
		return
	}
	c.refs = map[string][][]byte{}
	for _, p := range recipients {
		c.refs[p.key.user] = refs
	}
	c.adding, c.phase, c.due = adding, phaseProposing, time.Now().Add(s.opts.DAVETimeout)
	for _, p := range recipients {
		c.stats.Proposals++
		s.daveSendLocked(c, p, OpMLSProposals, payload)
	}
}

// daveTimerLoop cuts short proposal rounds and transitions that exceed
// Options.DAVETimeout. It runs until Close.
func (s *Server) daveTimerLoop() {
	t := time.NewTicker(min(s.opts.DAVETimeout/4, 250*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case now := <-t.C:
			s.mu.Lock()
			for _, c := range s.daves {
				if c.phase != phaseIdle && now.After(c.due) {
					s.daveExpireLocked(c)
				}
			}
			s.mu.Unlock()
		}
	}
}

// daveExpireLocked ends an overdue round (revoke, then propose again) or
// transition (execute for those that are ready).
func (s *Server) daveExpireLocked(c *daveCall) {
	c.stats.Timeouts++
	s.log.Debug("voicesim: dave: timeout", "channel", c.key.channel, "phase", c.phase.String())
	switch c.phase {
	case phaseProposing:
		s.log.Info("voicesim: dave: no valid commit in time, proposing again", "channel", c.key.channel)
		s.daveRevokeLocked(c)
	case phaseTransition:
		s.log.Info("voicesim: dave: transition timed out", "channel", c.key.channel, "transition_id", c.tid, "missing", len(c.waiting))
		clear(c.waiting)
		s.daveMaybeExecuteLocked(c)
	}
	s.daveDrainLocked(c)
}
