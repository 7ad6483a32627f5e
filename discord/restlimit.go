package discord

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// GlobalRESTLimit is Discord's global REST budget per bot token: 50 requests per second,
// shared by every process of the bot.
// https://discord.com/developers/docs/topics/rate-limits#global-rate-limit
const GlobalRESTLimit = 50

// ProcessRESTShare is the share of the global REST budget one process may use when its shards
// are a part of all of them: the budget split by shard, so the processes of a bot together never
// pass it (a process running 2 of 4 shards gets 25 requests per second).
func ProcessRESTShare(shardsRun, shardCount int) float64 {
	if shardCount < 1 || shardsRun >= shardCount {
		return GlobalRESTLimit
	}
	return GlobalRESTLimit * float64(shardsRun) / float64(shardCount)
}

// restLimiter holds each REST request until the process's share of the global budget allows it,
// so that a sharded bot's processes do not draw 429s from each other. discordgo's own limiter
// still handles the per-route buckets.
//
// The share must hold in every window Discord might count, whenever it starts, and at Discord's
// end of the wire. A token bucket does not do that: with a burst equal to the rate it lets a
// process send twice its share within one second (the full bucket, then the refill). Instead the
// limiter has n slots (the share per second, rounded down); a request takes a slot, and the slot
// is free again one window after the request's response arrived. A request reaches Discord
// before its response comes back, so two requests of one slot reach Discord at least a window
// apart, and any window sees at most n requests from this process, however the network delays
// them. The processes' n add up to at most the global limit.
//
// Interaction callbacks and webhooks (interaction follow-ups) are not bound by the global limit
// on Discord and do not wait here.
type restLimiter struct {
	slots  chan time.Time // one entry per free slot: the time it may be used
	window time.Duration
	next   http.RoundTripper
}

func newRESTLimiter(perSecond float64, next http.RoundTripper) *restLimiter {
	n, window := restSlots(perSecond)
	l := &restLimiter{slots: make(chan time.Time, n), window: window, next: next}
	for range n {
		l.slots <- time.Time{}
	}
	return l
}

// restSlots turns a rate into n requests per window: the rate rounded down per second, or, below
// one per second, one per the window that keeps the rate.
func restSlots(perSecond float64) (n int, window time.Duration) {
	if perSecond >= 1 {
		return int(math.Floor(perSecond)), time.Second
	}
	return 1, time.Duration(float64(time.Second) / perSecond)
}

// globalExempt reports whether Discord leaves a request out of the global limit: interaction
// callbacks (/interactions/{id}/{token}/callback) and webhooks (/webhooks/{app}/{token}...).
func globalExempt(path string) bool {
	return strings.Contains(path, "/interactions/") || strings.Contains(path, "/webhooks/")
}

func (l *restLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	if globalExempt(req.URL.Path) {
		return l.next.RoundTrip(req)
	}
	if err := l.take(req.Context()); err != nil {
		return nil, fmt.Errorf("discord: REST budget: %w", err)
	}
	resp, err := l.next.RoundTrip(req)
	l.slots <- time.Now().Add(l.window)
	return resp, err
}

// charge counts a request made before the limiter existed, whose response arrived at done.
func (l *restLimiter) charge(done time.Time) {
	<-l.slots // the limiter is new: every slot is free
	l.slots <- done.Add(l.window)
}

// take waits for a slot and until it may be used.
func (l *restLimiter) take(ctx context.Context) error {
	var at time.Time
	select {
	case at = <-l.slots:
	case <-ctx.Done():
		return ctx.Err()
	}
	wait := time.Until(at)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		l.slots <- at // unused: the next request may take it at the same time
		return ctx.Err()
	}
}

// RESTMetrics counts what Discord's REST API answers that matters to operators: 429s.
type RESTMetrics struct {
	rateLimited *prometheus.CounterVec
}

// NewRESTMetrics registers the REST metrics with reg (nil: not registered).
func NewRESTMetrics(reg prometheus.Registerer) *RESTMetrics {
	m := &RESTMetrics{rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_discord_rest_rate_limited_total",
		Help: "Discord REST responses 429 Too Many Requests, by X-RateLimit-Scope (global, user, shared; unknown when absent).",
	}, []string{"scope"})}
	for _, s := range []string{"global", "user", "shared"} {
		m.rateLimited.WithLabelValues(s)
	}
	if reg != nil {
		reg.MustRegister(m.rateLimited)
	}
	return m
}

// restCounter counts the 429s a REST transport receives. discordgo waits and retries them; the
// count tells an operator that the budget is too tight (global) or a route is hammered (user).
type restCounter struct {
	m    *RESTMetrics
	next http.RoundTripper
}

func (c *restCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		scope := strings.ToLower(resp.Header.Get("X-RateLimit-Scope"))
		switch {
		case resp.Header.Get("X-RateLimit-Global") == "true":
			scope = "global"
		case scope != "global" && scope != "user" && scope != "shared":
			scope = "unknown"
		}
		c.m.rateLimited.WithLabelValues(scope).Inc()
	}
	return resp, err
}
