package voice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/llm"
)

// The session loop's side of a turn (see pipeline.go): enter it into the conversation, schedule
// Stage A one turn at a time, open the bot's turn for an admitted one, and record how it ended.
// Everything here runs on the session loop.

// enter records a transcribed turn in the timeline and queues it for Stage A, or holds it while
// someone else is still talking (room-aware coalescing).
func (s *session) enter(t *turn) {
	s.addTurn(t)
	if t.contextOnly { // a recovered utterance whose member has left: what was asked, not answered
		return
	}
	hold := time.Duration(s.svc.cfg().Voice.Endpointing.RoomHoldMs) * time.Millisecond
	if !t.Addressed && hold > 0 && s.othersActive(t.SpeakerID) {
		s.held = append(s.held, heldTurn{t: t, until: s.svc.now().Add(hold)})
		return
	}
	s.queue = append(s.queue, t)
	s.pump()
}

// addTurn puts the turn's line in the timeline (and the log channel).
// A recovered turn (openturns.go) was posted and captured by the process that heard it.
func (s *session) addTurn(t *turn) {
	l := line{turnID: t.ID, ContextLine: decision.ContextLine{Speaker: t.SpeakerName, Text: t.Transcript}}
	if t.recovered {
		s.appendLine(l)
	} else {
		s.addLine(l)
		s.capture(t)
	}
	s.countEntry(t.SpeakerID)
	t.Addressed = s.svc.opts.Engine.MatchName(s.guildID, s.svc.botNickname(s.guildID), t.Transcript).Addressed()
}

// nickname returns the name the bot answers to in the session's guild besides its name and
// aliases: its guild nickname, when bot.answerToNickname is on and it is a usable name.
func (s *session) nickname() string {
	return s.svc.opts.Engine.Nickname(s.guildID, s.svc.botNickname(s.guildID))
}

// sttPrompt is the recognition prompt: the bot's name, and its nickname in this guild when it
// answers to one ("banter, Jarvis"), so that speech recognition spells the names it listens for.
func (s *session) sttPrompt(name string) string {
	if nick := s.nickname(); nick != "" {
		return name + ", " + nick
	}
	return name
}

// pump lets the next queued turn run Stage A unless one is being decided.
func (s *session) pump() {
	if s.deciding || len(s.queue) == 0 {
		return
	}
	t := s.queue[0]
	s.queue = s.queue[1:]
	s.deciding = true
	t.steps <- step{decide: s.voiceTurn(t, t.SpeechEnd)}
}

// voiceTurn is Stage A's input for t as the conversation stands, at time at.
func (s *session) voiceTurn(t *turn, at time.Time) *decision.VoiceTurn {
	vt := &decision.VoiceTurn{
		ID: t.ID, ChannelID: s.channel(), GuildID: s.guildID, BotNickname: s.svc.botNickname(s.guildID), SpeakerID: t.SpeakerID, SpeakerName: t.SpeakerName,
		Transcript: t.Transcript, Duration: t.Duration, At: at,
		Participants: s.others(), Timeline: s.contextLines(t.ID), Engagement: s.engagement,
	}
	if ar := s.cur.Load(); ar != nil {
		vt.Engagement.BotSpeaking = true
	}
	return vt
}

// onDecided acts on a Stage A decision: the turn is deferred (decided again when the bot's turn
// closes), answered, or let go.
func (s *session) onDecided(dd decided) {
	if dd.t.spec != nil && dd.t.spec.phase == specDeciding {
		s.onSpecDecided(dd)
		return
	}
	s.deciding = false
	t, d := dd.t, dd.d
	if t.claimed() { // its member went on with it (a false end): the turn that continues it is answered
		t.steps <- step{}
		s.pump()
		return
	}
	now := s.svc.now()
	t.marks.mark(PhaseAdmission, now) // a speculative decision's earlier mark stands
	s.metrics.observePhase(PhaseAdmission, t.marks.get(PhaseAdmission).Sub(t.SpeechEnd))
	switch {
	case d.Outcome == decision.OutcomeDefer || (d.Allowed() && s.cur.Load() != nil):
		s.metrics.turn("deferred")
		s.deferred = append(s.deferred, t)
	case d.Allowed():
		s.engagement.Observe(d, dd.vt)
		s.startReply(t, d, 0)
	default:
		t.settled(resumeUnanswered)
		s.metrics.turn("denied")
		attrs := append([]any{"turn_id", t.ID, "user_id", t.SpeakerID,
			"reason", d.Reason.String(), "transcript", t.Transcript, "cost_usd", t.heardUSD(),
			"admission_ms", ms(t.marks.get(PhaseAdmission).Sub(t.SpeechEnd))}, classifierAttrs(d)...)
		attrs = append(attrs, turnAttrs(t)...)
		s.logger().Info("stt_pipeline_reply_denied", append(attrs, specAttrs(t.spec)...)...)
		t.steps <- step{}
	}
	s.pump()
}

