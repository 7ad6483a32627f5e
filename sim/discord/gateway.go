package discordsim

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/sim/discord/world"
	"github.com/gorilla/websocket"
)

// gateway is the gateway transport: WebSocket connections, sessions that
// outlive them (Resume), and the dispatches the world's changes become.
// https://discord.com/developers/docs/events/gateway
//
// Lock order: the world's lock, then g.mu, never the other way round. The
// world calls observe with its lock held; Identify, Resume and Request
// Guild Members run inside world.Read; g.mu is never held while calling a
// World method.
type gateway struct {
	world  *world.World
	cfg    *config
	log    *slog.Logger
	url    func() string // resume_gateway_url
	notify func()
	wg     *sync.WaitGroup
	cdn    *cdn
	// onVoiceState handles op 4 (voice signalling, voice.go); it is called
	// on the connection's goroutine with no lock held.
	onVoiceState func(s sessionRef, cmd *voiceStateCommand)
	upgrader     websocket.Upgrader

	mu       sync.Mutex // guards following
	closed   bool
	sessions map[string]*session
	conns    map[*gwConn]struct{}
	events   []GatewayEvent
	connSeq  int
	// lastIdentify is when each rate-limit key of the bot last identified (WithIdentifySpacing).
	lastIdentify map[int]time.Time
	latency      time.Duration // injected before each frame is written (SetGatewayLatency)
	delayed      int           // frames sent with injected latency
}

func newGateway(w *world.World, cfg *config, url func() string, notify func(), wg *sync.WaitGroup, c *cdn) *gateway {
	return &gateway{
		world: w, cfg: cfg, log: cfg.log, url: url, notify: notify, wg: wg, cdn: c,
		upgrader: websocket.Upgrader{
			ReadBufferSize: 4096, WriteBufferSize: 4096,
			CheckOrigin: func(*http.Request) bool { return true },
		},
		sessions: map[string]*session{}, conns: map[*gwConn]struct{}{}, lastIdentify: map[int]time.Time{},
	}
}

// accepts reports whether r is a gateway connection: the gateway answers on
// any path but /api/ (§4 C): clients append "?v=…&encoding=json" to
// whatever URL they were given.
func (g *gateway) accepts(r *http.Request) bool {
	return r.Method == http.MethodGet && websocket.IsWebSocketUpgrade(r) && !strings.HasPrefix(r.URL.Path, "/api/")
}

// shutdown marks the gateway closed and cuts every connection; it reports
// false when it was closed already.
func (g *gateway) shutdown() bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.closed = true
	conns := make([]*gwConn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		c.kill()
	}
	return true
}

// session is a gateway session: it outlives connections so that Resume
// can replay what a client missed. Guarded by gateway.mu.
type session struct {
	id      string
	user    world.UserID
	intents Intents
	// shard and shardCount are the Identify's shard field: the session receives the events of
	// the guilds with (guild_id >> 22) % shardCount == shard, and DMs only on shard 0.
	shard, shardCount int
	conn              *gwConn // nil while no connection is attached
	seq               int64
	replay            []sentEvent // the last replayLimit dispatches, in order
	invalid           bool
}

// sessionRef names a session to code outside the gateway's lock.
type sessionRef struct {
	id   string
	user world.UserID
}

type sentEvent struct {
	seq     int64
	payload []byte
}

// ownsGuild reports whether a guild (or, for "", the DMs) is on the session's shard.
// https://discord.com/developers/docs/events/gateway#sharding
func (ss *session) ownsGuild(g world.GuildID) bool {
	if ss.shardCount <= 1 {
		return true
	}
	if g == "" {
		return ss.shard == 0
	}
	id, err := strconv.ParseUint(string(g), 10, 64)
	return err == nil && int((id>>22)%uint64(ss.shardCount)) == ss.shard
}

// sees reports whether a session receives a guild's events: its user is a
// member, the guild is on its shard and not in an outage. During an outage
// Discord sends nothing for the guild; the GUILD_CREATE that ends it carries
// the state as it is then (roles, members, channels, voice states).
func (ss *session) sees(v *world.View, g world.GuildID) bool {
	return ss.inGuild(v, g) && v.GuildAvailable(g)
}

// inGuild reports whether a session's user is a member of a guild on its shard, available or
// not: READY lists it, its outages begin and end for the session.
func (ss *session) inGuild(v *world.View, g world.GuildID) bool {
	return v.IsMember(g, ss.user) && ss.ownsGuild(g)
}

