package openaisim

import (
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Session limits and context window compression on the Gemini face, as the Live API's session
// management pages describe them (shared reference §1.6):
//
//   - A session is the conversation a resumption handle continues, across its connections.
//     Without contextWindowCompression in the setup it lasts at most 15 minutes while only
//     audio was sent, 2 minutes once video was. Its end comes as goAway, then a close 1011
//     "Deadline expired before operation could complete." (the close seen in practice); the
//     session is gone after it, so a resumption of it is refused with 1008 "BidiGenerateContent
//     session not found".
//   - With compression the session has no limit: when the context (system instruction and
//     conversation) passes triggerTokens (default 80% of the model's 131,072), the oldest
//     turns are dropped down to targetTokens (default trigger/2), the window always starting
//     at a user turn; the system instruction stays.
//   - A connection lives at most the connection limit (10 minutes), whichever the session; its
//     end is goAway, then a close 1000.
//
// The face keeps its own clock, the server's clock plus what GeminiAdvance (POST
// /_sim/gemini/advance) added: a test ages every connection and session at once and sees the
// goAway and the close that follow, without waiting.

const (
	// DefaultGeminiSessionLimit is how long a session without compression lasts on audio only.
	DefaultGeminiSessionLimit = 15 * time.Minute
	// DefaultGeminiVideoSessionLimit is how long it lasts once video was sent.
	DefaultGeminiVideoSessionLimit = 2 * time.Minute
	// gmContextTokens is the Live models' input token limit (ai.google.dev model pages).
	gmContextTokens = 131072
)

// Why a connection ends.
const (
	gmEndConnection = "connection"
	gmEndSession    = "session"
)

// gmSession is one Live session across its connections. Guarded by the Server's mu.
type gmSession struct {
	started time.Time // on the face's clock
	video   bool      // video was sent: the 2-minute limit
	expired bool      // its limit passed: it cannot be resumed
}

// gmHandle is what a resumption handle resumes: the conversation when it was issued, and the
// session.
type gmHandle struct {
	history []string
	sess    *gmSession
}

// WithGeminiSessionLimit sets how long a session without context window compression lasts
// while only audio was sent (default 15 min) and once video was (default 2 min). 0 lifts a
// limit.
func WithGeminiSessionLimit(audioOnly, withVideo time.Duration) Option {
	return func(s *Server) error {
		if audioOnly < 0 || withVideo < 0 {
			return fmt.Errorf("openaisim: negative Gemini session limit %v or %v", audioOnly, withVideo)
		}
		s.gmSessionLimit, s.gmVideoSessionLimit = audioOnly, withVideo
		return nil
	}
}

// GeminiAdvance moves the Gemini face's clock forward by d: every connection and session ages
// by d at once, and what that time would have brought (goAway, the close at a connection or
// session limit) follows without waiting for it.
func (s *Server) GeminiAdvance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("openaisim: the Gemini clock only moves forward, not by %v", d)
	}
	s.mu.Lock()
	s.gmSkew += d
	s.gmWakeLocked()
	s.mu.Unlock()
	return nil
}

// gmNow is the face's clock.
func (s *Server) gmNow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now().Add(s.gmSkew)
}

// gmTicks returns a channel closed at the next change of the clock or of a session's limit.
func (s *Server) gmTicks() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gmTick
}

// gmWakeLocked wakes every connection's lifetime to look at its deadline again. Call with mu.
func (s *Server) gmWakeLocked() {
	close(s.gmTick)
	s.gmTick = make(chan struct{})
}

// newGeminiSession starts a session now.
func (s *Server) newGeminiSession() *gmSession {
	return &gmSession{started: s.gmNow()}
}

// sessionEnd is when a session without compression ends (ok false: no limit applies).
func (s *Server) sessionEnd(sess *gmSession) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := s.gmSessionLimit
	if sess.video {
		limit = s.gmVideoSessionLimit
	}
	return sess.started.Add(limit), limit > 0
}

// markVideo notes that a session was sent video (its limit becomes the video one).
func (s *Server) markVideo(sess *gmSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess != nil && !sess.video {
		sess.video = true
		s.gmWakeLocked()
	}
}

// expire ends a session: its handles no longer resume it.
func (s *Server) expire(sess *gmSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.expired = true
	for h, v := range s.gmHandles {
		if v.sess == sess {
			delete(s.gmHandles, h)
		}
	}
}

// storeHandle keeps a conversation of sess under a new session resumption handle.
func (s *Server) storeHandle(sess *gmSession, history []string) string {
	h := s.newID("gsession")
	s.mu.Lock()
	s.gmHandles[h] = gmHandle{history: history, sess: sess}
	s.mu.Unlock()
	return h
}

