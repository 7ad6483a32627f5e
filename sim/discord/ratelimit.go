package discordsim

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Route names a REST route the way rate limits see it: method and path
// template, e.g. "POST /channels/{channel_id}/messages".
type Route string

// Routes commonly limited or failed in tests. Any route the simulator
// serves can be named the same way (see routes in rest.go).
const (
	RouteAny             Route = "" // for faults: whichever route comes next
	RouteGateway         Route = "GET /gateway"
	RouteGatewayBot      Route = "GET /gateway/bot"
	RouteMessageCreate   Route = "POST /channels/{channel_id}/messages"
	RouteMessageList     Route = "GET /channels/{channel_id}/messages"
	RouteMessageGet      Route = "GET /channels/{channel_id}/messages/{message_id}"
	RouteMessageEdit     Route = "PATCH /channels/{channel_id}/messages/{message_id}"
	RouteMessageDelete   Route = "DELETE /channels/{channel_id}/messages/{message_id}"
	RouteTyping          Route = "POST /channels/{channel_id}/typing"
	RouteInteractionResp Route = "POST /interactions/{interaction_id}/{token}/callback"
)

// Limit is a bucket's size: Requests per Window.
type Limit struct {
	Requests int
	Window   time.Duration
}

type bucket struct {
	remaining int
	resetAt   time.Time
}

type forcedFault struct {
	status     int
	retryAfter time.Duration
	global     bool
	afterwards bool      // the request is carried out, then answered with status
	cut        RESTFault // no answer at all (CutNext, CutNextAfterEffect, HangNext)
	pass       bool      // no fault: the request is handled as usual (PassNext)
}

// limiter implements Discord's REST limits: one bucket per route and major
// parameter, plus a global limit per token; and injected faults.
// https://discord.com/developers/docs/topics/rate-limits
type limiter struct {
	now        func() time.Time
	limits     map[Route]Limit
	defaultLim Limit
	globalLim  Limit

	mu      sync.Mutex // guards following
	buckets map[string]*bucket
	global  map[string]*bucket
	forced  map[Route][]forcedFault
}

func newLimiter(now func() time.Time, limits map[Route]Limit, def, global Limit) *limiter {
	return &limiter{
		now: now, limits: limits, defaultLim: def, globalLim: global,
		buckets: map[string]*bucket{}, global: map[string]*bucket{}, forced: map[Route][]forcedFault{},
	}
}

// verdict is the limiter's answer for one request.
type verdict struct {
	status     int       // 0 to proceed, 429 or an injected 5xx
	lostAnswer int       // proceed, then answer this status instead (the answer was lost)
	cut        RESTFault // no answer: cut before or after the effect, or hang
	global     bool
	retryAfter time.Duration
	scope      string
}

func bucketHash(r Route) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(r))
	return fmt.Sprintf("%016x", h.Sum64())
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// check accounts one request and sets the X-RateLimit-* headers on h.
// Discord's headers: Limit, Remaining, Reset (epoch seconds), Reset-After
// (seconds), Bucket; on 429 also Scope, Retry-After and, only for the
// global limit, Global.
func (l *limiter) check(h http.Header, route Route, major string, user UserID, exemptGlobal bool) verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	lim, ok := l.limits[route]
	if !ok {
		lim = l.defaultLim
	}
	b := l.refill(l.buckets, route+Route(":"+major), lim, now)
	setHeaders := func() {
		h.Set("X-RateLimit-Limit", strconv.Itoa(lim.Requests))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(b.remaining))
		reset := b.resetAt
		h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(reset.UnixMilli())/1000, 'f', 3, 64))
		h.Set("X-RateLimit-Reset-After", secs(reset.Sub(now)))
		h.Set("X-RateLimit-Bucket", bucketHash(route))
	}
	limited := func(v verdict) verdict {
		h.Set("X-RateLimit-Scope", v.scope)
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(v.retryAfter.Seconds()))))
		if v.global {
			h.Set("X-RateLimit-Global", "true")
		}
		return v
	}
	// Injected faults come first, route-specific before RouteAny.
	for _, r := range []Route{route, RouteAny} {
		if q := l.forced[r]; len(q) > 0 {
			f := q[0]
			l.forced[r] = q[1:]
			if f.pass {
				break // handled as usual; faults queued after it wait for the next request
			}
			if f.cut != RESTFaultNone {
				return verdict{cut: f.cut}
			}
			if f.afterwards {
				return verdict{lostAnswer: f.status}
			}
			if f.status != http.StatusTooManyRequests {
				return verdict{status: f.status}
			}
			if !f.global {
				b.remaining = 0
				b.resetAt = now.Add(f.retryAfter)
				setHeaders()
			}
			scope := "user"
			if f.global {
				scope = "global"
			}
			return limited(verdict{status: http.StatusTooManyRequests, global: f.global, retryAfter: f.retryAfter, scope: scope})
		}
	}
	if !exemptGlobal && user != "" && l.globalLim.Requests > 0 {
		g := l.refill(l.global, Route(user), l.globalLim, now)
		if g.remaining <= 0 {
			return limited(verdict{status: http.StatusTooManyRequests, global: true, retryAfter: g.resetAt.Sub(now), scope: "global"})
		}
		g.remaining--
	}
	if lim.Requests > 0 && b.remaining <= 0 {
		setHeaders()
		return limited(verdict{status: http.StatusTooManyRequests, retryAfter: b.resetAt.Sub(now), scope: "user"})
	}
	b.remaining--
	setHeaders()
	return verdict{}
}

func (l *limiter) refill(m map[string]*bucket, key Route, lim Limit, now time.Time) *bucket {
	b := m[string(key)]
	if b == nil || !now.Before(b.resetAt) {
		if b == nil {
			b = &bucket{}
			m[string(key)] = b
		}
		b.remaining = lim.Requests
		b.resetAt = now.Add(lim.Window)
	}
	return b
}

func (l *limiter) force(r Route, n int, f forcedFault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range n {
		l.forced[r] = append(l.forced[r], f)
	}
}