// dispatchToLocked sends one dispatch to a session if it has the intent
// (0 means always). The event is numbered and kept for replay even when no
// connection is attached. g.mu must be held.
func (g *gateway) dispatchToLocked(ss *session, t string, d any, intent Intents) {
	if ss.invalid || (intent != 0 && ss.intents&intent == 0) {
		return
	}
	ss.seq++
	b, err := encodeDispatch(ss.seq, t, d)
	if err != nil {
		g.log.Error("discordsim: dispatch", "event", t, "err", err)
		return
	}
	ss.replay = append(ss.replay, sentEvent{ss.seq, b})
	if n := len(ss.replay) - g.cfg.replayLimit; n > 0 {
		ss.replay = slices.Delete(ss.replay, 0, n)
	}
	if ss.conn != nil {
		ss.conn.sendLocked(b)
	}
}

// sendGuildEventTo dispatches an event of guild gid to one session by id
// (VOICE_SERVER_UPDATE), whatever its intents, if the session sees the guild:
// never during an outage of it. It must be called with no lock held.
func (g *gateway) sendGuildEventTo(sessionID string, gid world.GuildID, t string, d any) {
	g.world.Read(func(v *world.View) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if ss := g.sessions[sessionID]; ss != nil && ss.sees(v, gid) {
			g.dispatchToLocked(ss, t, d, 0)
		}
	})
}

// sessionOf returns the session with that id if it belongs to u.
func (g *gateway) sessionOf(id string, u world.UserID) (sessionRef, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ss := g.sessions[id]
	if ss == nil || ss.user != u {
		return sessionRef{}, false
	}
	return sessionRef{id: ss.id, user: ss.user}, true
}

// connected reports whether u has a live session with a connection.
func (g *gateway) connected(u world.UserID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ss := range g.sessions {
		if ss.user == u && ss.conn != nil && !ss.invalid {
			return true
		}
	}
	return false
}

// GatewayEventKind classifies what happened on the gateway.
type GatewayEventKind int

// Gateway event kinds, recorded in order for tests.
const (
	GatewayUnknown             GatewayEventKind = iota
	GatewayConnected                            // a socket was opened and got Hello
	GatewayIdentified                           // Identify accepted, READY sent
	GatewayResumed                              // Resume accepted, replay and RESUMED sent
	GatewayResumeRefused                        // Resume refused with Invalid Session
	GatewayHeartbeat                            // a heartbeat arrived (ACK sent or withheld)
	GatewayTimedOut                             // no heartbeat in time; the server closed
	GatewayVoiceState                           // op 4 arrived
	GatewayDisconnected                         // the socket closed, for any reason
	GatewayIdentifyRateLimited                  // an Identify came too soon for its rate-limit key: Invalid Session
)

// String names the kind.
func (k GatewayEventKind) String() string {
	switch k {
	case GatewayConnected:
		return "connected"
	case GatewayIdentified:
		return "identified"
	case GatewayResumed:
		return "resumed"
	case GatewayResumeRefused:
		return "resume-refused"
	case GatewayHeartbeat:
		return "heartbeat"
	case GatewayTimedOut:
		return "timed-out"
	case GatewayVoiceState:
		return "voice-state"
	case GatewayDisconnected:
		return "disconnected"
	case GatewayIdentifyRateLimited:
		return "identify-rate-limited"
	}
	return fmt.Sprintf("GatewayEventKind(%d)", int(k))
}

// GatewayEvent is one recorded gateway happening.
type GatewayEvent struct {
	Kind        GatewayEventKind
	Conn        int    // connection number, from 1
	User        UserID // "" before Identify/Resume
	Session     string
	Intents     Intents
	Compression string    // "", "payload" (compress:true) or "zlib-stream"
	Seq         int64     // Resume: the client's seq; Heartbeat: d
	Replayed    int       // Resume: dispatches replayed
	ACKed       bool      // Heartbeat: whether op 11 was sent
	CloseCode   CloseCode // Disconnected/TimedOut: the close code, if known
	// Shard and ShardCount are the Identify's shard (Identified, IdentifyRateLimited).
	Shard, ShardCount int
	// WrongShard: a voice state update sent on a shard that does not own its guild (ignored).
	WrongShard bool
	// At is when it happened, on the server's clock (WithClock).
	At time.Time
}

func (g *gateway) recordLocked(e GatewayEvent) {
	e.At = g.cfg.now()
	g.events = append(g.events, e)
	g.notify()
}

// GatewayEvents returns every recorded gateway event, in order.
func (s *Server) GatewayEvents() []GatewayEvent {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return slices.Clone(s.gw.events)
}

// CountGateway returns how many gateway events of kind were recorded.
func (s *Server) CountGateway(kind GatewayEventKind) int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	n := 0
	for _, e := range s.gw.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
