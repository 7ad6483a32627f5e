package discordsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/websocket"
)

// REST plumbing: routing for /api/v9 and /api/v10, authentication, rate
// limits and faults, JSON in and out.
// https://discord.com/developers/docs/reference#http-api

// apiRequest is one authenticated REST call.
type apiRequest struct {
	*http.Request
	user UserID // "" for routes without authentication
}

// apiFunc handles a call with s.mu held and returns the status and body
// (nil for 204).
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
	// is JSON (nil otherwise or when empty), for conformance checks.
	Query string
	Body  json.RawMessage
}

// RESTLog returns every REST call so far, in order.
func (s *Server) RESTLog() []RESTRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.restLog)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.restRoutes(func(route Route, o routeOpts, h apiFunc) {
		method, path, _ := strings.Cut(string(route), " ")
		for _, v := range []string{"v9", "v10"} {
			mux.Handle(method+" /api/"+v+path, s.api(route, o, h))
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// The gateway answers on any path (§4 C): clients append
		// "?v=…&encoding=json" to whatever URL they were given.
		if r.Method == http.MethodGet && websocket.IsWebSocketUpgrade(r) && !strings.HasPrefix(r.URL.Path, "/api/") {
			s.serveGateway(w, r)
			return
		}
		// A known path with another method gets Discord's JSON 405.
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, p := mux.Handler(probe); p != "/" {
				writeJSON(w, http.StatusMethodNotAllowed, wireError{Message: "405: Method Not Allowed", Code: codeGeneral})
				return
			}
		}
		writeJSON(w, http.StatusNotFound, wireError{Message: "404: Not Found", Code: codeGeneral})
	})
	return mux
}

// api wraps a handler with authentication, rate limiting and fault
// injection, runs it under s.mu and writes its JSON.
func (s *Server) api(route Route, o routeOpts, h apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := &apiRequest{Request: r}
		sent := keepBody(r)
		status, body := s.serveAPI(w, q, route, o, h)
		s.mu.Lock()
		s.restLog = append(s.restLog, RESTRequest{Method: r.Method, Path: r.URL.Path, Route: route, User: q.user,
			Status: status, Query: r.URL.RawQuery, Body: sent})
		s.notifyLocked()
		s.mu.Unlock()
		writeJSON(w, status, body)
	})
}

// keepBody reads a JSON request body (up to maxBody+1 bytes, so the
// handler still sees an oversized one) and puts it back for the handler. It
// returns the body for the log, or nil when it is empty or not JSON.
func keepBody(r *http.Request) json.RawMessage {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body = io.NopCloser(bytes.NewReader(b))
	if !json.Valid(b) {
		return nil
	}
	return b
}

func (s *Server) serveAPI(w http.ResponseWriter, q *apiRequest, route Route, o routeOpts, h apiFunc) (int, any) {
	if !o.noAuth {
		tok := stripAuthPrefix(q.Header.Get("Authorization"))
		s.mu.Lock()
		u, ok := s.tokens[tok]
		s.mu.Unlock()
		if !ok {
			return http.StatusUnauthorized, wireError{Message: "401: Unauthorized", Code: codeUnauthorized}
		}
		q.user = u
	}
	major := ""
	if o.major != "" {
		major = q.PathValue(o.major)
	}
	v := s.limiter.check(w.Header(), route, major, q.user, o.exemptGlobal)
	switch {
	case v.status == http.StatusTooManyRequests:
		return v.status, struct {
			Message    string  `json:"message"`
			RetryAfter float64 `json:"retry_after"`
			Global     bool    `json:"global"`
		}{"You are being rate limited.", v.retryAfter.Seconds(), v.global}
	case v.status != 0:
		return v.status, wireError{Message: fmt.Sprintf("%d: %s", v.status, http.StatusText(v.status)), Code: codeGeneral}
	}
	s.mu.Lock()
	status, body, err := h(q)
	s.mu.Unlock()
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return ae.status, wireError{Message: ae.message, Code: ae.code}
		}
		return http.StatusInternalServerError, wireError{Message: err.Error(), Code: codeGeneral}
	}
	return status, body
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

var errInvalidJSON = &apiError{400, 50109, "The request body contains invalid JSON."}

// maxBody is the largest JSON body accepted; Discord answers larger ones with 413.
const maxBody = 1 << 20

