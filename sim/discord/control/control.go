// Package control is the control API of the Discord simulator: HTTP/JSON on
// loopback for driving a running simulator from outside its process (curl,
// a script, a web playground). It is what `banter sim discord` and `banter
// sandbox` serve next to the simulated Discord; docs/simulator.md documents
// every route with curl examples.
//
// Each route maps onto the simulator's Go scripting API: post (with
// attachments), edit, delete and react to messages as any member, create
// members and channels, remove members and add them back, set nicknames,
// create, edit, delete, give and take roles (the bot's managed role too),
// set channel permission overwrites, start and end a guild outage, type,
// run slash commands and read the bot's answers, set per-command overrides,
// join or leave voice as a member and play a WAV into it, move anyone (the
// bot too) between voice channels, read what the bot sent,
// inject gateway, REST, latency and voice faults, and read the recorded
// requests.
package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/world"
)

// maxBody bounds a JSON request (attachments ride in it, base64); WAV
// uploads get maxWAV.
const (
	maxBody = 16 << 20
	maxWAV  = 64 << 20
)

// Controller serves the control API for one simulator and one guild.
type Controller struct {
	sim   *discordsim.Server
	guild discordsim.GuildID

	mu    sync.Mutex // guards following
	names map[string]discordsim.UserID
	voice map[discordsim.UserID]*voicesim.Member
}

// New builds a Controller for guild g of sim. Members created through the
// API join g; Name registers members created elsewhere.
func New(sim *discordsim.Server, g discordsim.GuildID) *Controller {
	c := &Controller{sim: sim, guild: g, names: map[string]discordsim.UserID{},
		voice: map[discordsim.UserID]*voicesim.Member{}}
	c.names["bot"] = sim.BotID()
	return c
}

// Name registers a member's name so that requests can say "as": NAME.
func (c *Controller) Name(name string, id discordsim.UserID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names[name] = id
}

// Close takes every member the API put in voice out again.
func (c *Controller) Close() {
	c.mu.Lock()
	members := c.voice
	c.voice = map[discordsim.UserID]*voicesim.Member{}
	c.mu.Unlock()
	for _, m := range members {
		m.Leave()
	}
}

// Handler returns the API's routes, rooted at /.
func (c *Controller) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /state", c.state)
	mux.HandleFunc("GET /members", c.listMembers)
	mux.HandleFunc("POST /members", c.createMember)
	mux.HandleFunc("GET /channels", c.listChannels)
	mux.HandleFunc("POST /channels", c.createChannel)
	mux.HandleFunc("GET /messages", c.listMessages)
	mux.HandleFunc("POST /messages", c.postMessage)
	mux.HandleFunc("PATCH /messages/{id}", c.editMessage)
	mux.HandleFunc("DELETE /messages/{id}", c.deleteMessage)
	mux.HandleFunc("POST /messages/{id}/reactions", c.react)
	mux.HandleFunc("DELETE /messages/{id}/reactions", c.unreact)
	mux.HandleFunc("POST /voice/join", c.joinVoice)
	mux.HandleFunc("POST /voice/leave", c.leaveVoice)
	mux.HandleFunc("POST /voice/play", c.playVoice)
	mux.HandleFunc("GET /voice/stats", c.voiceStats)
	mux.HandleFunc("GET /voice/state", c.voiceState)
	mux.HandleFunc("POST /faults/gateway", c.gatewayFault)
	mux.HandleFunc("POST /faults/rest", c.restFault)
	mux.HandleFunc("GET /faults/latency", c.latency)
	mux.HandleFunc("POST /faults/latency", c.setLatency)
	mux.HandleFunc("POST /faults/voice", c.voiceFault)
	mux.HandleFunc("GET /requests", c.requests)
	c.liveRoutes(mux)   // events.go, stream.go
	c.guildRoutes(mux)  // guild.go
	c.actionRoutes(mux) // actions.go
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, fmt.Errorf("no control route %s %s (see docs/simulator.md)", r.Method, r.URL.Path))
	})
	return refuseOtherOrigins(mux)
}

