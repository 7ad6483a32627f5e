package voice

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/decision"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

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
	// owner is the turn answered (nil for the greeting); falseEnd is set when its member went
	// on with it (falseend.go): the reply is then dropped from the conversation.
	owner    *turn
	falseEnd atomic.Bool
}

// replyDone reports the end of a reply to the session loop.
type replyDone struct {
	rp     *replyRun
	res    Result
	err    error
	played time.Duration // audio that went out
}

// decided reports a Stage A decision to the session loop.
type decided struct {
	t  *turn
	vt *decision.VoiceTurn
	d  decision.Decision
}

// heldTurn is a turn held while another member is still talking.
type heldTurn struct {
	t     *turn
	until time.Time
}

// session is the bot in one guild's voice channel. The loop goroutine (run)
// owns the conversation state; the Service's hearing clock owns the speakers'
// Listeners; each
// turn runs on its own goroutine (runTurn), asking the loop at every step; one
// reply at a time owns the Playback.
type session struct {
	svc     *Service
	guildID string
	// ch is the voice channel (a move by a moderator changes it: move.go); lg the session's
	// logger, with the guild and the channel it is in when it logs (channelHandler). Read them
	// with channel() and logger().
	ch      atomic.Pointer[string]
	lg      *slog.Logger
	metrics *Metrics
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	done    chan struct{} // closed when run and every goroutine ended
	started time.Time
	// since is when the session began for voice.maxSessionMinutes: started, or the start of
	// the kept session a rejoin took up again (rejoin.go).
	since time.Time
	// rejoined: the session took up a kept session of an earlier process (rejoin.go): the
	// room had it already, so it does not greet as a join does. Set before run.
	rejoined bool
	// kept: the session has a record (joined by command, or rejoined) naming requestedBy;
	// a move updates it (move.go). Set before run.
	kept         bool
	requestedBy  string
	greetPending bool // the join greeting may still start (session loop only)
	// ending is set once the session is ending (its loop returned): a join that finds it
	// waits for its end instead of taking it for the guild's live session.
	ending atomic.Bool
	// settling mirrors stoppedAt (below) for joins: the connection was closed "do not
	// reconnect" and the session waits to learn whether it was moved or kicked (moveSettle).
	settling atomic.Bool

	// The loop's inboxes: turns entering the conversation (admit), Stage A
	// decisions, replies done (record), fresh connections, and the log
	// channel's lines (to the poster goroutine).
	entered    chan *turn
	decided    chan decided
	replies    chan replyDone
	specEvents chan specEvent
	falseEnds  chan falseEnd
	conns      chan *dvoice.Conn
	moves      chan move // moves of the bot by someone else (move.go)
	logCh      chan string
	memCh      chan store.Message // transcripts on their way to memory (captureLoop)

	cur atomic.Pointer[activeReply]
	// open is the record of the utterance the bot is answering (openturns.go).
	open openTurns

	mu       sync.Mutex // guards following
	speakers map[string]*speaker
	conn     *dvoice.Conn
	// entries counts the turns that entered the conversation, lastEntry is each member's
	// latest (entries at the time): a false end needs no other member's turn in between.
	entries   uint64
	lastEntry map[string]uint64

	responder Responder

	// owned by the loop goroutine
	playback   *Playback
	timeline   []line
	engagement decision.Engagement
	queue      []*turn
	deferred   []*turn
	held       []heldTurn
	deciding   bool
	spec       *turn  // the speculative turn holding Stage A's slot (speculative.go)
	lineSeq    uint64 // lines added to the timeline so far
	replySeq   uint64
	aloneSince time.Time
	endReason  string // why the session ended itself ("" when it was left)
	// movePending: the bot was moved (move.go) and the new channel's connection is not up
	// yet; stoppedAt: the connection was closed "do not reconnect" with no move or kick
	// known yet (moveSettle).
	movePending bool
	stoppedAt   time.Time
	stopCode    int // the close code of that connection
	// leftFor is why the Service left it (left, shutdown), set before it is cancelled; guarded
	// by mu (the loop may be ending itself meanwhile).
	leftFor string
}

func newSession(svc *Service, guildID, channelID string, conn *dvoice.Conn) (*session, error) {
	pb, err := newPlayback(conn, svc.opts.SpeakFormat, svc.opts.SpeakEncoder, svc.opts.Metrics, svc.now)
	if err != nil {
		return nil, err
	}
	now := svc.now()
	s := &session{
		svc: svc, guildID: guildID, metrics: svc.opts.Metrics,
		done:    make(chan struct{}),
		started: now, since: now,
		entered: make(chan *turn, 16), replies: make(chan replyDone, 1), decided: make(chan decided, 1),
		specEvents: make(chan specEvent, 16), falseEnds: make(chan falseEnd, 4), lastEntry: map[string]uint64{},
		conns: make(chan *dvoice.Conn, 1), moves: make(chan move, 4), logCh: make(chan string, 64), memCh: make(chan store.Message, captureQueue),
		speakers: map[string]*speaker{}, conn: conn, playback: pb,
	}
	s.open.kick = make(chan struct{}, 1)
	s.setChannel(channelID)
	s.lg = slog.New(channelHandler{svc.log.With("guild_id", guildID).Handler(), s.channel})
	// Every model call of the session is charged to its guild (slots set at each call).
	s.ctx, s.cancel = context.WithCancel(llm.WithAccount(svc.ctx, llm.Account{Guild: guildID}))
	return s, nil
}

