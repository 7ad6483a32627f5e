package voice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/decision"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/banterbot/banter/llm"
)

// timelineCap bounds the conversation a session remembers for prompts.
const timelineCap = 24

// line is one thing said in the session.
type line struct {
	turnID string
	decision.ContextLine
}

// activeReply is the reply in progress (the bot's turn is open).
type activeReply struct {
	id     uint64
	target string // speaker answered ("" for the greeting)
	cancel context.CancelFunc
	// firstPacket is the unix-nano time of the first packet out (0 before):
	// the echo guard runs from there.
	firstPacket   atomic.Int64
	interrupted   atomic.Bool
	interruptedBy atomic.Value // string
}

// replyDone reports the end of a reply to the session loop.
type replyDone struct {
	ar       *activeReply
	turn     *Turn // nil for the greeting
	d        decision.Decision
	res      Result
	err      error
	greeting int // attempt number for the greeting, else 0
}

// decided reports a Stage A decision to the session loop.
type decided struct {
	t  *Turn
	vt *decision.VoiceTurn
	d  decision.Decision
}

// heldTurn is a turn held while another member is still talking.
type heldTurn struct {
	t     *Turn
	until time.Time
}

// session is the bot in one guild's voice channel. The loop goroutine (run)
// owns the conversation state; speaker goroutines own their Listeners; one
// reply goroutine at a time owns the Playback.
type session struct {
	svc                *Service
	guildID, channelID string
	log                *slog.Logger
	metrics            *Metrics
	ctx                context.Context
	cancel             context.CancelFunc
	wg                 sync.WaitGroup
	done               chan struct{} // closed when run and every goroutine ended
	started            time.Time
	greetPending       bool // the join greeting may still start (session loop only)

	turns   chan *Turn
	replies chan replyDone
	decided chan decided
	conns   chan *dvoice.Conn
	logCh   chan string

	cur atomic.Pointer[activeReply]

	mu       sync.Mutex // guards following
	speakers map[string]*speaker
	conn     *dvoice.Conn

	responder Responder

	// owned by the loop goroutine
	playback   *Playback
	timeline   []line
	engagement decision.Engagement
	queue      []*Turn
	deferred   []*Turn
	held       []heldTurn
	deciding   bool
	replySeq   uint64
	aloneSince time.Time
	endReason  string
}

func newSession(svc *Service, guildID, channelID string, conn *dvoice.Conn) (*session, error) {
	pb, err := NewPlayback(conn, svc.opts.SpeakFormat, svc.opts.Metrics, svc.now)
	if err != nil {
		return nil, err
	}
	s := &session{
		svc: svc, guildID: guildID, channelID: channelID, metrics: svc.opts.Metrics,
		log:     svc.log.With("guild_id", guildID, "channel_id", channelID),
		done:    make(chan struct{}),
		started: svc.now(),
		turns:   make(chan *Turn, 16), replies: make(chan replyDone, 1), decided: make(chan decided, 1),
		conns: make(chan *dvoice.Conn, 1), logCh: make(chan string, 64),
		speakers: map[string]*speaker{}, conn: conn, playback: pb, responder: svc.opts.Responder,
	}
	s.ctx, s.cancel = context.WithCancel(svc.ctx)
	return s, nil
}