// refuseOtherOrigins answers 403 to a browser request from a page of another
// origin. A page on any site can send a "simple" cross-origin POST (text/plain,
// no preflight) to a loopback port; without this, any website the user visits
// could post, delete or inject faults into a running simulator. Clients that
// are not browsers send no Origin and are welcome, as are pages served from the
// API's own origin (or proxied to it with the Origin removed, as the playground
// does).
func refuseOtherOrigins(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			fail(w, http.StatusForbidden, fmt.Errorf("requests from a page of another origin (%s) are refused", r.Header.Get("Origin")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// apiError is every error's body: {"error": "..."}.
type apiError struct {
	Error string `json:"error"`
}

func fail(w http.ResponseWriter, status int, err error) {
	reply(w, status, apiError{err.Error()})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body into v; unknown fields are refused so a typo
// does not pass silently.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("body: %w", err))
		return false
	}
	return true
}

// user resolves "as": a registered name or a user id.
func (c *Controller) user(as string) (discordsim.UserID, error) {
	if as == "" {
		return "", errors.New(`"as" is required (a member name or user id)`)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.names[as]; ok {
		return id, nil
	}
	for _, id := range c.names {
		if string(id) == as {
			return id, nil
		}
	}
	return "", fmt.Errorf("unknown member %q (create it with POST /members)", as)
}

// channel resolves a channel given by id or name.
func (c *Controller) channel(ch string) (discordsim.ChannelID, error) {
	if ch == "" {
		return "", errors.New(`"channel" is required (a channel name or id)`)
	}
	name := strings.TrimPrefix(ch, "#")
	for _, x := range c.sim.Channels(c.guild) {
		if string(x.ID) == ch || x.Name == name {
			return x.ID, nil
		}
	}
	return "", fmt.Errorf("unknown channel %q", ch)
}

type memberView struct {
	ID    discordsim.UserID `json:"id"`
	Name  string            `json:"name"`
	Token string            `json:"token"`
	// Bot is the user's bot flag (a bot user, such as a music bot: user.bot in what the
	// gateway and REST deliver).
	Bot bool `json:"bot"`
}

func (c *Controller) members() []memberView {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]memberView, 0, len(c.names))
	for name, id := range c.names {
		if name == "bot" {
			continue
		}
		out = append(out, c.memberView(name, id))
	}
	sortBy(out, func(m memberView) string { return string(m.ID) })
	return out
}

func (c *Controller) listMembers(w http.ResponseWriter, _ *http.Request) {
	reply(w, http.StatusOK, c.members())
}

func (c *Controller) createMember(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
		Bot  bool   `json:"bot"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Name == "" || in.Name == "bot" {
		fail(w, http.StatusBadRequest, errors.New(`"name" is required and may not be "bot"`))
		return
	}
	c.mu.Lock()
	_, taken := c.names[in.Name]
	c.mu.Unlock()
	if taken {
		fail(w, http.StatusConflict, fmt.Errorf("member %q exists", in.Name))
		return
	}
	create := c.sim.CreateUser
	if in.Bot {
		create = c.sim.CreateBotUser
	}
	id := create(in.Name)
	if err := c.sim.AddMember(c.guild, id); err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	c.Name(in.Name, id)
	reply(w, http.StatusCreated, c.memberView(in.Name, id))
}

// memberView is the view of the member called name.
func (c *Controller) memberView(name string, id discordsim.UserID) memberView {
	bot := false
	c.sim.Read(func(v *world.View) {
		if u, ok := v.User(id); ok {
			bot = u.Bot
		}
	})
	return memberView{ID: id, Name: name, Token: c.sim.UserToken(id), Bot: bot}
}

type channelView struct {
	ID   discordsim.ChannelID `json:"id"`
	Name string               `json:"name"`
	Type string               `json:"type"`
}

func (c *Controller) channels() []channelView {
	var out []channelView
	for _, ch := range c.sim.Channels(c.guild) {
		typ := "text"
		switch ch.Type {
		case discordsim.ChannelVoice:
			typ = "voice"
		case discordsim.ChannelPublicThread, discordsim.ChannelPrivateThread:
			typ = "thread"
		}
		out = append(out, channelView{ID: ch.ID, Name: ch.Name, Type: typ})
	}
	return out
}

func (c *Controller) listChannels(w http.ResponseWriter, _ *http.Request) {
	reply(w, http.StatusOK, c.channels())
}

func (c *Controller) createChannel(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Name == "" {
		fail(w, http.StatusBadRequest, errors.New(`"name" is required`))
		return
	}
	var id discordsim.ChannelID
	switch in.Type {
	case "", "text":
		in.Type, id = "text", c.sim.CreateTextChannel(c.guild, in.Name)
	case "voice":
		id = c.sim.CreateVoiceChannel(c.guild, in.Name)
	default:
		fail(w, http.StatusBadRequest, fmt.Errorf(`"type" %q: allowed values are text, voice`, in.Type))
		return
	}
	reply(w, http.StatusCreated, channelView{ID: id, Name: in.Name, Type: in.Type})
}

func (c *Controller) state(w http.ResponseWriter, _ *http.Request) {
	reply(w, http.StatusOK, struct {
		Bot        discordsim.UserID  `json:"bot_id"`
		BotToken   string             `json:"bot_token"`
		Guild      discordsim.GuildID `json:"guild_id"`
		APIBaseURL string             `json:"api_base_url"`
		GatewayURL string             `json:"gateway_url"`
		Channels   []channelView      `json:"channels"`
		Members    []memberView       `json:"members"`
	}{c.sim.BotID(), c.sim.Token(), c.guild, c.sim.APIBaseURL(), c.sim.GatewayURL(), c.channels(), c.members()})
}