// channel is the session's voice channel.
func (s *session) channel() string {
	if c := s.ch.Load(); c != nil {
		return *c
	}
	return ""
}

// logger is the session's logger: guild_id, and channel_id the channel the session is in
// when a line is logged, so that whoever keeps it (the Responder, a realtime socket) follows
// a move.
func (s *session) logger() *slog.Logger { return s.lg }

// setChannel puts the session in channelID (at start, and after a move).
func (s *session) setChannel(channelID string) { s.ch.Store(&channelID) }

// channelHandler adds channel_id, the session's channel at the time, to every record, before
// the record's own attributes (a line that names another channel_id, the log channel's, keeps
// its own last). Loggers derived with With or WithGroup keep adding it.
type channelHandler struct {
	slog.Handler
	channel func() string
}

// Handle implements slog.Handler.
func (h channelHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(slog.String("channel_id", h.channel()))
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h channelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return channelHandler{h.Handler.WithAttrs(as), h.channel}
}

// WithGroup implements slog.Handler.
func (h channelHandler) WithGroup(name string) slog.Handler {
	return channelHandler{h.Handler.WithGroup(name), h.channel}
}

// run is the session loop. It returns when the session ends (ctx, alone,
// max duration, disconnected) after every goroutine of the session stopped.
func (s *session) run() {
	defer s.windDown()
	s.metrics.sessionDelta(1)
	if s.svc.cfg().Voice.LogChannelID != "" {
		s.wg.Go(s.postLogs)
	}
	if s.svc.opts.Memory != nil {
		s.wg.Go(s.captureLoop)
	}
	if s.svc.opts.OpenTurns != nil {
		s.wg.Go(s.keepOpenTurns)
	}
	streams := s.conn.Streams()
	// Greet when others were in the channel as the bot joined (the gateway's
	// voice states, which arrive before the bot's own join completes); a rejoined session
	// was in the channel before the restart and does not.
	s.greetPending = !s.rejoined && s.svc.cfg().Voice.JoinGreetingWindowSeconds > 0 && s.othersInState()
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
			s.hear(st)
		case mv := <-s.moves:
			if reason := s.onMoved(mv); reason != "" {
				s.endReason = reason
				return
			}
		case c := <-s.conns:
			s.useConn(c, lostAt)
			streams, connDone, lostAt = c.Streams(), c.Done(), time.Time{}
		case t := <-s.entered:
			s.onEntered(t)
		case e := <-s.specEvents:
			s.onSpecEvent(e)
		case fe := <-s.falseEnds:
			s.onFalseEnd(fe)
		case d := <-s.decided:
			s.onDecided(d)
		case r := <-s.replies:
			s.onReplyDone(r)
		case <-tick.C:
			if reason := s.onTick(lostAt); reason != "" {
				s.endReason = reason
				return
			}
		}
	}
}

// windDown ends the session once its loop returned: every goroutine stops,
// a reply that ended with the session is recorded, the Responder is closed.
func (s *session) windDown() {
	s.ending.Store(true)
	s.cancel()
	s.wg.Wait()
	for { // a reply that ended as the session did may wait here unrecorded
		select {
		case r := <-s.replies:
			s.sessionEndedDuring(r)
			continue
		default:
		}
		break
	}
	if c, ok := s.responder.(io.Closer); ok {
		if err := c.Close(); err != nil {
			s.logger().Warn("voice_responder_close_failed", "error", err)
		}
	}
	s.metrics.sessionDelta(-1)
	reason := s.reason()
	// Before done, as the kept session's record below: the guild's next session takes what
	// this one left open.
	s.settleOpen(reason)
	// Before done: a Leave returns once the record is settled, so that a join following it
	// (a !leave, then a !join of the same channel) keeps its own.
	s.svc.settleRecord(s, reason)
	close(s.done)
}