// startGreeting speaks the join greeting (attempt 1 or its one retry).
func (s *session) startGreeting(attempt int) {
	s.startReply(nil, decision.Decision{}, attempt)
}

// replyContext is the context of a reply: cancelled with the reply, its model calls charged
// to the session's guild and added up in the returned tally (the reply's cost_usd).
func (s *session) replyContext() (context.Context, context.CancelFunc, *llm.Tally) {
	cost := &llm.Tally{}
	ctx, cancel := context.WithCancel(llm.WithAccount(s.ctx, llm.Account{Guild: s.guildID, Tally: cost}))
	return ctx, cancel, cost
}

// startReply opens the bot's turn: the reply runs on the turn's goroutine (t's admit returns
// it), or on a goroutine of its own for the greeting (t nil).
func (s *session) startReply(t *turn, d decision.Decision, greeting int) {
	ctx, cancel, cost := s.replyContext()
	s.replySeq++
	rp := &replyRun{ar: &activeReply{id: s.replySeq, cancel: cancel}, ctx: ctx, d: d, greeting: greeting, marks: &marks{}, cost: cost}
	if t != nil {
		rp.turn, rp.owner, rp.spec, rp.marks, rp.ar.target, rp.ar.owner = &t.Turn, t, t.spec, t.marks, t.SpeakerID, t
	}
	rp.prompt = s.promptInput(rp.turn, d, greeting > 0)
	s.cur.Store(rp.ar)
	if t != nil {
		s.setOpen(t)
		t.steps <- step{reply: rp}
		return
	}
	s.wg.Go(func() { s.respond(rp) })
}

// onReplyDone closes the bot's turn (record): the timeline gets what was actually played, the
// turn is logged with its phases and counted, and deferred turns go through. A reply stopped by
// a false end leaves nothing in the timeline: its turn is answered again as a whole.
func (s *session) onReplyDone(r replyDone) {
	if r.rp.hold != nil && !r.rp.released.Load() {
		s.heldReplyDone(r)
		return
	}
	s.cur.Store(nil)
	rp := r.rp
	s.clearOpen(rp.owner)
	interrupted, falseEnd := rp.ar.interrupted.Load(), rp.ar.falseEnd.Load()
	if !falseEnd {
		s.recordReply(rp, r, interrupted)
		// Its member's next words are a turn of their own from here on: the answer was heard, or
		// the turn was let go without a word.
		state := resumeUnanswered
		if r.played > 0 || r.res.Spoken != "" {
			state = resumeAnswered
		}
		rp.owner.settled(state)
	} else if tb, ok := s.responder.(TakeBacker); ok && rp.turn != nil {
		tb.TakeBack(rp.turn)
	}
	attrs := s.replyAttrs(rp, r)
	if t := rp.turn; t != nil && r.err == nil && !interrupted && r.res.StageB.Outcome != decision.OutcomeUnknown {
		// Stage B's own event (reply_skipped / reply_accepted), as text logs it.
		sb := r.res.StageB
		sb.TurnID, sb.ChannelID, sb.UserID = t.ID, s.channel(), t.SpeakerID
		sb = sb.Following(rp.d)
		sb.Log(s.ctx, s.svc.log, slog.String("guild_id", s.guildID))
	}
	switch {
	case interrupted:
		by, _ := rp.ar.interruptedBy.Load().(string)
		outcome := "interrupted"
		if falseEnd {
			outcome = "false_end"
		}
		s.metrics.turn(outcome)
		s.logger().Info("stt_pipeline_reply_interrupted", append(attrs, "interrupted_by", by, "false_end", falseEnd)...)
	case r.err != nil && !errors.Is(r.err, context.Canceled):
		s.metrics.turn("failed")
		s.logger().Warn("voice_turn_failed", append(attrs, "stage", failStage(r.err), "error", r.err.Error())...)
	case r.res.Skipped || r.res.Spoken == "":
		s.metrics.turn("skipped")
		s.logger().Info("stt_pipeline_reply_skipped", append(attrs, "stage_b", r.res.StageB.Reason.String())...)
		if rp.greeting == 1 && s.ctx.Err() == nil {
			s.startGreeting(2) // one retry when the first greeting stayed silent
			return
		}
	default:
		s.metrics.turn("spoken")
		s.logger().Info(spokenEvent(s.responder), attrs...)
	}
	if rp.hold != nil {
		rp.owner.steps <- step{} // a released speculative reply: its turn is over
	}
	if len(s.deferred) > 0 {
		s.queue = append(s.deferred, s.queue...)
		s.deferred = nil
	}
	s.pump()
}

