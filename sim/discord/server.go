package discordsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/gorilla/websocket"
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

// WithClock sets the clock used for snowflakes and message timestamps
// (default time.Now). Ids stay strictly increasing even when it stands
// still. Rate-limit windows do not follow it (see WithRateLimitClock), so
// a frozen test clock cannot wedge a client in endless 429s.
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

// Server is a running simulated Discord. Its zero value is not usable; build
// one with New or Serve.
type Server struct {
	log       *slog.Logger
	heartbeat time.Duration
	voice     VoiceBackend
	limiter   *limiter
	cfg       config
	upgrader  websocket.Upgrader

	ln      net.Listener
	httpSrv *http.Server
	wg      sync.WaitGroup // the HTTP server goroutine and every gateway connection
	base    string         // "http://127.0.0.1:PORT"

	mu      sync.Mutex // guards following, and worldState
	changed chan struct{}
	closed  bool
	worldState
	// Transport state: gateway sessions and sockets, and what was recorded.
	sessions map[string]*session
	conns    map[*gwConn]struct{}
	gwEvents []GatewayEvent
	restLog  []RESTRequest
	connSeq  int
	// lastIdentify is when each rate-limit key of the bot last identified (WithIdentifySpacing).
	lastIdentify map[int]time.Time
}

// New builds a Server with its bot user and application; it does not
// listen until Start.
func New(opts ...Option) *Server {
	c := config{
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
	for _, o := range opts {
		o(&c)
	}
	s := &Server{
		log:        c.log,
		heartbeat:  c.heartbeat,
		voice:      c.voice,
		cfg:        c,
		changed:    make(chan struct{}),
		worldState: newWorldState(c.now, cmpClock(c.idNow, c.now)),
		sessions:   map[string]*session{},
		conns:      map[*gwConn]struct{}{},
	}
	s.upgrader = websocket.Upgrader{
		ReadBufferSize:  4096,
		WriteBufferSize: 4096,
		CheckOrigin:     func(*http.Request) bool { return true },
	}
	s.limiter = newLimiter(c.limitNow, c.limits, c.defaultLim, c.global)
	s.bot = s.createUser(c.botName, true, true)
	if c.botToken != "" {
		delete(s.tokens, s.users[s.bot].token)
		s.users[s.bot].token = c.botToken
		s.tokens[c.botToken] = s.bot
	}
	return s
}

// Start listens on addr (use "127.0.0.1:0" for an ephemeral port) and serves
// REST and the gateway until Close. Call it once.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("discordsim: listen %s: %w", addr, err)
	}
	s.ln = ln
	s.base = "http://" + ln.Addr().String()
	s.httpSrv = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("discordsim: serve", "err", err)
		}
	}()
	return nil
}

// Close stops serving, closes every gateway connection and waits for all of
// the server's goroutines. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*gwConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.notifyLocked()
	s.mu.Unlock()
	var err error
	if s.httpSrv != nil {
		err = s.httpSrv.Close() // hijacked websockets are not closed by this
	}
	for _, c := range conns {
		c.kill()
	}
	s.wg.Wait()
	return err
}

// Token returns the bot's token (without the "Bot " prefix).
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[s.bot].token
}

// BotID returns the bot user's id, which is also the application id.
func (s *Server) BotID() UserID { return s.bot }

// ApplicationID returns the application id (equal to the bot user id).
func (s *Server) ApplicationID() UserID { return s.bot }

// APIBaseURL returns "http://127.0.0.1:PORT" ("" before Start). discordgo
// appends /api/v9/..., discord.js wants APIBaseURL()+"/api".
func (s *Server) APIBaseURL() string { return s.base }

// GatewayURL returns the gateway URL GET /gateway answers,
// "ws://127.0.0.1:PORT" ("" before Start).
func (s *Server) GatewayURL() string {
	if s.base == "" {
		return ""
	}
	return "ws" + s.base[len("http"):]
}

// notifyLocked wakes every waiter. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

var errClosed = errors.New("discordsim: server closed")

// waitFor blocks until check (run with s.mu held) returns true, the server
// closes or ctx is done.
func (s *Server) waitFor(ctx context.Context, check func() bool) error {
	for {
		s.mu.Lock()
		if check() {
			s.mu.Unlock()
			return nil
		}
		if s.closed {
			s.mu.Unlock()
			return errClosed
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("discordsim: wait: %w", ctx.Err())
		}
	}
}
