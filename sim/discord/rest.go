package discordsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/sim/discord/world"
)

// restAPI is the REST transport: routing for /api/v9 and /api/v10,
// authentication, rate limits, injected faults and latency, JSON (and
// multipart) in, rendered world state out. Handlers hold no lock of their
// own: each calls one World method and renders its result.
// https://discord.com/developers/docs/reference#http-api
type restAPI struct {
	world      *world.World
	cfg        *config
	log        *slog.Logger
	limiter    *limiter
	cdn        *cdn
	gatewayURL func() string
	notify     func()
	// applyMemberEdit applies a PATCH /guilds/{g}/members/{u} (Server.modifyMember).
	applyMemberEdit func(by UserID, g GuildID, u UserID, e world.MemberEdit) error
	done            chan struct{} // closed by close: ends hanging requests
	closeOnce       sync.Once

	mu      sync.Mutex // guards following
	reqs    []RESTRequest
	latency map[Route]time.Duration // injected before answering; RouteAny: every route
	holding int                     // requests HangNext holds now
}

func newRESTAPI(w *world.World, cfg *config, gatewayURL func() string, notify func(), c *cdn) *restAPI {
	return &restAPI{
		world: w, cfg: cfg, log: cfg.log, cdn: c, gatewayURL: gatewayURL, notify: notify,
		limiter: newLimiter(cfg.limitNow, cfg.limits, cfg.defaultLim, cfg.global),
		latency: map[Route]time.Duration{}, done: make(chan struct{}),
	}
}

// close ends every request held by HangNext.
func (a *restAPI) close() { a.closeOnce.Do(func() { close(a.done) }) }

// apiRequest is one authenticated REST call with its body read.
type apiRequest struct {
	*http.Request
	user UserID // "" for routes without authentication
	body []byte
}

// apiFunc handles a call and returns the status and body (nil for 204).
type apiFunc func(q *apiRequest) (int, any, error)

type routeOpts struct {
	noAuth       bool   // interaction callbacks and webhook-token routes
	exemptGlobal bool   // interaction endpoints are not globally limited
	major        string // path value naming the bucket's major parameter
}

// RESTRequest records one REST call for tests.
type RESTRequest struct {
	Method string
	Path   string
	Route  Route
	User   UserID
	Status int
	// Query is the raw query string; Body the request body as sent when it
	// is JSON (a multipart upload's payload_json), nil otherwise or when
	// empty, for conformance checks.
	Query string
	Body  json.RawMessage
	// Files names the files a multipart upload carried.
	Files []string
	// Delay is the latency injected into the answer (SetRESTLatency).
	Delay time.Duration
	// Fault says how the request went unanswered (CutNext, CutNextAfterEffect, HangNext);
	// Status is 0 then.
	Fault RESTFault
	// Received is when the request arrived (before its body was read), Answered when its
	// answer was about to be written, injected latency included (zero when it got none), both
	// on the server's clock (WithClock).
	Received, Answered time.Time
}

// RESTLog returns every REST call so far, in order.
func (s *Server) RESTLog() []RESTRequest {
	s.rest.mu.Lock()
	defer s.rest.mu.Unlock()
	return slices.Clone(s.rest.reqs)
}

// Holding returns how many requests HangNext holds right now: received, without effect, not
// yet given up by their client (Await wakes when it changes).
func (s *Server) Holding() int {
	s.rest.mu.Lock()
	defer s.rest.mu.Unlock()
	return s.rest.holding
}

// maxBody is the largest JSON body accepted; Discord answers larger ones with 413.
const maxBody = 1 << 20

// maxRequest bounds any request body: a multipart upload of world.MaxUpload
// plus its payload.
const maxRequest = world.MaxUpload + maxBody

// mount registers every REST route under /api/v9 and /api/v10.
func (a *restAPI) mount(mux *http.ServeMux) {
	a.routes(func(route Route, o routeOpts, h apiFunc) {
		method, path, _ := strings.Cut(string(route), " ")
		for _, v := range []string{"v9", "v10"} {
			mux.Handle(method+" /api/"+v+path, a.api(route, o, h))
		}
	})
}

// notFound answers a request no route took: a known path with another
// method gets Discord's JSON 405, anything else its 404.
func (a *restAPI) notFound(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	a.conform(r, nil)
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := mux.Handler(probe); p != "/" {
			writeJSON(w, http.StatusMethodNotAllowed, wireError{Message: "405: Method Not Allowed", Code: codeGeneral})
			return
		}
	}
	writeJSON(w, http.StatusNotFound, wireError{Message: "404: Not Found", Code: codeGeneral})
}