// decodeBody reads a JSON request body into v; an empty body is an error, a body over maxBody
// is 413 Request entity too large (code 40005), as on Discord.
func decodeBody(q *apiRequest, v any) error {
	b, err := io.ReadAll(io.LimitReader(q.Body, maxBody+1))
	if len(b) > maxBody {
		return &apiError{http.StatusRequestEntityTooLarge, 40005, "Request entity too large"}
	}
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return errInvalidJSON
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errInvalidJSON
	}
	return nil
}

// restRoutes lists every REST route the simulator serves.
func (s *Server) restRoutes(add func(Route, routeOpts, apiFunc)) {
	ch := routeOpts{major: "channel_id"}
	gd := routeOpts{major: "guild_id"}
	add(RouteGateway, routeOpts{noAuth: true}, s.getGateway)
	add(RouteGatewayBot, routeOpts{}, s.getGatewayBot)
	add("GET /users/@me", routeOpts{}, s.getMe)
	add("GET /users/{user_id}", routeOpts{}, s.getUser)
	add("GET /applications/@me", routeOpts{}, s.getApplication)
	add("GET /guilds/{guild_id}", gd, s.getGuild)
	add("GET /guilds/{guild_id}/channels", gd, s.getGuildChannels)
	add("GET /guilds/{guild_id}/roles", gd, s.getGuildRoles)
	add("GET /guilds/{guild_id}/members", gd, s.listMembers)
	add("GET /guilds/{guild_id}/members/{user_id}", gd, s.getMember)
	add("GET /guilds/{guild_id}/threads/active", gd, s.getActiveThreads)
	add("GET /channels/{channel_id}", ch, s.getChannel)
	add(RouteMessageList, ch, s.listMessages)
	add(RouteMessageCreate, ch, s.postMessage)
	add(RouteMessageGet, ch, s.getMessage)
	add(RouteMessageEdit, ch, s.patchMessage)
	add(RouteMessageDelete, ch, s.deleteMessage)
	add(RouteTyping, ch, s.postTyping)
	add("POST /channels/{channel_id}/threads", ch, s.postThread)
	add("POST /channels/{channel_id}/messages/{message_id}/threads", ch, s.postThread)
	for _, base := range []string{"/applications/{application_id}", "/applications/{application_id}/guilds/{guild_id}"} {
		ap := routeOpts{major: "application_id"}
		add(Route("GET "+base+"/commands"), ap, s.listCommands)
		add(Route("POST "+base+"/commands"), ap, s.createCommand)
		add(Route("PUT "+base+"/commands"), ap, s.overwriteCommands)
		add(Route("GET "+base+"/commands/{command_id}"), ap, s.getCommand)
		add(Route("DELETE "+base+"/commands/{command_id}"), ap, s.deleteCommand)
	}
	it := routeOpts{noAuth: true, exemptGlobal: true, major: "interaction_id"}
	add(RouteInteractionResp, it, s.interactionCallback)
	wh := routeOpts{noAuth: true, exemptGlobal: true, major: "token"}
	add("POST /webhooks/{application_id}/{token}", wh, s.webhookFollowup)
	add("GET /webhooks/{application_id}/{token}/messages/{message_id}", wh, s.webhookGetMessage)
	add("PATCH /webhooks/{application_id}/{token}/messages/{message_id}", wh, s.webhookEditMessage)
	add("DELETE /webhooks/{application_id}/{token}/messages/{message_id}", wh, s.webhookDeleteMessage)
}

// GET /gateway and GET /gateway/bot (§4 B). The URL is bare, with no path,
// so that discordgo and discord.js request the same "/?v=…".
func (s *Server) getGateway(*apiRequest) (int, any, error) {
	return http.StatusOK, map[string]string{"url": s.GatewayURL()}, nil
}

func (s *Server) getGatewayBot(*apiRequest) (int, any, error) {
	type limit struct {
		Total          int `json:"total"`
		Remaining      int `json:"remaining"`
		ResetAfter     int `json:"reset_after"`
		MaxConcurrency int `json:"max_concurrency"`
	}
	return http.StatusOK, struct {
		URL    string `json:"url"`
		Shards int    `json:"shards"`
		Limit  limit  `json:"session_start_limit"`
	}{s.GatewayURL(), max(s.cfg.shards, 1), limit{1000, 999, 14400000, max(s.cfg.maxConcurrency, 1)}}, nil
}

func (s *Server) getMe(q *apiRequest) (int, any, error) {
	return http.StatusOK, s.wireSelfUserLocked(q.user), nil
}

