package voice

import (
	"slices"
	"time"

	"github.com/banterbot/banter/audio/vad"
)

// False ends: a member's pause was longer than the end silence, banter ended their turn, and
// they went on. What they said is one utterance to them; to banter it was a turn P, answered
// or about to be, and a new utterance. When the member's new speech is confirmed (the
// endpointer's EventSpeaking) within voice.endpointing.falseEndMs of P's end, before P's answer
// was heard to its end and before another member's turn entered the conversation, the end of
// P was false: P's answer stops at once (as a barge-in stops it, without waiting for
// voice.bargeIn.minSpeechMs), P and its answer leave the conversation, and the new utterance
// continues P: its turns' words are P's words and theirs, its audio P's and theirs, so the
// member is answered once, to the whole.
//
//	hearing clock (the member's speaker)         session loop
//	P's end → prev = P (resume open)             P entered, decided, answered …
//	new utterance starts (EventStart): onset
//	confirmed speech (EventSpeaking): decide
//	  later than falseEndMs after P's end        → rejected "late" (logged while P's answer plays)
//	  P's answer was heard, or P let go unanswered → rejected "answered", "unanswered" (the loop
//	                                               closed P when it was done with it)
//	  another member's turn entered since P      → rejected "other_member"
//	  else claim P, stop P's answer ───────────▶ onFalseEnd: P leaves the queues, its line and
//	  this utterance continues P                   its answer's line leave the timeline
//	utterance ends → turn C continues P           C's words: P's checked transcript (waited for)
//	                                              and the new ones; answered as any turn, once
//
// A rejected resumption is an ordinary turn (and talk over the bot is a barge-in as ever).

// resume states of a turn (turn.resume).
const (
	resumeOpen       uint32 = iota // its member may still go on with it
	resumeClaimed                  // they did: a false end; the turn is dropped
	resumeAnswered                 // its answer ended, heard (to its end, or cut by a barge-in or a failure)
	resumeUnanswered               // it was let go without a word: denied, skipped, dropped, failed
)

// False-end decisions: the reason codes of voice_false_end (merged), voice_false_end_rejected
// and banter_voice_false_ends_total{outcome,reason}.
const (
	falseEndBeforeReply = "before_reply" // merged: no audio of an answer to the turn had been played
	falseEndDuringReply = "during_reply" // merged: its answer was playing and was stopped
	falseEndLate        = "late"         // a new turn: it started later than falseEndMs after the end
	falseEndOtherMember = "other_member" // a new turn: another member's turn entered in between
	falseEndAnswered    = "answered"     // a new turn: the answer to it had been heard (and had ended)
	falseEndUnanswered  = "unanswered"   // a new turn: it had been let go without an answer
)

// falseEnd tells the session loop that a member went on with their turn t.
type falseEnd struct {
	t       *turn
	gap     time.Duration // from t's end to the start of the new speech
	played  time.Duration // audio of t's answer that had gone out when it was stopped
	stopped bool          // t's answer was stopped for it
}

// claimed reports whether the turn's member went on with it (a false end): it is not answered
// and does not enter the conversation.
func (t *turn) claimed() bool { return t.resume.Load() == resumeClaimed }

// settled closes the turn to false ends (nil: nothing to close): it was answered, or let go
// without an answer; its member's next words are a turn of their own.
func (t *turn) settled(state uint32) {
	if t != nil {
		t.resume.CompareAndSwap(resumeOpen, state)
	}
}

// ended records the end of the member's turn t (hearing clock): the silence that ended it, and
// that their next confirmed speech may continue it.
func (sp *speaker) ended(t *turn, ev vad.Event) {
	t.endSilence = ev.At - ev.SpeechEnd
	sp.prev, sp.prevEnd, sp.prevEntries = t, sp.s.svc.now(), sp.s.entriesNow()
	if sp.contUtt == ev.Utterance {
		sp.cont = nil // t carries it
	}
}

// onStart notes when the member's new utterance began: its first speech frame, on the wall
// clock.
func (sp *speaker) onStart(ev vad.Event) {
	sp.uttStart = sp.s.svc.now().Add(-(ev.At - ev.SpeechStart))
}

// onSpeaking decides at the utterance's confirmed speech whether the member is going on with
// their previous turn (hearing clock). A false end stops that turn's answer here and now; the
// session loop drops the turn. Any speculation on the new utterance started before this lacks
// the turn's words; it is already cancelled, as the confirmed speech is speech after its pause.
func (sp *speaker) onSpeaking(ev vad.Event) {
	s, p := sp.s, sp.prev
	window := time.Duration(s.svc.cfg().Voice.Endpointing.FalseEndMs) * time.Millisecond
	if p == nil || window <= 0 || s.blocked(sp.userID) {
		return
	}
	gap := sp.uttStart.Sub(sp.prevEnd)
	ar := s.cur.Load()
	answering := ar != nil && ar.owner == p
	reason := falseEndLate
	if gap <= window {
		reason = sp.claim(p)
	} else if !answering {
		return // long after, nothing of it playing: an ordinary next turn
	}
	if reason != "" {
		s.metrics.falseEnd("rejected", reason)
		s.logger().Info("voice_false_end_rejected", "turn_id", p.ID, "user_id", sp.userID, "reason", reason,
			"gap_ms", ms(gap), "window_ms", window.Milliseconds(), "answering", answering)
		return
	}
	fe := falseEnd{t: p, gap: gap}
	if answering {
		fe.played, fe.stopped = s.stopForFalseEnd(ar, sp.userID)
	}
	sp.cont, sp.contUtt = p, ev.Utterance
	toLoop(s, s.falseEnds, fe)
}