// api wraps a handler with body reading, the conformance check,
// authentication, rate limiting, fault and latency injection, and the log.
func (a *restAPI) api(route Route, o routeOpts, h apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := RESTRequest{Method: r.Method, Path: r.URL.Path, Route: route, Query: r.URL.RawQuery, Received: a.cfg.now()}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
		q := &apiRequest{Request: r, body: body}
		rec.Body, rec.Files = loggedBody(r, body)
		a.conform(r, rec.Body)
		var status int
		var out any
		if err != nil || len(body) > maxRequest {
			status, out = http.StatusRequestEntityTooLarge, wireError{Message: world.ErrTooLarge.Message, Code: world.ErrTooLarge.Code}
		} else {
			status, out, rec.Fault = a.serveAPI(w, q, route, o, h)
		}
		rec.User, rec.Status = q.user, status
		if rec.Fault == RESTFaultNone {
			rec.Delay = a.delay(r, route)
			rec.Answered = a.cfg.now()
		}
		a.mu.Lock()
		a.reqs = append(a.reqs, rec)
		a.mu.Unlock()
		a.notify()
		if rec.Fault != RESTFaultNone {
			cutConnection(w)
			return
		}
		writeJSON(w, status, out)
	})
}

// cutConnection closes the request's TCP connection without writing an answer.
func cutConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // net/http closes the connection without an answer
}

// hang holds a request until its client gives up or the server closes.
func (a *restAPI) hang(r *http.Request) {
	a.mu.Lock()
	a.holding++
	a.mu.Unlock()
	a.notify()
	defer func() {
		a.mu.Lock()
		a.holding--
		a.mu.Unlock()
		a.notify()
	}()
	select {
	case <-r.Context().Done():
	case <-a.done:
	}
}

// conform runs the conformance check (WithConformance) on a request under
// /api/.
func (a *restAPI) conform(r *http.Request, body []byte) {
	if a.cfg.check == nil || !strings.HasPrefix(r.URL.Path, "/api/") {
		return
	}
	if err := a.cfg.check.Request(r.Method, r.URL.Path, body); err != nil && a.cfg.report != nil {
		a.cfg.report(err)
	}
}

// loggedBody is what the log and the conformance check see of a body: the
// JSON as sent, or a multipart upload's payload_json and file names.
func loggedBody(r *http.Request, body []byte) (json.RawMessage, []string) {
	if len(body) == 0 {
		return nil, nil
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		up, err := parseUpload(r.Header.Get("Content-Type"), body)
		if err != nil {
			return nil, nil
		}
		var names []string
		for _, f := range up.files {
			names = append(names, f.Name)
		}
		return up.payload, names
	}
	return json.RawMessage(slices.Clone(body)), nil
}

