package discordsim

import (
	"log/slog"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// Option configures a Server.
type Option func(*config)

type config struct {
	log         *slog.Logger
	now         func() time.Time
	limitNow    func() time.Time
	heartbeat   time.Duration
	botName     string
	voice       VoiceBackend
	voiceSim    *voicesim.Server
	limits      map[Route]Limit
	global      Limit
	defaultLim  Limit
	replayLimit int
	privileged  Intents
	idNow       func() time.Time // snowflake clock; nil: now
	botToken    string           // "": generated
	// shards and maxConcurrency are what GET /gateway/bot recommends; identifySpacing, when
	// set, is how soon one rate-limit key may identify again (Discord: 5 s).
	shards          int
	maxConcurrency  int
	identifySpacing time.Duration
	// check, when set, is run on every REST request; report gets its errors.
	check  RequestChecker
	report func(error)
}

func defaultConfig() config {
	return config{
		log:         slog.New(slog.DiscardHandler),
		now:         time.Now,
		limitNow:    time.Now,
		heartbeat:   41250 * time.Millisecond,
		botName:     "simbot",
		limits:      map[Route]Limit{},
		global:      Limit{Requests: 50, Window: time.Second},
		defaultLim:  Limit{Requests: 50, Window: time.Second},
		replayLimit: 1000,
		privileged:  IntentGuildMembers | IntentGuildPresences | IntentMessageContent,
	}
}

// WithIDClock sets the clock used for snowflakes only (default: the
// WithClock clock). A clock that stands still while a world is built gives
// the same ids on every run: ids then count up by one.
func WithIDClock(now func() time.Time) Option { return func(c *config) { c.idNow = now } }

// WithBotToken fixes the bot's token (default: a random one), so scripts
// and written configs can rely on it.
func WithBotToken(tok string) Option { return func(c *config) { c.botToken = tok } }

// WithShards sets GET /gateway/bot's recommended shard count and identify concurrency
// (default 1 and 1). Sessions always shard as their Identify says.
func WithShards(count, maxConcurrency int) Option {
	return func(c *config) { c.shards, c.maxConcurrency = max(count, 1), max(maxConcurrency, 1) }
}

// WithIdentifySpacing enforces the session start rate limit: a second Identify for the same
// rate-limit key (shard_id % max_concurrency) within d is refused with Invalid Session, as
// Discord does. Zero (the default) does not enforce it.
func WithIdentifySpacing(d time.Duration) Option { return func(c *config) { c.identifySpacing = d } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithClock sets the clock used for snowflakes, message timestamps and the
// CDN's signed URLs (default time.Now). Ids stay strictly increasing even
// when it stands still. Rate-limit windows do not follow it (see
// WithRateLimitClock), so a frozen test clock cannot wedge a client in
// endless 429s.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithRateLimitClock sets the clock rate-limit buckets refill by (default
// time.Now), for deterministic rate-limit tests.
func WithRateLimitClock(now func() time.Time) Option { return func(c *config) { c.limitNow = now } }

// WithHeartbeatInterval sets the heartbeat_interval sent in Hello (default
// 41.25 s, as Discord). Tests of missed heartbeats shorten it. It is sent in
// whole milliseconds, at least 1.
func WithHeartbeatInterval(d time.Duration) Option {
	return func(c *config) { c.heartbeat = max(d.Truncate(time.Millisecond), time.Millisecond) }
}

// WithBotName sets the bot user's username (default "simbot").
func WithBotName(name string) Option { return func(c *config) { c.botName = name } }

// WithVoiceBackend sets the voice server that admits voice connections
// (default: none; VOICE_SERVER_UPDATE then carries endpoint
// "localhost:0" and nobody can connect).
func WithVoiceBackend(v VoiceBackend) Option { return func(c *config) { c.voice = v } }

// WithRouteLimit sets the rate limit of one route's buckets (one bucket per
// route and major parameter, as Discord).
func WithRouteLimit(r Route, limit int, window time.Duration) Option {
	return func(c *config) { c.limits[r] = Limit{Requests: limit, Window: window} }
}

// WithDefaultRouteLimit sets the limit of every route not set with
// WithRouteLimit (default 50 requests per second).
func WithDefaultRouteLimit(limit int, window time.Duration) Option {
	return func(c *config) { c.defaultLim = Limit{Requests: limit, Window: window} }
}

// WithGlobalLimit sets the global limit per token (default 50 requests per
// second, as Discord). Interaction callbacks are exempt, as on Discord.
func WithGlobalLimit(limit int, window time.Duration) Option {
	return func(c *config) { c.global = Limit{Requests: limit, Window: window} }
}

// WithReplayLimit sets how many dispatches a session keeps for Resume
// (default 1000, at most 3/4 of the 4096-frame send queue so that a
// replay always fits). A Resume from further back gets Invalid Session.
func WithReplayLimit(n int) Option {
	return func(c *config) { c.replayLimit = min(max(n, 1), sendQueue*3/4) }
}

// WithPrivilegedIntents sets which privileged intents the application may
// request (default all of GUILD_MEMBERS, GUILD_PRESENCES and
// MESSAGE_CONTENT). Identify asking for others is closed with 4014.
func WithPrivilegedIntents(i Intents) Option { return func(c *config) { c.privileged = i } }

// RequestChecker checks one REST request against the real API's
// specification (sim/conform's Discord checker is one): method, the path
// as sent (with /api/v10), and the JSON body (nil when there is none; for
// a multipart upload, its payload_json).
type RequestChecker interface {
	Request(method, path string, body []byte) error
}

// WithConformance checks every REST request the simulator receives with
// check, before it is served, and hands each violation to report (called
// from the request's goroutine; it must be safe for concurrent use). The
// request is served either way: the simulator stays as lenient as it is,
// and the test that set report decides. simtest.Serve turns it on with the
// embedded official spec and fails the test on any violation.
func WithConformance(check RequestChecker, report func(error)) Option {
	return func(c *config) { c.check, c.report = check, report }
}

// WithoutConformance turns the check of WithConformance off again (for a
// test that sends off-spec requests on purpose).
func WithoutConformance() Option { return func(c *config) { c.check, c.report = nil, nil } }