// run is the session loop. It returns when the session ends (ctx, alone,
// max duration) after every goroutine of the session stopped.
func (s *session) run() {
	defer close(s.done)
	defer func() {
		if c, ok := s.responder.(io.Closer); ok && s.responder != s.svc.opts.Responder {
			if err := c.Close(); err != nil {
				s.log.Warn("voice_responder_close_failed", "error", err)
			}
		}
	}()
	defer s.wg.Wait()
	defer s.cancel()
	s.metrics.sessionDelta(1)
	defer s.metrics.sessionDelta(-1)
	if s.svc.cfg().Voice.LogChannelID != "" {
		s.wg.Go(s.postLogs)
	}
	streams := s.conn.Streams()
	// Greet when others were in the channel as the bot joined (the gateway's
	// voice states, which arrive before the bot's own join completes).
	s.greetPending = s.svc.cfg().Voice.JoinGreetingWindowSeconds > 0 && s.othersInState()
	s.maybeGreet()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	connDone := s.conn.Done()
	var lostAt time.Time // when the connection ended without a replacement yet
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-connDone:
			connDone = nil
			if reason := s.connEnded(); reason != "" {
				s.endReason = reason
				return
			}
			lostAt = s.svc.now()
		case st, ok := <-streams:
			if !ok {
				streams = nil
				continue
			}
			s.wg.Go(func() { s.runSpeaker(st) })
		case c := <-s.conns:
			s.mu.Lock()
			s.conn = c
			s.mu.Unlock()
			s.playback.SetSender(c)
			streams = c.Streams()
			connDone, lostAt = c.Done(), time.Time{}
		case t := <-s.turns:
			s.onTurn(t)
		case d := <-s.decided:
			s.onDecided(d)
		case r := <-s.replies:
			s.onReplyDone(r)
		case <-tick.C:
			s.maybeGreet()
			if !lostAt.IsZero() && s.svc.now().Sub(lostAt) >= reconnectGrace {
				s.endReason = "reconnect_timeout"
				s.log.Warn("voice_session_leave", "reason", s.endReason, "waited_ms", ms(s.svc.now().Sub(lostAt)))
				return
			}
			if reason := s.onTick(); reason != "" {
				s.endReason = reason
				s.log.Info("voice_session_leave", "reason", reason)
				return
			}
		}
	}
}

// othersInState reports whether the gateway's voice states put anyone but
// the bot in the session's channel.
func (s *session) othersInState() bool {
	st := s.svc.state(s.guildID)
	g, err := st.Guild(s.guildID)
	if err != nil || g == nil {
		return false
	}
	st.RLock()
	defer st.RUnlock()
	for _, vs := range g.VoiceStates {
		if vs != nil && vs.ChannelID == s.channelID && vs.UserID != s.svc.userID() {
			return true
		}
	}
	return false
}

// maybeGreet starts the pending join greeting once the others are connected
// to the voice server (so that they hear it), within the greeting window. The
// voice server announces them (op 11) some time after the connection is
// ready, so one look at session start could miss them.
func (s *session) maybeGreet() {
	if !s.greetPending {
		return
	}
	window := time.Duration(s.svc.cfg().Voice.JoinGreetingWindowSeconds) * time.Second
	if s.svc.now().Sub(s.started) >= window {
		s.greetPending = false
		return
	}
	if len(s.others()) > 0 {
		s.greetPending = false
		s.startGreeting(1)
	}
}

// reconnectGrace is how long a session waits for the connection manager to replace a voice
// connection that ended (close codes 4006, 4009 and the like: a new session) before it ends
// itself, so that a bot that cannot get back never sits in the channel deaf.
const reconnectGrace = 30 * time.Second