// claim takes the member's previous turn p for a false end: "" when it was theirs to go on
// with, else the reason it was not. It holds the session's lock against a turn entering.
func (sp *speaker) claim(p *turn) string {
	s := sp.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, n := range s.lastEntry {
		if id != sp.userID && n > sp.prevEntries {
			return falseEndOtherMember
		}
	}
	if p.resume.CompareAndSwap(resumeOpen, resumeClaimed) {
		return ""
	}
	if p.resume.Load() == resumeUnanswered {
		return falseEndUnanswered
	}
	return falseEndAnswered
}

// entriesNow returns how many turns have entered the conversation.
func (s *session) entriesNow() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries
}

// countEntry counts a turn of userID entering the conversation (session loop).
func (s *session) countEntry(userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries++
	s.lastEntry[userID] = s.entries
}

// continuing returns the turn that utterance utt continues after a false end (nil: none).
func (sp *speaker) continuing(utt uint64) *turn {
	if sp.cont != nil && sp.contUtt == utt {
		return sp.cont
	}
	return nil
}

// continued waits for the words of the turn t continues after a false end (turn's goroutine)
// and puts that turn's audio before t's own: it returns those words, "" when there is no such
// turn or it had nothing to keep (dropped, or its speech to text failed: t is then a turn of its
// own), and false when the session ended first.
func (s *session) continued(t *turn) (string, bool) {
	c := t.continues
	if c == nil {
		return "", true
	}
	r, ok := c.words.wait(s.ctx)
	if !ok {
		return "", false
	}
	if r.text == "" {
		t.continues = nil
		return "", true
	}
	t.Audio = slices.Concat(c.Audio, t.Audio)
	t.Duration += c.Duration
	return r.text, true
}

// stopForFalseEnd stops the answer ar at once (its context, and the frames a send clock holds
// ahead of their slots), as a barge-in does, and marks it: it is dropped from the conversation.
// It returns how much of it had played, and false when something else had stopped it first.
// Any goroutine.
func (s *session) stopForFalseEnd(ar *activeReply, by string) (time.Duration, bool) {
	ar.falseEnd.Store(true)
	if !ar.interrupted.CompareAndSwap(false, true) {
		return s.playback.Played(), false
	}
	ar.interruptedBy.Store(by)
	ar.cancel()
	s.playback.Interrupt()
	return s.playback.Played(), true
}

// onFalseEnd drops the turn its member went on with (session loop): its answer stops (if one
// opened after the hearing clock looked), it leaves the turns waiting for Stage A, and its line
// and its answer's leave the timeline. A turn not yet entered, or being decided, is let go when
// it comes back (claimed).
func (s *session) onFalseEnd(fe falseEnd) {
	p := fe.t
	if ar := s.cur.Load(); ar != nil && ar.owner == p && !fe.stopped {
		fe.played, fe.stopped = s.stopForFalseEnd(ar, p.SpeakerID)
	}
	waiting := s.unqueue(p)
	lines := s.dropLines(p.ID)
	reason := falseEndBeforeReply
	if fe.played > 0 {
		reason = falseEndDuringReply
	}
	s.metrics.falseEnd("merged", reason)
	s.logger().Info("voice_false_end", "turn_id", p.ID, "user_id", p.SpeakerID, "reason", reason, "gap_ms", ms(fe.gap),
		"stopped", fe.stopped, "played_ms", ms(fe.played), "was_waiting", waiting, "lines_dropped", lines)
	s.pump()
}

// unqueue takes p off the turns waiting for Stage A (queued, held, deferred) and ends it; it
// reports whether it was there.
func (s *session) unqueue(p *turn) bool {
	found := false
	is := func(t *turn) bool {
		found = found || t == p
		return t == p
	}
	s.queue = slices.DeleteFunc(s.queue, is)
	s.deferred = slices.DeleteFunc(s.deferred, is)
	s.held = slices.DeleteFunc(s.held, func(h heldTurn) bool { return is(h.t) })
	if found {
		p.steps <- step{} // it waits in admit
	}
	return found
}

// dropLines removes the timeline's line of turn id and the bot's lines answering it, and
// returns how many went (the conversation changed: lineSeq moves on).
func (s *session) dropLines(id string) int {
	n := len(s.timeline)
	s.timeline = slices.DeleteFunc(s.timeline, func(l line) bool { return l.turnID == id || l.replyTo == id })
	if d := n - len(s.timeline); d > 0 {
		s.lineSeq++
		return d
	}
	return 0
}

// turnAttrs are a turn's own fields on its events: the silence that ended it as the
// endpointer heard it, and the turn it continues after a false end.
func turnAttrs(t *turn) []any {
	if t == nil {
		return nil
	}
	attrs := []any{"silence_ms", t.endSilence.Milliseconds()}
	if t.continues != nil {
		attrs = append(attrs, "continues_turn_id", t.continues.ID)
	}
	return attrs
}