// delay sleeps the latency injected for route (or every route) and returns
// it; a client that gives up ends it early.
func (a *restAPI) delay(r *http.Request, route Route) time.Duration {
	a.mu.Lock()
	d, ok := a.latency[route]
	if !ok {
		d = a.latency[RouteAny]
	}
	a.mu.Unlock()
	if d <= 0 {
		return 0
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
	return d
}

// serveAPI authenticates, rate-limits and runs h, applying an injected fault; a request
// faulted without an answer (cut or hung) returns that fault and status 0.
func (a *restAPI) serveAPI(w http.ResponseWriter, q *apiRequest, route Route, o routeOpts, h apiFunc) (int, any, RESTFault) {
	if !o.noAuth {
		var u UserID
		var ok bool
		tok := stripAuthPrefix(q.Header.Get("Authorization"))
		a.world.Read(func(v *world.View) { u, ok = v.UserByToken(tok) })
		if !ok {
			return http.StatusUnauthorized, wireError{Message: "401: Unauthorized", Code: codeUnauthorized}, RESTFaultNone
		}
		q.user = u
	}
	major := ""
	if o.major != "" {
		major = q.PathValue(o.major)
	}
	v := a.limiter.check(w.Header(), route, major, q.user, o.exemptGlobal)
	switch v.cut {
	case CutBeforeEffect:
		return 0, nil, v.cut
	case HangBeforeEffect:
		a.hang(q.Request)
		return 0, nil, v.cut
	case CutAfterEffect:
		_, _, _ = h(q) // it takes effect; whatever it answers is lost
		return 0, nil, v.cut
	}
	switch {
	case v.status == http.StatusTooManyRequests:
		return v.status, struct {
			Message    string  `json:"message"`
			RetryAfter float64 `json:"retry_after"`
			Global     bool    `json:"global"`
		}{"You are being rate limited.", v.retryAfter.Seconds(), v.global}, RESTFaultNone
	case v.status != 0:
		return v.status, wireError{Message: fmt.Sprintf("%d: %s", v.status, http.StatusText(v.status)), Code: codeGeneral}, RESTFaultNone
	}
	status, body, err := h(q)
	if err == nil && v.lostAnswer != 0 {
		return v.lostAnswer, wireError{Message: fmt.Sprintf("%d: %s", v.lostAnswer, http.StatusText(v.lostAnswer)), Code: codeGeneral}, RESTFaultNone
	}
	if err != nil {
		var we *world.Error
		if errors.As(err, &we) {
			return we.Status, wireError{Message: we.Message, Code: we.Code}, RESTFaultNone
		}
		return http.StatusInternalServerError, wireError{Message: err.Error(), Code: codeGeneral}, RESTFaultNone
	}
	return status, body, RESTFaultNone
}

// stripAuthPrefix accepts "Bot <t>", "Bearer <t>" and a raw "<t>" (§4 A2).
func stripAuthPrefix(h string) string {
	h = strings.TrimSpace(h)
	for _, p := range []string{"Bot ", "Bearer "} {
		if len(h) > len(p) && strings.EqualFold(h[:len(p)], p) {
			return strings.TrimSpace(h[len(p):])
		}
	}
	return h
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	if status == http.StatusNoContent || body == nil {
		w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"message":"500: Internal Server Error","code":0}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

var errInvalidJSON = &world.Error{Status: 400, Code: world.CodeInvalidJSON, Message: "The request body contains invalid JSON."}

// decodeBody reads a JSON request body into v; an empty body is an error, a body over maxBody
// is 413 Request entity too large (code 40005), as on Discord.
func decodeBody(q *apiRequest, v any) error {
	if len(q.body) > maxBody {
		return world.ErrTooLarge
	}
	if len(strings.TrimSpace(string(q.body))) == 0 {
		return errInvalidJSON
	}
	if err := json.Unmarshal(q.body, v); err != nil {
		return errInvalidJSON
	}
	return nil
}

// render runs fn inside world.Read and returns what it built.
func (a *restAPI) render(fn func(v *world.View) any) any {
	var out any
	a.world.Read(func(v *world.View) { out = fn(v) })
	return out
}

// ok answers 200 with what fn renders.
func (a *restAPI) ok(fn func(v *world.View) any) (int, any, error) {
	return http.StatusOK, a.render(fn), nil
}

// message answers 200 with a rendered message (or err).
func (a *restAPI) message(m world.Message, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return a.ok(func(v *world.View) any { return wireMessageOf(v, m, a.cdn, 0) })
}

// routes lists every REST route the simulator serves.
func (a *restAPI) routes(add func(Route, routeOpts, apiFunc)) {
	ch := routeOpts{major: "channel_id"}
	gd := routeOpts{major: "guild_id"}
	add(RouteGateway, routeOpts{noAuth: true}, a.getGateway)
	add(RouteGatewayBot, routeOpts{}, a.getGatewayBot)
	add("GET /users/@me", routeOpts{}, a.getMe)
	add("GET /users/{user_id}", routeOpts{}, a.getUser)
	add("GET /applications/@me", routeOpts{}, a.getApplication)
	add("GET /guilds/{guild_id}", gd, a.getGuild)
	add("PATCH /guilds/{guild_id}", gd, a.modifyGuild)
	add("GET /guilds/{guild_id}/channels", gd, a.getGuildChannels)
	add("GET /guilds/{guild_id}/roles", gd, a.getGuildRoles)
	add("GET /guilds/{guild_id}/members", gd, a.listMembers)
	add("GET /guilds/{guild_id}/members/{user_id}", gd, a.getMember)
	add("PATCH /guilds/{guild_id}/members/{user_id}", gd, a.modifyMember)
	add("PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}", gd, a.addMemberRole)
	add("DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}", gd, a.removeMemberRole)
	add("GET /guilds/{guild_id}/threads/active", gd, a.getActiveThreads)
	add("GET /channels/{channel_id}", ch, a.getChannel)
	a.messageRoutes(add)
	a.reactionRoutes(add)
	a.interactionRoutes(add)
}