// connEnded handles the end of the session's voice connection: a close that means "do not
// reconnect" (4014 disconnected, 4022 call terminated) ends the session (the reason is
// returned); otherwise the manager reconnects and the session waits for the new connection.
// A reply in flight on the dead connection fails and is logged by its turn (voice_turn_failed).
func (s *session) connEnded() string {
	s.mu.Lock()
	err := s.conn.Err()
	s.mu.Unlock()
	var ce *dvoice.CloseError
	if errors.As(err, &ce) && ce.Action() == gateway.ActionStop {
		s.log.Warn("voice_session_leave", "reason", "disconnected", "close_code", int(ce.Code), "error", err.Error())
		return "disconnected"
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	s.log.Warn("voice_connection_lost", "error", msg, "grace_ms", reconnectGrace.Milliseconds())
	return ""
}

// others returns the members in the channel other than the bot.
func (s *session) others() []decision.Participant {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	var ps []decision.Participant
	for _, id := range c.ConnectedUsers() {
		if id == s.svc.userID() {
			continue
		}
		ps = append(ps, decision.Participant{ID: id, Name: s.svc.name(s.guildID, id)})
	}
	return ps
}

// onTick releases held turns, and ends the session when it has been alone
// too long or has lasted too long.
func (s *session) onTick() string {
	now := s.svc.now()
	for i := 0; i < len(s.held); {
		h := s.held[i]
		if now.Before(h.until) && s.othersActive(h.t.SpeakerID) {
			i++
			continue
		}
		s.held = append(s.held[:i], s.held[i+1:]...)
		s.queue = append(s.queue, h.t)
	}
	if s.cur.Load() == nil && len(s.deferred) > 0 {
		s.queue = append(s.deferred, s.queue...)
		s.deferred = nil
	}
	s.pump()
	v := s.svc.cfg().Voice
	if v.MaxSessionMinutes > 0 && now.Sub(s.started) >= time.Duration(v.MaxSessionMinutes)*time.Minute {
		return "max_session"
	}
	if len(s.others()) > 0 {
		s.aloneSince = time.Time{}
	} else if s.aloneSince.IsZero() {
		s.aloneSince = now
	} else if now.Sub(s.aloneSince) >= time.Duration(v.InactivityLeaveSeconds)*time.Second {
		return "alone"
	}
	return ""
}

// othersActive reports whether a member other than userID is mid-utterance.
func (s *session) othersActive(userID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, sp := range s.speakers {
		if id != userID && sp.active.Load() {
			return true
		}
	}
	return false
}

// onTurn records a transcribed turn and queues it for Stage A, or holds it
// while someone else is still talking (room-aware coalescing).
func (s *session) onTurn(t *Turn) {
	s.addLine(line{turnID: t.ID, ContextLine: decision.ContextLine{Speaker: t.SpeakerName, Text: t.Transcript}})
	t.Addressed = s.svc.opts.Engine.MatchName(t.Transcript).Addressed()
	hold := time.Duration(s.svc.cfg().Voice.Endpointing.RoomHoldMs) * time.Millisecond
	if !t.Addressed && hold > 0 && s.othersActive(t.SpeakerID) {
		s.held = append(s.held, heldTurn{t: t, until: s.svc.now().Add(hold)})
		return
	}
	s.queue = append(s.queue, t)
	s.pump()
}

func (s *session) addLine(l line) {
	s.timeline = append(s.timeline, l)
	if n := len(s.timeline) - timelineCap; n > 0 {
		s.timeline = append(s.timeline[:0], s.timeline[n:]...)
	}
	if s.svc.cfg().Voice.LogChannelID != "" {
		who := l.Speaker
		select {
		case s.logCh <- fmt.Sprintf("**%s**: %s", who, l.Text):
		default: // the log channel is behind: drop the line, never the turn
		}
	}
}

// pump starts Stage A on the next queued turn unless one is being decided.
func (s *session) pump() {
	if s.deciding || len(s.queue) == 0 {
		return
	}
	t := s.queue[0]
	s.queue = s.queue[1:]
	s.deciding = true
	vt := &decision.VoiceTurn{
		ID: t.ID, ChannelID: s.channelID, SpeakerID: t.SpeakerID, SpeakerName: t.SpeakerName,
		Transcript: t.Transcript, Duration: t.Duration, At: t.SpeechEnd,
		Participants: s.others(), Timeline: s.contextLines(t.ID), Engagement: s.engagement,
	}
	if ar := s.cur.Load(); ar != nil {
		vt.Engagement.BotSpeaking = true
	}
	s.wg.Go(func() {
		d := s.svc.opts.Engine.Decide(s.ctx, vt, slog.String("guild_id", s.guildID))
		select {
		case s.decided <- decided{t: t, vt: vt, d: d}:
		case <-s.ctx.Done():
		}
	})
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

// onDecided acts on a Stage A decision.
func (s *session) onDecided(dd decided) {
	s.deciding = false
	t, d := dd.t, dd.d
	now := s.svc.now()
	t.marks.mark(PhaseAdmission, now)
	s.metrics.observePhase(PhaseAdmission, now.Sub(t.SpeechEnd))
	switch {
	case d.Outcome == decision.OutcomeDefer || (d.Allowed() && s.cur.Load() != nil):
		s.metrics.turn("deferred")
		s.deferred = append(s.deferred, t)
	case d.Allowed():
		s.engagement.Observe(d, dd.vt)
		s.startReply(t, d, 0)
	default:
		s.metrics.turn("denied")
		s.log.Info("stt_pipeline_reply_denied", "turn_id", t.ID, "user_id", t.SpeakerID,
			"reason", d.Reason.String(), "transcript", t.Transcript,
			"admission_ms", ms(now.Sub(t.SpeechEnd)))
	}
	s.pump()
}

// startGreeting speaks the join greeting (attempt 1 or its one retry).
func (s *session) startGreeting(attempt int) {
	s.startReply(nil, decision.Decision{}, attempt)
}

// startReply opens the bot's turn and runs the Responder on a reply goroutine.
func (s *session) startReply(t *Turn, d decision.Decision, greeting int) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.replySeq++
	ar := &activeReply{id: s.replySeq, cancel: cancel}
	m := &marks{}
	if t != nil {
		ar.target = t.SpeakerID
		m = t.marks
	}
	s.cur.Store(ar)
	r := &Reply{Turn: t, Decision: d, Out: s.playback, Mark: m.mark}
	r.Instructions, r.Messages = s.prompt(t, d, greeting > 0)
	pb := s.playback
	s.wg.Go(func() {
		pb.Begin(func(at time.Time) {
			m.mark(PhaseFirstPacket, at)
			ar.firstPacket.Store(at.UnixNano())
		})
		res, err := s.responder.Respond(ctx, r)
		cancel()
		// The talk spurt ends with silence frames even after a cut.
		endCtx, endCancel := context.WithTimeout(context.WithoutCancel(s.ctx), time.Second)
		if eerr := pb.End(endCtx, !ar.interrupted.Load() && err == nil); eerr != nil && s.ctx.Err() == nil {
			// The reply itself went out; only the spurt's tail did not.
			s.log.Warn("voice_stop_speaking_failed", "error", eerr)
		}
		endCancel()
		select {
		case s.replies <- replyDone{ar: ar, turn: t, d: d, res: res, err: err, greeting: greeting}:
		case <-s.ctx.Done():
		}
	})
}

// onReplyDone closes the bot's turn: records what was actually said, logs
// the turn with its phases, and lets deferred turns through.
func (s *session) onReplyDone(r replyDone) {
	s.cur.Store(nil)
	now := s.svc.now()
	interrupted := r.ar.interrupted.Load()
	if r.res.Spoken != "" {
		text := r.res.Spoken
		if interrupted {
			text += " [interrupted]"
		}
		s.addLine(line{ContextLine: decision.ContextLine{Speaker: s.svc.cfg().Bot.Name, Text: text, Bot: true}})
	}
	target := ""
	if r.turn != nil {
		target = r.turn.SpeakerID
		s.engagement.BotReplied(target, now)
	}
	attrs := []any{"reply_target", target, "spoken", r.res.Spoken, "interrupted", interrupted}
	if r.turn != nil {
		attrs = append(attrs, "turn_id", r.turn.ID, "transcript", r.turn.Transcript, "reason", r.d.Reason.String())
		for p := PhaseTranscript; p <= PhaseFirstPacket; p++ {
			if at := r.turn.marks.get(p); !at.IsZero() {
				attrs = append(attrs, p.String()+"_ms", ms(at.Sub(r.turn.SpeechEnd)))
				if p > PhaseAdmission {
					s.metrics.observePhase(p, at.Sub(r.turn.SpeechEnd))
				}
			}
		}
	}
	if r.greeting > 0 {
		attrs = append(attrs, "greeting_attempt", r.greeting)
	}
	if r.turn != nil && r.err == nil && !interrupted && r.res.StageB.Outcome != decision.OutcomeUnknown {
		// Stage B's own event (reply_skipped / reply_accepted), as text logs it.
		sb := r.res.StageB
		sb.TurnID, sb.ChannelID, sb.UserID = r.turn.ID, s.channelID, r.turn.SpeakerID
		sb.Log(s.ctx, s.svc.log, slog.String("guild_id", s.guildID))
	}
	switch {
	case interrupted:
		by, _ := r.ar.interruptedBy.Load().(string)
		s.metrics.turn("interrupted")
		s.log.Info("stt_pipeline_reply_interrupted", append(attrs, "interrupted_by", by, "played_ms", ms(s.playback.Played()))...)
	case r.err != nil && !errors.Is(r.err, context.Canceled):
		s.metrics.turn("failed")
		s.log.Warn("voice_turn_failed", append(attrs, "stage", failStage(r.err), "error", r.err.Error())...)
	case r.res.Skipped || r.res.Spoken == "":
		s.metrics.turn("skipped")
		s.log.Info("stt_pipeline_reply_skipped", append(attrs, "stage_b", r.res.StageB.Reason.String())...)
		if r.greeting == 1 && s.ctx.Err() == nil {
			s.startGreeting(2) // one retry when the first greeting stayed silent
			return
		}
	default:
		s.metrics.turn("spoken")
		s.log.Info("stt_pipeline_reply_spoken", attrs...)
	}
	if len(s.deferred) > 0 {
		s.queue = append(s.deferred, s.queue...)
		s.deferred = nil
	}
	s.pump()
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

// prompt builds the generation instructions and messages for a reply.
func (s *session) prompt(t *Turn, d decision.Decision, greeting bool) (string, []llm.Message) {
	cfg := s.svc.cfg()
	var b strings.Builder
	if p, ok := cfg.Bot.Personas[cfg.Bot.Persona]; ok && p.Prompt != "" {
		b.WriteString(p.Prompt)
	} else {
		fmt.Fprintf(&b, "You are %s, a friendly member of a Discord server.", cfg.Bot.Name)
	}
	b.WriteString("\nYou are talking in a Discord voice channel: everything you write is spoken aloud." +
		" Answer in one to three short spoken sentences, no lists, no markdown, no emoji.")
	if ps := s.others(); len(ps) > 0 {
		b.WriteString("\nIn the channel: ")
		for i, p := range ps {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Name)
		}
		b.WriteByte('.')
	}
	var msgs []llm.Message
	for _, l := range s.timeline {
		if l.Bot {
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: l.Text})
		} else {
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: l.Speaker + ": " + l.Text})
		}
	}
	if greeting {
		b.WriteString("\nYou just joined the voice channel. Greet the people here in a few words. " + decision.SkipInstruction)
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "(" + cfg.Bot.Name + " joins the voice channel)"})
		return b.String(), msgs
	}
	b.WriteString("\n")
	b.WriteString(decision.Guidance(d, t.SpeakerName))
	if w := cfg.Voice.JoinGreetingWindowSeconds; w > 0 && s.svc.now().Sub(s.started) < time.Duration(w)*time.Second {
		b.WriteString("\nYou only just joined: a short greeting fits.")
	}
	return b.String(), msgs
}

// postLogs posts what was said to the configured log channel.
func (s *session) postLogs() {
	ch := s.svc.cfg().Voice.LogChannelID
	for {
		select {
		case <-s.ctx.Done():
			return
		case l := <-s.logCh:
			if _, err := s.svc.opts.Sender.Post(s.ctx, ch, l, "voice-log"); err != nil {
				s.log.Warn("voice_log_post_failed", "error", err)
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
