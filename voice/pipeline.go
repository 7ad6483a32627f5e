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
// session loop records how it ended.
func (s *session) runTurn(t *turn) {
	if !s.transcribe(t) {
		return
	}
	rp, ok := s.admit(t)
	if !ok {
		return
	}
	s.respond(rp)
}

// transcribe waits for the transcripts of the turn's chunks, merges them in order and checks the
// result (CheckTranscript, ban words). It reports whether the turn goes on.
func (s *session) transcribe(t *turn) bool {
	parts := make([]string, 0, len(t.chunks))
	for _, c := range t.chunks {
		var r sttResult
		select {
		case r = <-c:
		case <-s.ctx.Done():
			return false
		}
		if r.err != nil {
			if s.ctx.Err() != nil {
				return false
			}
			s.metrics.failure("stt")
			s.metrics.turn("failed")
			s.log.Warn("voice_turn_failed", "stage", "stt", "turn_id", t.ID, "user_id", t.SpeakerID, "error", r.err)
			return false
		}
		parts = append(parts, r.text)
	}
	now := s.svc.now()
	t.marks.mark(PhaseTranscript, now)
	merged := mergeTranscripts(parts)
	text, reason := CheckTranscript(merged, t.Duration)
	if reason == DropNone && safety.ForConfig(s.svc.cfg()).Exclude(t.SpeakerID, text, false) == safety.BanWord {
		// Like a text message with a ban word: never in the timeline, the log channel or a prompt.
		s.metrics.drop(DropBanWord)
		s.log.Info("voice_transcript_dropped", "turn_id", t.ID, "user_id", t.SpeakerID,
			"reason", DropBanWord.String(), "audio_ms", t.Duration.Milliseconds())
		return false
	}
	if reason != DropNone {
		s.metrics.drop(reason)
		s.log.Info("voice_transcript_dropped", "turn_id", t.ID, "user_id", t.SpeakerID,
			"reason", reason.String(), "transcript", merged, "audio_ms", t.Duration.Milliseconds())
		return false
	}
	t.Transcript = text
	s.metrics.observePhase(PhaseTranscript, now.Sub(t.SpeechEnd))
	return true
}

// admit hands the transcribed turn to the session loop (enter: timeline, room hold, queue) and
// runs Stage A on this goroutine each time the loop says the turn is next, until the loop opens
// the bot's turn for it (the reply to give) or lets it go (denied; the session ended).
func (s *session) admit(t *turn) (*replyRun, bool) {
	if !toLoop(s, s.entered, t) {
		return nil, false
	}
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
		d := s.svc.opts.Engine.Decide(s.ctx, st.decide, slog.String("guild_id", s.guildID))
		if !toLoop(s, s.decided, decided{t: t, vt: st.decide, d: d}) {
			return nil, false
		}
	}
}

// respond gives the reply the session loop opened: the prompt is rendered (with the members'
// personas), the Responder generates and speaks into the session's Playback, the talk spurt is
// closed, and the outcome goes back to the loop (record).
func (s *session) respond(rp *replyRun) {
	r := &Reply{Turn: rp.turn, Decision: rp.d, Out: s.playback, Mark: rp.marks.mark}
	r.Instructions, r.Messages = s.render(rp.ctx, rp.prompt)
	pb := s.playback
	pb.Begin(func(at time.Time) {
		rp.marks.mark(PhaseFirstPacket, at)
		rp.ar.firstPacket.Store(at.UnixNano())
	})
	res, err := s.responder.Respond(rp.ctx, r)
	rp.ar.cancel()
	// The talk spurt ends with silence frames even after a cut.
	endCtx, endCancel := context.WithTimeout(context.WithoutCancel(s.ctx), time.Second)
	if eerr := pb.End(endCtx, !rp.ar.interrupted.Load() && err == nil); eerr != nil && s.ctx.Err() == nil {
		// The reply itself went out; only the spurt's tail did not.
		s.log.Warn("voice_stop_speaking_failed", "error", eerr)
	}
	endCancel()
	done := replyDone{rp: rp, res: res, err: err, played: pb.Played()}
	if !toLoop(s, s.replies, done) {
		s.sessionEndedDuring(done)
	}
}

// sessionEndedDuring records a reply the session's end cut (a leave, a disconnect): the loop
// that records replies is gone, so the reply is logged and counted here.
func (s *session) sessionEndedDuring(r replyDone) {
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
	s.log.Warn("voice_turn_failed", attrs...)
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
