package voice

import (
	"time"

	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
)

// The session loop's side of a speculative turn (see speculation.go): Stage A and a held reply
// while the member is still silent, then, at the end of the turn, the release of that reply or
// its discard. Everything here runs on the session loop, which is the only one to move a turn's
// phase; advance is the single place that acts on the speaker's word (proceed, confirmed,
// cancelled), whichever order it and the turn's own steps come in.

// audioHolder is a Responder that can hold a reply's audio back (Reply.Hold): only then does a
// speculation go past Stage A.
type audioHolder interface{ holdsAudio() }

// onEntered takes a transcribed turn: an ordinary one enters the conversation; a speculative
// one waits for its speaker's word.
func (s *session) onEntered(t *turn) {
	if t.spec == nil {
		if t.claimed() {
			t.steps <- step{} // its member went on with it (a false end) before it came in
			return
		}
		s.enter(t)
		return
	}
	t.spec.phase = specTranscribed
	s.advance(t)
}

// onSpecEvent takes the speaker's word on a speculative turn.
func (s *session) onSpecEvent(e specEvent) {
	if e.proceed {
		e.t.spec.proceedOK = true
	}
	s.advance(e.t)
}

// advance moves a speculative turn on by the speaker's word and how far the loop took it.
func (s *session) advance(t *turn) {
	sp := t.spec
	switch sp.phase {
	case specUnseen, specDeciding, specCancelling, specAbandoned, specOver:
		return // waiting for the transcript, Stage A or the reply's end; or settled
	}
	switch state, reason, end := sp.get(); state {
	case specCancelled:
		s.discardSpec(t, reason)
	case specConfirmed:
		s.confirmSpec(t, end)
	default:
		if sp.phase == specTranscribed && sp.proceedOK && t.sttErr == nil && t.drop == DropNone && s.canSpeculate(t) {
			sp.phase, sp.lineSeq = specDeciding, s.lineSeq
			s.spec, s.deciding = t, true
			t.steps <- step{decide: s.voiceTurn(t, s.svc.now()), speculative: true}
		}
	}
}

// canSpeculate reports whether the speculative turn may run Stage A now: speculation is on, the
// bot is free (not speaking, no turn being decided or waiting) and the turn would not be held
// for someone else still talking.
func (s *session) canSpeculate(t *turn) bool {
	return s.svc.cfg().Voice.Speculation.Enabled && s.spec == nil && !s.deciding && s.cur.Load() == nil &&
		len(s.queue) == 0 && len(s.deferred) == 0 && len(s.held) == 0 && !s.roomHold(t)
}

// roomHold reports whether the turn would be held while another member talks (room-aware
// coalescing: it does not address the bot).
func (s *session) roomHold(t *turn) bool {
	hold := time.Duration(s.svc.cfg().Voice.Endpointing.RoomHoldMs) * time.Millisecond
	return hold > 0 && !s.svc.opts.Engine.MatchName(s.guildID, s.svc.botNickname(s.guildID), t.Transcript).Addressed() && s.othersActive(t.SpeakerID)
}

// onSpecDecided takes speculative Stage A's decision: an admitted turn gets a held reply when
// the bot is free and the Responder can hold audio; any other decision waits for the turn's end.
func (s *session) onSpecDecided(dd decided) {
	t, sp := dd.t, dd.t.spec
	sp.d, sp.vt, sp.decidedAt, sp.phase = dd.d, dd.vt, s.svc.now(), specDecided
	t.marks.mark(PhaseAdmission, sp.decidedAt)
	_, holds := s.responder.(audioHolder)
	if state, _, _ := sp.get(); state == specPending && dd.d.Allowed() && holds && s.cur.Load() == nil {
		ctx, cancel, cost := s.replyContext()
		s.replySeq++
		rp := &replyRun{ar: &activeReply{id: s.replySeq, cancel: cancel, target: t.SpeakerID, owner: t}, ctx: ctx,
			turn: &t.Turn, owner: t, d: dd.d, marks: t.marks, spec: sp, hold: make(chan struct{}), cost: cost}
		// The prompt the reply will have once the turn enters the conversation.
		rp.prompt = s.promptInput(&t.Turn, dd.d, false)
		rp.prompt.lines = append(rp.prompt.lines, decision.ContextLine{Speaker: t.SpeakerName, Text: t.Transcript})
		if n := len(rp.prompt.lines) - timelineCap; n > 0 {
			rp.prompt.lines = rp.prompt.lines[n:]
		}
		sp.reply, sp.phase = rp, specReplying
		t.steps <- step{reply: rp}
	}
	s.advance(t)
}