func (s *Server) getUser(q *apiRequest) (int, any, error) {
	id := UserID(q.PathValue("user_id"))
	if s.users[id] == nil {
		return 0, nil, &apiError{404, codeUnknownUser, "Unknown User"}
	}
	return http.StatusOK, s.wireUserLocked(id), nil
}

func (s *Server) getApplication(q *apiRequest) (int, any, error) {
	bot := s.wireUserLocked(s.bot)
	return http.StatusOK, struct {
		ID          UserID   `json:"id"`
		Name        string   `json:"name"`
		Icon        *string  `json:"icon"`
		Description string   `json:"description"`
		BotPublic   bool     `json:"bot_public"`
		Bot         wireUser `json:"bot"`
		Flags       int      `json:"flags"`
	}{s.bot, bot.Username, nil, "", true, bot, 0}, nil
}

// guildFor resolves the guild_id path value for a caller that must be a
// member.
func (s *Server) guildFor(q *apiRequest) (*guild, error) {
	g := s.guilds[GuildID(q.PathValue("guild_id"))]
	if g == nil {
		return nil, &apiError{404, codeUnknownGuild, "Unknown Guild"}
	}
	if q.user != "" && g.members[q.user] == nil {
		return nil, errMissingAccess
	}
	return g, nil
}

// channelFor resolves the channel_id path value for a member caller.
func (s *Server) channelFor(q *apiRequest) (*channel, error) {
	c := s.channels[ChannelID(q.PathValue("channel_id"))]
	if c == nil {
		return nil, errUnknownChannel
	}
	if q.user != "" && !s.isMemberLocked(c.guild, q.user) {
		return nil, errMissingAccess
	}
	return c, nil
}

func (s *Server) getGuild(q *apiRequest) (int, any, error) {
	g, err := s.guildFor(q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.wireGuildLocked(g), nil
}

func (s *Server) getGuildChannels(q *apiRequest) (int, any, error) {
	g, err := s.guildFor(q)
	if err != nil {
		return 0, nil, err
	}
	out := []wireChannel{}
	for _, id := range g.channels {
		if c := s.channels[id]; !c.typ.isThread() {
			out = append(out, s.wireChannelLocked(c))
		}
	}
	return http.StatusOK, out, nil
}

func (s *Server) getGuildRoles(q *apiRequest) (int, any, error) {
	g, err := s.guildFor(q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.wireRolesLocked(g), nil
}

func (s *Server) getActiveThreads(q *apiRequest) (int, any, error) {
	g, err := s.guildFor(q)
	if err != nil {
		return 0, nil, err
	}
	threads := []wireChannel{}
	for _, id := range g.channels {
		if c := s.channels[id]; c.typ.isThread() {
			threads = append(threads, s.wireChannelLocked(c))
		}
	}
	return http.StatusOK, struct {
		Threads []wireChannel     `json:"threads"`
		Members []json.RawMessage `json:"members"`
	}{threads, []json.RawMessage{}}, nil
}

func (s *Server) getMember(q *apiRequest) (int, any, error) {
	g, err := s.guildFor(q)
	if err != nil {
		return 0, nil, err
	}
	u := UserID(q.PathValue("user_id"))
	if g.members[u] == nil {
		return 0, nil, &apiError{404, codeUnknownMember, "Unknown Member"}
	}
	return http.StatusOK, s.wireMemberLocked(g, u, true), nil
}

// GET /guilds/{id}/members?limit=&after= lists members by user id.
func (s *Server) listMembers(q *apiRequest) (int, any, error) {
	g, err := s.guildFor(q)
	if err != nil {
		return 0, nil, err
	}
	limit, err := intParam(q, "limit", 1, 1, 1000)
	if err != nil {
		return 0, nil, err
	}
	after := q.URL.Query().Get("after")
	ids := slices.Clone(g.memberOrder)
	slices.SortFunc(ids, func(a, b UserID) int {
		switch {
		case snowflakeLess(string(a), string(b)):
			return -1
		case a == b:
			return 0
		}
		return 1
	})
	out := []wireMember{}
	for _, u := range ids {
		if after != "" && !snowflakeLess(after, string(u)) {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, s.wireMemberLocked(g, u, true))
	}
	return http.StatusOK, out, nil
}

func (s *Server) getChannel(q *apiRequest) (int, any, error) {
	c, err := s.channelFor(q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.wireChannelLocked(c), nil
}
