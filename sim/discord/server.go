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

	"github.com/banterbot/banter/sim/discord/world"
)

// Server is a running simulated Discord: the world (package world, whose
// methods it has: CreateGuild, AddMember, Messages, Sent, ...) with the
// transports over it (REST, the gateway, voice signalling, the CDN), the
// faults they can be told to inject, and the scripting API of simulated
// users (Post, Edit, React, JoinVoice, InvokeCommand, ...). Its zero value
// is not usable; build one with New (and Start), or simtest.Serve in tests.
type Server struct {
	*world.World
	log   *slog.Logger
	cfg   config
	rest  *restAPI
	gw    *gateway
	cdn   *cdn
	voice VoiceBackend

	changes *changes // wakes Await on any change of the world, the gateway or the REST log

	ln      net.Listener
	httpSrv *http.Server
	wg      sync.WaitGroup // the HTTP server goroutine and every gateway connection
	base    string         // "http://127.0.0.1:PORT"
}

// New builds a Server with its bot user and application; it does not
// listen until Start.
func New(opts ...Option) *Server {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	s := &Server{
		World: world.New(world.Config{Now: c.now, IDNow: c.idNow, BotName: c.botName, BotToken: c.botToken}),
		log:   c.log, cfg: c, voice: c.voice, changes: newChanges(),
	}
	s.cdn = newCDN(s.World, s.APIBaseURL, c.now)
	s.gw = newGateway(s.World, &s.cfg, s.GatewayURL, s.changes.notify, &s.wg, s.cdn)
	s.gw.onVoiceState = s.voiceStateFromGateway
	s.rest = newRESTAPI(s.World, &s.cfg, s.GatewayURL, s.changes.notify, s.cdn)
	s.rest.applyMemberEdit = s.modifyMember
	s.World.Observe(func(v *world.View, e world.Event) {
		s.gw.observe(v, e)
		s.changes.notify()
	})
	return s
}

// Start listens on addr (use "127.0.0.1:0" for an ephemeral port) and serves
// REST, the gateway and the CDN until Close. Call it once.
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

// routes serves REST under /api/v9 and /api/v10, the CDN under
// /attachments, and the gateway on any other path.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.rest.mount(mux)
	s.cdn.mount(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.gw.accepts(r) {
			s.gw.serve(w, r)
			return
		}
		s.rest.notFound(mux, w, r)
	})
	return mux
}

// Close stops serving, closes every gateway connection and waits for all of
// the server's goroutines. It is safe to call more than once.
func (s *Server) Close() error {
	if !s.gw.shutdown() {
		return nil
	}
	s.changes.close()
	s.rest.close()
	var err error
	if s.httpSrv != nil {
		err = s.httpSrv.Close() // hijacked websockets are not closed by this; shutdown killed them
	}
	s.wg.Wait()
	return err
}

// Token returns the bot's token (without the "Bot " prefix).
func (s *Server) Token() string { return s.UserToken(s.BotID()) }

// ApplicationID returns the application id (equal to the bot user id).
func (s *Server) ApplicationID() UserID { return s.BotID() }

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

var errClosed = errors.New("discordsim: server closed")

// Await blocks until cond returns true, the server closes or ctx is done.
// cond runs without any of the server's locks held, first at once and then
// after every change of the world, the gateway or the REST log, so it may
// call any method (Sent, GatewayEvents, Connected, ...). Package simtest
// builds its waits on it.
func (s *Server) Await(ctx context.Context, cond func() bool) error {
	for {
		ch, closed := s.changes.wait()
		if cond() {
			return nil
		}
		if closed {
			return errClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("discordsim: wait: %w", ctx.Err())
		}
	}
}

// Connected reports whether u has an identified (or resumed) gateway
// session with a connection attached.
func (s *Server) Connected(u UserID) bool { return s.gw.connected(u) }

// changes is a broadcast: wait returns a channel closed at the next notify.
type changes struct {
	mu     sync.Mutex // guards following
	ch     chan struct{}
	closed bool
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		close(c.ch)
		c.ch = make(chan struct{})
	}
}

func (c *changes) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.ch)
	}
}

func (c *changes) wait() (<-chan struct{}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch, c.closed
}