// confirmSpec settles a speculative turn whose end came with the same audio: it is a turn of
// the conversation from here on. What the speculation built is used if the conversation did
// not change meanwhile (the held reply is released and plays at once); else the turn goes the
// ordinary way from its transcript.
func (s *session) confirmSpec(t *turn, end time.Time) {
	if t.claimed() {
		// Its member went on with it (a false end) before the loop saw its end: nothing of it
		// stands; the turn that continues it is answered.
		s.discardSpec(t, "false_end")
		return
	}
	sp := t.spec
	t.SpeechEnd = end
	fresh := s.lineSeq == sp.lineSeq && !s.roomHold(t)
	switch sp.phase {
	case specTranscribed:
		sp.phase = specOver
		s.usedSpec(t, "transcript", sp.transcribedAt)
		switch {
		case t.sttErr != nil:
			s.sttFailed(t, t.sttErr)
			t.steps <- step{}
		case t.drop != DropNone:
			s.dropTranscript(t, t.drop)
			t.steps <- step{}
		default:
			s.metrics.observePhase(PhaseTranscript, sp.transcribedAt.Sub(end))
			s.enter(t)
		}
	case specDecided:
		sp.phase = specOver
		s.spec = nil
		s.metrics.observePhase(PhaseTranscript, sp.transcribedAt.Sub(end))
		if !fresh {
			s.usedSpec(t, "transcript", sp.transcribedAt)
			s.deciding = false
			s.enter(t) // decided again on the conversation as it is now
			return
		}
		s.usedSpec(t, "decision", sp.decidedAt)
		s.addTurn(t)
		s.onDecided(decided{t: t, vt: sp.vt, d: sp.d})
	case specReplying:
		s.spec, s.deciding = nil, false
		s.metrics.observePhase(PhaseTranscript, sp.transcribedAt.Sub(end))
		if !fresh || s.cur.Load() != nil {
			// The reply was built on a conversation that has moved on: it is cut before a sound
			// and the turn is decided again.
			sp.phase = specAbandoned
			sp.reply.ar.cancel()
			s.usedSpec(t, "transcript", sp.transcribedAt)
			s.enter(t)
			return
		}
		sp.phase = specOver
		ready := t.marks.get(PhaseFirstTTSByte)
		if ready.IsZero() {
			ready = end
		}
		s.usedSpec(t, "reply", ready)
		s.addTurn(t)
		s.engagement.Observe(sp.d, sp.vt)
		s.metrics.observePhase(PhaseAdmission, sp.decidedAt.Sub(end))
		rp := sp.reply
		s.cur.Store(rp.ar)
		s.setOpen(t)
		rp.released.Store(true)
		s.playback.Begin(rp.onFirstPacket)
		close(rp.hold)
		s.pump()
	}
}

// discardSpec drops a cancelled speculation: nothing of it is spoken or enters the
// conversation. A held reply is cut; it is logged when it has ended.
func (s *session) discardSpec(t *turn, reason string) {
	sp := t.spec
	sp.why = reason
	switch sp.phase {
	case specTranscribed:
		sp.phase = specOver
		s.logDiscard(sp, &t.Turn, reason, "transcript", "", nil)
		t.steps <- step{}
	case specDecided:
		sp.phase = specOver
		s.spec, s.deciding = nil, false
		s.logDiscard(sp, &t.Turn, reason, "decision", "", nil)
		t.steps <- step{}
		s.pump()
	case specReplying:
		sp.phase = specCancelling
		s.spec, s.deciding = nil, false
		sp.reply.ar.cancel()
		s.pump()
	}
}

// heldReplyDone takes the end of a held reply that was never released: cut because its turn
// went on (logged; the turn is over) or because the conversation moved on (the turn goes the
// ordinary way), or ended on its own before its turn's end.
func (s *session) heldReplyDone(r replyDone) {
	rp := r.rp
	sp, t := rp.spec, rp.owner
	switch sp.phase {
	case specCancelling:
		s.logDiscard(sp, &t.Turn, sp.why, "reply", r.res.Text, rp.cost)
		t.steps <- step{}
	case specAbandoned:
		s.logDiscard(sp, &t.Turn, "context_changed", "reply", r.res.Text, rp.cost)
	default: // a Responder that did not wait for the hold
		t.settled(resumeUnanswered)
		s.spec, s.deciding = nil, false
		s.logDiscard(sp, &t.Turn, "ended_unreleased", "reply", r.res.Text, rp.cost)
		t.steps <- step{}
		s.pump()
	}
	sp.phase = specOver
}

// usedSpec counts a speculation whose work the turn uses, up to stage; what it saved is the
// part of that work done before the end of the turn.
func (s *session) usedSpec(t *turn, stage string, ready time.Time) {
	sp := t.spec
	_, _, end := sp.get()
	sp.stage = stage
	if end.Before(ready) {
		ready = end
	}
	sp.saved = max(0, ready.Sub(sp.started))
	s.metrics.speculation("used", stage, sp.saved)
}

// logDiscard logs and counts a discarded speculation.
// A thrown-away reply's own calls (generation, speech) are its line's cost_usd: the turn's
// hearing is on the line of the reply that is played.
func (s *session) logDiscard(sp *speculation, t *Turn, reason, stage, reply string, cost *llm.Tally) {
	s.metrics.speculation("discarded", stage, 0)
	attrs := []any{"turn_id", t.ID, "user_id", t.SpeakerID, "reason", reason, "stage", stage,
		"transcript", t.Transcript, "speculation_ms", ms(s.svc.now().Sub(sp.started)), "cost_usd", cost.USD()}
	if reply != "" {
		attrs = append(attrs, "reply", reply)
	}
	s.logger().Info("voice_speculation_discarded", attrs...)
}

// specAttrs are the speculation fields of a turn's event: how far the speculation had got
// (speculation_stage), how long before the end of the turn it started (speculation_lead_ms),
// the work it did before that end (speculation_saved_ms), the shape of its words and the end
// silence it set.
func specAttrs(sp *speculation) []any {
	if sp == nil || sp.stage == "" {
		return nil
	}
	_, _, end := sp.get()
	attrs := []any{"speculative", true, "speculation_stage", sp.stage,
		"speculation_lead_ms", ms(end.Sub(sp.started)), "speculation_saved_ms", ms(sp.saved),
		"turn_shape", sp.shape.String()}
	if sp.endSilence > 0 {
		attrs = append(attrs, "end_silence_ms", sp.endSilence.Milliseconds())
	}
	return attrs
}

// onFirstPacket marks the reply's first packet (Playback.Begin).
func (rp *replyRun) onFirstPacket(at time.Time) {
	rp.marks.mark(PhaseFirstPacket, at)
	rp.ar.firstPacket.Store(at.UnixNano())
}
