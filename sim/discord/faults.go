package discordsim

import (
	"errors"
	"net/http"
	"time"
)

// Faults the transports inject on request: on the bot's gateway
// connections, on the next REST calls of a route, and latency on both.
// Voice faults are voicesim's (CloseVoice, DropVoice, SetFaults,
// CorruptNextWelcome).

var errNoSession = errors.New("discordsim: the bot has no connected gateway session")

// eachBotConn runs fn under the gateway's lock on every bot session with a
// connection, or returns errNoSession when there is none.
func (s *Server) eachBotConn(fn func(ss *session)) error {
	g := s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	var sess []*session
	for _, ss := range g.sessions {
		if ss.user == s.BotID() && ss.conn != nil && !ss.invalid {
			sess = append(sess, ss)
		}
	}
	if len(sess) == 0 {
		return errNoSession
	}
	for _, ss := range sess {
		fn(ss)
	}
	return nil
}

// DropGateway cuts the bot's gateway connections at the TCP level, with no
// close frame. Sessions stay resumable; clients should Resume.
func (s *Server) DropGateway() error {
	var conns []*gwConn
	err := s.eachBotConn(func(ss *session) { conns = append(conns, ss.conn) })
	for _, c := range conns {
		c.kill() // outside the lock: the reader's detach takes it
	}
	return err
}

// ForceReconnect sends op 7 Reconnect to the bot's connections; clients
// close and Resume on a new socket.
func (s *Server) ForceReconnect() error {
	return s.eachBotConn(func(ss *session) { ss.conn.sendLocked(encodeOp(OpReconnect, nil)) })
}

// ForceInvalidSession sends op 9 with d=resumable to the bot's
// connections and keeps the sockets open. With resumable false the session
// is discarded, so only a fresh Identify works (discordgo sends it on the
// same socket, discord.js on a new one); with true the client may Resume.
func (s *Server) ForceInvalidSession(resumable bool) error {
	return s.eachBotConn(func(ss *session) {
		c := ss.conn
		ss.conn = nil // the socket may Identify or Resume again
		if !resumable {
			ss.invalid = true
			delete(s.gw.sessions, ss.id)
		}
		c.sendLocked(encodeOp(OpInvalidSession, resumable))
		s.changes.notify()
	})
}

// WithholdACKs makes the bot's connections leave the next n heartbeats
// unacknowledged (no op 11). discordgo reconnects after 5 intervals
// without an ACK, discord.js as soon as one is missing.
func (s *Server) WithholdACKs(n int) error {
	return s.eachBotConn(func(ss *session) { ss.conn.withholdACK = n })
}

// RequestHeartbeat sends op 1 to the bot's connections; clients must
// answer with a heartbeat at once.
func (s *Server) RequestHeartbeat() error {
	return s.eachBotConn(func(ss *session) { ss.conn.sendLocked(encodeOp(OpHeartbeat, nil)) })
}

// CloseGateway closes the bot's gateway connections with a Close frame
// carrying code (e.g. 4000 Unknown error: the session stays resumable).
func (s *Server) CloseGateway(code CloseCode) error {
	return s.eachBotConn(func(ss *session) { ss.conn.closeWith(code, "closed by the test") })
}

// SetGatewayLatency delays every gateway frame sent from now on by d (0
// turns it off), as a slow link would: frames keep their order. Frames
// already queued are not delayed.
func (s *Server) SetGatewayLatency(d time.Duration) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.latency = max(d, 0)
}

// GatewayLatency returns the injected gateway latency and how many frames
// have been sent with it.
func (s *Server) GatewayLatency() (d time.Duration, delayedFrames int) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.latency, s.gw.delayed
}

// SetRESTLatency delays the answers of route (RouteAny: of every route
// without a latency of its own) by d; 0 removes it. The request takes
// effect first, then the answer waits; RESTRequest.Delay records it.
func (s *Server) SetRESTLatency(r Route, d time.Duration) {
	s.rest.mu.Lock()
	defer s.rest.mu.Unlock()
	if d <= 0 {
		delete(s.rest.latency, r)
		return
	}
	s.rest.latency[r] = d
}

// RateLimitNext makes the next n requests on route (RouteAny: on any
// route) answer 429 with retry_after. global marks them as the global
// limit (X-RateLimit-Global, scope "global").
func (s *Server) RateLimitNext(r Route, n int, retryAfter time.Duration, global bool) {
	s.rest.limiter.force(r, n, forcedFault{status: http.StatusTooManyRequests, retryAfter: retryAfter, global: global})
}

// FailNext makes the next n requests on route (RouteAny: on any route)
// answer status (a 5xx) with Discord's JSON error body. discordgo retries
// 502 up to three times; discord.js retries every 5xx three times.
func (s *Server) FailNext(r Route, n int, status int) {
	s.rest.limiter.force(r, n, forcedFault{status: status})
}

// FailNextAfterCommit makes the next n requests on route (RouteAny: on any
// route) take effect and then answer status (a 5xx) instead of their
// result, as when Discord's edge loses the answer of a create that
// happened: a client retrying without a nonce posts twice.
func (s *Server) FailNextAfterCommit(r Route, n int, status int) {
	s.rest.limiter.force(r, n, forcedFault{status: status, afterwards: true})
}

// RESTFault is what an injected fault did to a REST request instead of answering it: the
// ways a hostile network loses a request or its answer. The zero value is no such fault.
type RESTFault int

const (
	// RESTFaultNone: the request was answered (perhaps with an injected status).
	RESTFaultNone RESTFault = iota
	// CutBeforeEffect: the TCP connection was closed without an answer before the request
	// reached the world (nothing happened).
	CutBeforeEffect
	// CutAfterEffect: the request took effect (a message was created), then the connection
	// was closed without an answer.
	CutAfterEffect
	// HangBeforeEffect: the request was held, without effect, until the client gave up (its
	// connection closed) or the server closed; it never takes effect.
	HangBeforeEffect
)

// String is the fault's name in the control API ("cut_before_effect", …; "" for none).
func (f RESTFault) String() string {
	switch f {
	case CutBeforeEffect:
		return "cut_before_effect"
	case CutAfterEffect:
		return "cut_after_effect"
	case HangBeforeEffect:
		return "hang_before_effect"
	}
	return ""
}

// CutNext makes the next n requests on route (RouteAny: on any route) end with their TCP
// connection closed and no answer, before they take effect: the client sees a network error
// for a request Discord never received.
func (s *Server) CutNext(r Route, n int) {
	s.rest.limiter.force(r, n, forcedFault{cut: CutBeforeEffect})
}

// CutNextAfterEffect makes the next n requests on route (RouteAny: on any route) take effect
// and then end with their TCP connection closed and no answer: a create happened, and the
// client sees only a network error (a retry without nonce/enforce_nonce posts twice).
func (s *Server) CutNextAfterEffect(r Route, n int) {
	s.rest.limiter.force(r, n, forcedFault{cut: CutAfterEffect})
}

// PassNext lets the next n requests on route (RouteAny: on any route) through as usual,
// ahead of the faults queued after it: PassNext(r, 1) then HangNext(r, 1) hangs the second
// request, not the first (the second part of a reply split in two).
func (s *Server) PassNext(r Route, n int) {
	s.rest.limiter.force(r, n, forcedFault{pass: true})
}

// HangNext makes the next n requests on route (RouteAny: on any route) hang without effect
// until the client gives up (closes its connection) or the server closes: the request never
// takes effect and is never answered, as when it is lost on the way in.
func (s *Server) HangNext(r Route, n int) {
	s.rest.limiter.force(r, n, forcedFault{cut: HangBeforeEffect})
}
