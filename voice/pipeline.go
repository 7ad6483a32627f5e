package voice

// The voice path: one utterance from a member's mouth to the bot's answer, stage by stage.
//
//	stage       runs on                                code
//	hear        the speaker's goroutine (one a member) runSpeaker: RTP frames → jitter → Opus decode
//	endpoint    the speaker's goroutine                audio.Listener VAD → speaker.handle: a chunk at
//	                                                   each pause, transcribed at once; speaker.finish
//	                                                   closes the utterance and starts runTurn
//	transcribe  a goroutine per chunk, then the        transcribeChunk; session.transcribe merges the
//	            turn's goroutine                       chunks in order and checks the transcript
//	                                                   (CheckTranscript, ban words)
//	admit       the turn's goroutine, scheduled by the session.admit: the loop enters the turn in the
//	            session loop                           timeline (or holds it while someone else talks)
//	                                                   and queues it; Stage A runs here when the loop
//	                                                   says it is next; allowed, denied, or deferred
//	                                                   while the bot speaks (decided again after)
//	generate    the turn's goroutine                   session.respond: the prompt (personas, token
//	                                                   budget), then Responder.Respond — for the STT
//	                                                   pipeline STTResponder.generate: llm.Stream →
//	                                                   Stage B → sentences, each sent to TTS at once
//	speak       the turn's goroutine                   STTResponder.speak: sentence audio in order →
//	                                                   Playback → Conn.SendOpus; a barge-in cancels it
//	record      the session loop                       onReplyDone: the timeline gets what was
//	                                                   played; the turn's event, phases and metrics
//
// The session loop (session.run) owns the conversation: the timeline, the turns waiting for
// Stage A, the bot's open turn. A turn's goroutine asks it at each step and waits for its answer
// (turn.steps), so Stage A decides one turn at a time in arrival order and one reply plays at a
// time, while the slow work (speech to text, Stage A, generation, speech) runs on the turn's own
// goroutine. runTurn is the line every turn follows.

import (
	"context"
	"log/slog"
	"time"

	"github.com/banterbot/banter/safety"
)

// runTurn carries one endpointed utterance through transcribe → admit → generate → speak; the
// session loop records how it ended. A speculative turn (started at a pause) follows the same
// line: the session loop holds each step until the turn's end is confirmed, and after a held
// reply it says whether the turn goes on (its reply could not be used) or is over.
func (s *session) runTurn(t *turn) {
	if s.transcribe(t) {
		s.carry(t)
	}
}

// carry takes a transcribed turn on from the conversation's door: admit → generate → speak.
// A recovered turn (openturns.go) starts here; one that only enters the timeline ends there.
func (s *session) carry(t *turn) {
	if !toLoop(s, s.entered, t) || t.contextOnly {
		return
	}
	for {
		rp, ok := s.admit(t)
		if !ok {
			return
		}
		s.respond(rp)
		if rp.hold == nil {
			return
		}
	}
}

// transcribe waits for the transcripts of the turn's chunks, merges them in order and checks the
// result (CheckTranscript, ban words). It reports whether the turn goes on. A speculative turn
// always goes on to the session loop, which applies the check once the turn's end is confirmed;
// its transcript goes to its speaker too (the adaptive end of turn). A turn that continues
// another after a false end starts with that turn's words.
func (s *session) transcribe(t *turn) bool {
	before, ok := s.continued(t)
	if !ok {
		return false
	}
	parts, sttErr, ok := s.chunkWords(t.chunks)
	if !ok {
		return false
	}
	now := s.svc.now()
	t.marks.mark(PhaseTranscript, now)
	var text string
	reason := DropNone
	if sttErr == nil {
		t.merged = mergeTranscripts(append([]string{before}, parts...))
		text, reason = CheckTranscript(t.merged, t.Duration)
		if reason == DropNone && safety.ForConfig(s.svc.cfg()).Exclude(t.SpeakerID, text, false) == safety.BanWord {
			reason = DropBanWord
		}
	}
	kept := sttErr == nil && reason == DropNone
	if !kept {
		text = "" // (a turn that continues this one starts with nothing of it)
	}
	if t.spec != nil {
		t.Transcript, t.drop, t.sttErr = text, reason, sttErr
		t.spec.transcribedAt = now
		t.words.set(sttResult{text: text})
		select { // the adaptive end: the speaker takes it when it can
		case t.spec.hints <- specHint{t: t, text: text, ok: kept}:
		default:
		}
		return true
	}
	t.words.set(sttResult{text: text})
	switch {
	case sttErr != nil:
		s.sttFailed(t, sttErr)
		return false
	case reason != DropNone:
		s.dropTranscript(t, reason)
		return false
	}
	t.Transcript = text
	s.metrics.observePhase(PhaseTranscript, now.Sub(t.SpeechEnd))
	return true
}

// chunkWords waits for the transcripts of chunks, in order, up to the first that failed (its
// error); false when the session ended first.
func (s *session) chunkWords(chunks []*sttFuture) ([]string, error, bool) {
	parts := make([]string, 0, len(chunks))
	for _, c := range chunks {
		r, ok := c.wait(s.ctx)
		if !ok {
			return nil, nil, false
		}
		if r.err != nil {
			return parts, r.err, true
		}
		parts = append(parts, r.text)
	}
	return parts, nil, true
}