// resumeHandle returns the conversation and the session a handle was issued for; ok is false
// for an unknown handle or one whose session has ended.
func (s *Server) resumeHandle(h string, compressed bool) ([]string, *gmSession, bool) {
	v, ok := func() (gmHandle, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		v, ok := s.gmHandles[h]
		return v, ok && !v.sess.expired
	}()
	if !ok {
		return nil, nil, false
	}
	if end, limited := s.sessionEnd(v.sess); limited && !compressed && !s.gmNow().Before(end) {
		s.expire(v.sess)
		return nil, nil, false
	}
	return append([]string(nil), v.history...), v.sess, true
}

// deadline is when the connection ends and why: its connection limit from opened, or its
// session's limit when the setup did not turn compression on (ok false: neither applies).
func (c *gmConn) deadline(opened time.Time) (end time.Time, why string, ok bool) {
	if lim := c.s.gmLimit; lim > 0 {
		end, why = opened.Add(lim), gmEndConnection
	}
	c.mu.Lock()
	sess, compressed := c.sess, c.setup != nil && c.setup.ContextWindowCompression != nil
	c.mu.Unlock()
	if sess != nil && !compressed {
		if at, limited := c.s.sessionEnd(sess); limited && (why == "" || at.Before(end)) {
			end, why = at, gmEndSession
		}
	}
	return end, why, why != ""
}

// lifetime ends the connection at its deadline: goAway when the deadline is goAwayLead away on
// the face's clock, then the close. GeminiGoAway sends the goAway at once.
func (c *gmConn) lifetime() {
	opened, lead := c.s.gmNow(), c.s.gmGoAwayLead
	for {
		end, why, ok := c.deadline(opened)
		tick := c.s.gmTicks()
		var timer *time.Timer
		var at <-chan time.Time
		if ok {
			wait := end.Add(-lead).Sub(c.s.gmNow())
			if wait <= 0 {
				c.endAt(end, why)
				return
			}
			timer = time.NewTimer(wait)
			at = timer.C
		}
		select {
		case <-c.ctx.Done():
		case left := <-c.goAway:
			c.endAt(c.s.gmNow().Add(left), gmEndConnection)
		case <-tick:
		case <-at:
		}
		if timer != nil {
			timer.Stop()
		}
		if c.ctx.Err() != nil || c.isClosed() {
			return
		}
	}
}

// endAt sends goAway with the time left until end (to 100 ms, as a timer that fired a little
// late would otherwise make it 9.9978s), waits for it on the face's clock and closes: 1000 at
// the connection limit; at the session limit 1011, and the session is gone.
func (c *gmConn) endAt(end time.Time, why string) {
	now := c.s.gmNow()
	left := max(end.Sub(now), 0).Round(100 * time.Millisecond)
	end = now.Add(left)
	c.send(&gmServerMessage{GoAway: &gmGoAway{TimeLeft: durationJSON(left)}})
	for {
		tick := c.s.gmTicks()
		left := end.Sub(c.s.gmNow())
		if left <= 0 {
			break
		}
		t := time.NewTimer(left)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-tick:
		case <-t.C:
		}
		t.Stop()
	}
	if why == gmEndSession {
		c.mu.Lock()
		sess := c.sess
		c.mu.Unlock()
		c.s.expire(sess)
		c.closeWith(websocket.CloseInternalServerErr, "Deadline expired before operation could complete.")
		return
	}
	c.closeWith(websocket.CloseNormalClosure, "connection limit reached")
}

func (c *gmConn) isClosed() bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.closed
}

// compressLocked applies the setup's sliding window when the context is over its trigger. Call
// with c.mu.
func (c *gmConn) compressLocked() {
	cw := c.setup.ContextWindowCompression
	if cw == nil {
		return
	}
	trigger, target := int64(gmContextTokens*8/10), int64(0)
	if cw.TriggerTokens != nil {
		trigger = int64(*cw.TriggerTokens)
	}
	if cw.SlidingWindow != nil && cw.SlidingWindow.TargetTokens != nil {
		target = int64(*cw.SlidingWindow.TargetTokens)
	} else {
		target = trigger / 2
	}
	fixed := 0
	if c.setup.SystemInstruction != nil {
		fixed = countTokens(c.setup.SystemInstruction.text())
	}
	total := int64(fixed)
	for _, l := range c.history {
		total += int64(countTokens(l))
	}
	if total <= trigger {
		return
	}
	drop := 0
	for drop < len(c.history) && total > target {
		total -= int64(countTokens(c.history[drop]))
		drop++
	}
	for drop < len(c.history) && !strings.HasPrefix(c.history[drop], "user: ") {
		drop++ // the window starts at a user turn
	}
	c.history = append([]string(nil), c.history[drop:]...)
	c.compressions++
}