// reason is why the session ended: its own reason (alone, max_session, …) or the Service's
// (left, shutdown). Called once run has returned.
func (s *session) reason() string {
	if s.endReason != "" {
		return s.endReason
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leftFor != "" {
		return s.leftFor
	}
	return endLeft
}

// useConn switches the session to a fresh voice connection (the manager's
// replacement after a lost one).
func (s *session) useConn(c *dvoice.Conn, lostAt time.Time) {
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
	s.movePending, s.stoppedAt = false, time.Time{}
	s.settling.Store(false)
	s.playback.SetSender(c)
	attrs := []any{}
	if !lostAt.IsZero() {
		attrs = append(attrs, "lost_ms", ms(s.svc.now().Sub(lostAt)))
	}
	s.logger().Info("voice_connection_restored", attrs...)
}

// endingSoon reports whether the session is ending, or may be about to without having taken
// it in yet: its connection closed "do not reconnect" with no move known (moveSettle), or the
// bot's voice state no longer in the session's channel (a move or a disconnect the session
// loop has not handled). A join does not take such a session for the guild's live one.
func (s *session) endingSoon() bool {
	return s.ending.Load() || s.settling.Load() || s.svc.mgr.Channel(s.guildID) != s.channel()
}

// othersInState reports whether the gateway's voice states put anyone but
// the bot in the session's channel.
func (s *session) othersInState() bool {
	ch, self := s.channel(), s.svc.userID()
	return s.anyVoiceState(func(vs *discordgo.VoiceState) bool { return vs.ChannelID == ch && vs.UserID != self })
}

// anyVoiceState reports whether one of the guild's voice states in the gateway state matches.
func (s *session) anyVoiceState(match func(*discordgo.VoiceState) bool) bool {
	st := s.svc.state(s.guildID)
	g, err := st.Guild(s.guildID)
	if err != nil || g == nil {
		return false
	}
	st.RLock()
	defer st.RUnlock()
	for _, vs := range g.VoiceStates {
		if vs != nil && match(vs) {
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
	if !s.greetPending || s.spec != nil {
		return // (a speculative turn holds the floor: the next tick)
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

// connEnded handles the end of the session's voice connection, and returns the reason when
// the session ends with it:
//   - the bot is in no channel per its latest VOICE_STATE_UPDATE (kicked, its channel
//     deleted): it ends (disconnected);
//   - the bot was moved (move.go): the move's new connection is on its way;
//   - a close that means "do not reconnect" (4014, 4022) with neither known yet: the gateway
//     has moveSettle to say which (onTick);
//   - otherwise the manager reconnects and the session waits for the new connection.
//
// A reply in flight on the dead connection fails and is logged by its turn (voice_turn_failed).
func (s *session) connEnded() string {
	s.mu.Lock()
	err := s.conn.Err()
	s.mu.Unlock()
	var ce *dvoice.CloseError
	stop := errors.As(err, &ce) && ce.Action() == gateway.ActionStop
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	in := s.svc.mgr.Channel(s.guildID)
	switch {
	case in == "":
		attrs := []any{"reason", endDisconnected, "error", msg}
		if ce != nil {
			attrs = append(attrs, "close_code", int(ce.Code))
		}
		s.logger().Warn("voice_session_leave", attrs...)
		return endDisconnected
	case s.movePending || in != s.channel():
		s.logger().Info("voice_connection_lost", "error", msg, "reason", "moved", "grace_ms", reconnectGrace.Milliseconds())
		return ""
	case stop:
		s.stoppedAt, s.stopCode = s.svc.now(), int(ce.Code)
		s.settling.Store(true)
		s.logger().Info("voice_connection_lost", "error", msg, "reason", "disconnected", "close_code", int(ce.Code),
			"settle_ms", moveSettle.Milliseconds())
		return ""
	}
	s.logger().Warn("voice_connection_lost", "error", msg, "grace_ms", reconnectGrace.Milliseconds())
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

// onTick runs every 100 ms: the pending greeting, held and deferred turns,
// and the session's end — when the lost connection was not replaced in
// time, when it has been alone too long or has lasted too long (the reason
// is returned, "" to go on).
func (s *session) onTick(lostAt time.Time) string {
	s.maybeGreet()
	now := s.svc.now()
	if !s.stoppedAt.IsZero() && (s.svc.mgr.Channel(s.guildID) == "" || now.Sub(s.stoppedAt) >= moveSettle) {
		s.logger().Warn("voice_session_leave", "reason", endDisconnected, "close_code", s.stopCode,
			"waited_ms", ms(now.Sub(s.stoppedAt)))
		return endDisconnected
	}
	if !lostAt.IsZero() && now.Sub(lostAt) >= reconnectGrace {
		s.logger().Warn("voice_session_leave", "reason", endReconnectTimeout, "waited_ms", ms(now.Sub(lostAt)))
		return endReconnectTimeout
	}
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
	reason := ""
	if v.MaxSessionMinutes > 0 && now.Sub(s.since) >= time.Duration(v.MaxSessionMinutes)*time.Minute {
		reason = endMaxSession
	} else if len(s.others()) > 0 {
		s.aloneSince = time.Time{}
	} else if s.aloneSince.IsZero() {
		s.aloneSince = now
	} else if now.Sub(s.aloneSince) >= time.Duration(v.InactivityLeaveSeconds)*time.Second {
		reason = endAlone
	}
	if reason != "" {
		attrs := []any{"reason", reason, "session_ms", ms(now.Sub(s.started))}
		if reason == endAlone {
			attrs = append(attrs, "alone_ms", ms(now.Sub(s.aloneSince)))
		}
		s.logger().Info("voice_session_leave", attrs...)
	}
	return reason
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