// sttFailed logs and counts a turn whose speech to text failed.
func (s *session) sttFailed(t *turn, err error) {
	t.settled(resumeUnanswered)
	if s.ctx.Err() != nil {
		return
	}
	s.metrics.failure("stt")
	s.metrics.turn("failed")
	s.logger().Warn("voice_turn_failed", "stage", "stt", "turn_id", t.ID, "user_id", t.SpeakerID, "error", err)
}

// dropTranscript logs and counts a transcript that does not make a turn.
func (s *session) dropTranscript(t *turn, reason DropReason) {
	t.settled(resumeUnanswered)
	s.metrics.drop(reason)
	if reason == DropBanWord {
		// Like a text message with a ban word: never in the timeline, the log channel or a prompt.
		s.logger().Info("voice_transcript_dropped", "turn_id", t.ID, "user_id", t.SpeakerID,
			"reason", reason.String(), "audio_ms", t.Duration.Milliseconds())
		return
	}
	s.logger().Info("voice_transcript_dropped", "turn_id", t.ID, "user_id", t.SpeakerID,
		"reason", reason.String(), "transcript", t.merged, "audio_ms", t.Duration.Milliseconds())
}

// admit waits for the session loop's steps for the entered turn (the loop enters it in the
// timeline, holds or queues it) and runs Stage A on this goroutine each time the loop says the
// turn is next, until the loop opens the bot's turn for it (the reply to give) or lets it go
// (denied; discarded; the session ended).
func (s *session) admit(t *turn) (*replyRun, bool) {
	for {
		var st step
		select {
		case st = <-t.steps:
		case <-s.ctx.Done():
			return nil, false
		}
		switch {
		case st.reply != nil:
			return st.reply, true
		case st.decide == nil:
			return nil, false
		}
		attrs := append([]slog.Attr{slog.String("guild_id", s.guildID)}, addressingAttrs(s.svc.cfg(), st.decide)...)
		if st.speculative {
			attrs = append(attrs, slog.Bool("speculative", true))
		}
		d, capped := s.budgetCapped()
		if !capped {
			d, capped = s.serverMuted()
		}
		if !capped {
			d = s.svc.opts.Engine.Decide(s.chargeTo(SlotReplyDecision, t.heard), st.decide, attrs...)
		}
		if !toLoop(s, s.decided, decided{t: t, vt: st.decide, d: d}) {
			return nil, false
		}
	}
}

// respond gives the reply the session loop opened: the prompt is rendered (with the members'
// personas), the Responder generates and speaks into the session's Playback, the talk spurt is
// closed, and the outcome goes back to the loop (record).
//
// A held (speculative) reply generates and synthesises at once but plays nothing until the
// session loop releases it (it then begins the Playback); one cut before that never touched
// the Playback or the connection.
func (s *session) respond(rp *replyRun) {
	r := &Reply{Turn: rp.turn, Decision: rp.d, Out: s.playback, Mark: rp.marks.mark, Hold: rp.hold}
	r.Instructions, r.Messages = s.render(rp.ctx, rp.prompt)
	pb := s.playback
	if rp.hold == nil {
		pb.Begin(rp.onFirstPacket)
	}
	res, err := s.responder.Respond(rp.ctx, r)
	rp.ar.cancel()
	done := replyDone{rp: rp, res: res, err: err}
	if rp.hold == nil || rp.released.Load() {
		// The talk spurt ends with silence frames even after a cut.
		endCtx, endCancel := context.WithTimeout(context.WithoutCancel(s.ctx), time.Second)
		if eerr := pb.End(endCtx, !rp.ar.interrupted.Load() && err == nil); eerr != nil && s.ctx.Err() == nil {
			// The reply itself went out; only the spurt's tail did not.
			s.logger().Warn("voice_stop_speaking_failed", "error", eerr)
		}
		endCancel()
		done.played = pb.Played()
	}
	if !toLoop(s, s.replies, done) {
		s.sessionEndedDuring(done)
	}
}

// sessionEndedDuring records a reply the session's end cut (a leave, a disconnect): the loop
// that records replies is gone, so the reply is logged and counted here.
func (s *session) sessionEndedDuring(r replyDone) {
	if r.rp.hold != nil && !r.rp.released.Load() {
		s.logDiscard(r.rp.spec, r.rp.turn, "session_end", "reply", r.res.Text, r.rp.cost)
		return
	}
	attrs := []any{"stage", "session_end", "spoken", r.res.Spoken, "played_ms", ms(r.played)}
	if t := r.rp.turn; t != nil {
		attrs = append(attrs, "turn_id", t.ID, "transcript", t.Transcript, "reply_target", t.SpeakerID)
	}
	if r.rp.greeting > 0 {
		attrs = append(attrs, "greeting_attempt", r.rp.greeting)
	}
	if r.err != nil {
		attrs = append(attrs, "error", r.err.Error())
	}
	s.metrics.turn("failed")
	s.logger().Warn("voice_turn_failed", attrs...)
}

// toLoop sends v to the session loop unless the session ends first.
func toLoop[T any](s *session, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	case <-s.ctx.Done():
		return false
	}
}