// recordReply puts what the reply played in the timeline (marked when it was cut) and notes
// that the bot answered its member.
func (s *session) recordReply(rp *replyRun, r replyDone, interrupted bool) {
	if r.res.Spoken != "" {
		text := r.res.Spoken
		switch {
		case interrupted:
			text += " [interrupted]"
		case r.err != nil:
			text += " [cut off]" // a provider or the connection failed mid-reply
		}
		l := line{ContextLine: decision.ContextLine{Speaker: s.svc.cfg().Bot.Name, Text: text, Bot: true}}
		if rp.turn != nil {
			l.replyTo = rp.turn.ID
		}
		s.addLine(l)
	}
	if rp.turn != nil {
		s.engagement.BotReplied(rp.turn.SpeakerID, s.svc.now())
	}
}

// replyAttrs are the fields of a reply's event: what was played, the turn answered with its
// phases (observed in the phase histogram), and the greeting's attempt.
func (s *session) replyAttrs(rp *replyRun, r replyDone) []any {
	target := ""
	if rp.turn != nil {
		target = rp.turn.SpeakerID
	}
	attrs := []any{"reply_target", target, "spoken", r.res.Spoken, "interrupted", rp.ar.interrupted.Load(), "played_ms", ms(r.played),
		"cost_usd", rp.cost.USD() + rp.owner.heardUSD()}
	if t := rp.turn; t != nil {
		attrs = append(attrs, "turn_id", t.ID, "transcript", t.Transcript, "reason", rp.d.Reason.String())
		attrs = append(attrs, classifierAttrs(rp.d)...)
		attrs = append(attrs, specAttrs(rp.spec)...)
		attrs = append(attrs, turnAttrs(rp.owner)...)
		for p := PhaseTranscript; p <= PhaseFirstPacket; p++ {
			if at := t.marks.get(p); !at.IsZero() {
				attrs = append(attrs, p.String()+"_ms", ms(at.Sub(t.SpeechEnd)))
				if p > PhaseAdmission {
					s.metrics.observePhase(p, at.Sub(t.SpeechEnd))
				}
			}
		}
	}
	if rp.greeting > 0 {
		attrs = append(attrs, "greeting_attempt", rp.greeting)
	}
	return attrs
}

// classifierAttrs are the classifier fields of a turn's event: how long the YES/NO classifier
// took over all its attempts (classifier_ms), when Stage A asked it.
func classifierAttrs(d decision.Decision) []any {
	if d.ClassifierAttempts == 0 {
		return nil
	}
	return []any{"classifier_ms", ms(d.ClassifierLatency), "classifier_attempts", d.ClassifierAttempts}
}

// failStage names the stage a reply error came from.
func failStage(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "voice: tts"):
		return "tts"
	case strings.Contains(msg, "voice: generate"):
		return "generation"
	case strings.Contains(msg, "voice: send"), strings.Contains(msg, "stop speaking"):
		return "send"
	}
	return "reply"
}

// addLine appends to the timeline and to the log channel.
func (s *session) addLine(l line) {
	s.appendLine(l)
	if s.svc.cfg().Voice.LogChannelID != "" {
		select {
		case s.logCh <- fmt.Sprintf("**%s**: %s", l.Speaker, l.Text):
		default: // the log channel is behind: drop the line, never the turn
		}
	}
}

// appendLine appends to the timeline, capped at timelineCap lines.
func (s *session) appendLine(l line) {
	s.lineSeq++
	s.timeline = append(s.timeline, l)
	if n := len(s.timeline) - timelineCap; n > 0 {
		s.timeline = append(s.timeline[:0], s.timeline[n:]...)
	}
}

// contextLines returns the timeline without the line of turn id.
func (s *session) contextLines(id string) []decision.ContextLine {
	out := make([]decision.ContextLine, 0, len(s.timeline))
	for _, l := range s.timeline {
		if l.turnID != id || id == "" {
			out = append(out, l.ContextLine)
		}
	}
	return out
}

// postLogs posts what was said to the configured log channel. Once Discord refuses a post for
// the bot's permissions there (403: no Send Messages, no View Channel), which is final, the
// session's further lines are dropped: the refusal is logged once, with its reason, each line
// dropped at debug (voice_log_line_dropped).
func (s *session) postLogs() {
	ch := s.svc.cfg().Voice.LogChannelID
	refused := false
	for {
		select {
		case <-s.ctx.Done():
			return
		case l := <-s.logCh:
			if refused {
				s.logger().Debug("voice_log_line_dropped", "channel_id", ch, "reason", "refused")
				continue
			}
			if _, err := s.svc.opts.Sender.Post(s.ctx, ch, l, "voice-log"); err != nil {
				why := post.Refusal(err)
				s.logger().Warn("voice_log_post_failed", "channel_id", ch, "reason", why, "error", err)
				refused = why != ""
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
