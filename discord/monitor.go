package discord

import (
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
)

// GatewayMonitor logs and counts what happens to the main gateway connection: disconnects
// (with the server's close code when it sent one), reconnects, resumes and new sessions
// (discordgo's re-identify after op 9 Invalid Session, or after a resume was refused).
// discordgo itself only reconnects, silently.
//
// Log events: gateway_disconnected (close_code, 0 when the socket broke without a Close frame),
// gateway_connected (reconnect=true after the first), gateway_resumed, gateway_ready
// (reidentify=true with the new session id after the first). Metric:
// banter_gateway_events_total{event,close_code}.
type GatewayMonitor struct {
	logger *slog.Logger
	events *prometheus.CounterVec
}

// sessionWatch is what the monitor knows of one session (one shard).
type sessionWatch struct {
	m         *GatewayMonitor
	log       *slog.Logger
	lastClose atomic.Int64 // the last Close code the server sent, 0 after it was reported

	mu       sync.Mutex // guards following
	connects int
	readies  int
}

// NewGatewayMonitor returns a monitor that logs to logger and registers its metric with reg
// (nil: not registered). Attach it to every session (shard) before opening them.
func NewGatewayMonitor(logger *slog.Logger, reg prometheus.Registerer) *GatewayMonitor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &GatewayMonitor{logger: logger, events: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_gateway_events_total", Help: "Main gateway connection events (disconnected, connected, reconnected, resumed, ready, reidentified)."},
		[]string{"event", "close_code"})}
	if reg != nil {
		reg.MustRegister(m.events)
	}
	return m
}

// Attach installs the monitor on a session that is not open yet: its handlers, and a gateway
// dialer that sees the server's Close frames. Behind an HTTPS proxy (HTTPS_PROXY) the dialer is
// left as it is and close codes are reported as 0. Log lines carry the session's shard.
func (m *GatewayMonitor) Attach(s *discordgo.Session) (detach func()) {
	w := &sessionWatch{m: m, log: m.logger.With("shard", s.ShardID)}
	if !gatewayProxied() {
		s.Dialer = w.dialer(s.Dialer)
	}
	removers := []func(){
		s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Connect) { w.connected() }),
		s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) { w.disconnected() }),
		s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) { w.ready(r.SessionID) }),
		s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { w.count("resumed", 0); w.log.Info("gateway_resumed") }),
	}
	return func() {
		for _, r := range removers {
			r()
		}
	}
}

func (w *sessionWatch) count(event string, code int) {
	w.m.events.WithLabelValues(event, strconv.Itoa(code)).Inc()
}

func (w *sessionWatch) connected() {
	w.mu.Lock()
	w.connects++
	again := w.connects > 1
	w.mu.Unlock()
	if again {
		w.count("reconnected", 0)
		w.log.Info("gateway_connected", "reconnect", true)
		return
	}
	w.count("connected", 0)
	w.log.Info("gateway_connected", "reconnect", false)
}

func (w *sessionWatch) disconnected() {
	code := int(w.lastClose.Swap(0))
	w.count("disconnected", code)
	w.log.Warn("gateway_disconnected", "close_code", code, "close_reason", closeReason(code))
}

func (w *sessionWatch) ready(sessionID string) {
	w.mu.Lock()
	w.readies++
	again := w.readies > 1
	w.mu.Unlock()
	if again {
		// A new session where a resume was expected: events in between were not delivered.
		w.count("reidentified", int(w.lastClose.Load()))
		w.log.Warn("gateway_ready", "reidentify", true, "session_id", sessionID)
		return
	}
	w.count("ready", 0)
	w.log.Info("gateway_ready", "reidentify", false, "session_id", sessionID)
}

// closeReason names Discord's gateway close codes.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway-gateway-close-event-codes
func closeReason(code int) string {
	switch code {
	case 0:
		return "no close frame"
	case 1000, 1001:
		return "normal"
	case 1012:
		return "service restart"
	case 4000:
		return "unknown error"
	case 4001:
		return "unknown opcode"
	case 4002:
		return "decode error"
	case 4003:
		return "not authenticated"
	case 4004:
		return "authentication failed"
	case 4005:
		return "already authenticated"
	case 4007:
		return "invalid seq"
	case 4008:
		return "rate limited"
	case 4009:
		return "session timed out"
	case 4010:
		return "invalid shard"
	case 4011:
		return "sharding required"
	case 4012:
		return "invalid API version"
	case 4013:
		return "invalid intents"
	case 4014:
		return "disallowed intents"
	}
	return "other"
}

// dialer is the session's gateway dialer (discordgo's default when base is nil) with every
// connection's reads passed through a closeSniffer. It dials through base's dial functions
// when base has them (the shards' open guard and identify permits).
func (w *sessionWatch) dialer(base *websocket.Dialer) *websocket.Dialer {
	d := wrapDialer(base, func(c net.Conn) (net.Conn, error) {
		return &sniffConn{Conn: c, s: closeSniffer{onClose: func(code int) { w.lastClose.Store(int64(code)) }}}, nil
	})
	d.Proxy = nil
	return d
}

// sniffConn passes what it reads to a closeSniffer. Reads come from one goroutine at a time
// (the websocket reader's), as net.Conn allows.
type sniffConn struct {
	net.Conn
	s closeSniffer
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.s.feed(p[:n])
	}
	return n, err
}
