package openaisim

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The Gemini Live API (BidiGenerateContent) over WebSocket: a second face on the same
// scripting, latency, faults and records as the OpenAI endpoints.
//
//	wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=KEY
//
// The key comes as ?key= (js-genai) or the x-goog-api-key header (google.golang.org/genai,
// py-genai). Input audio is raw pcm16 at the rate its MIME type names (16 kHz natively); output
// audio is pcm16 24 kHz mono. https://ai.google.dev/api/live

// GeminiLivePath is the path of the Live endpoint on the Gemini Developer API (v1beta; the
// v1alpha path is served too).
const GeminiLivePath = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

// gmState is where a connection is in its setup.
type gmState int

const (
	gmAwaitingSetup gmState = iota
	gmSettingUp             // setup read, setupComplete not yet sent
	gmReady
)

// gmConn is one Live WebSocket connection. The read loop runs in the HTTP handler goroutine;
// the setup, each model turn and the connection's lifetime run in goroutines owned by the
// connection (wg), cancelled through ctx and waited for on exit.
type gmConn struct {
	s         *Server
	id        string
	requestID string
	conn      *websocket.Conn
	ctx       context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup
	goAway    chan time.Duration // GeminiGoAway: send goAway now with this time left

	writeMu       sync.Mutex // guards following
	sent          int        // server messages written
	dropAt        int        // drop the socket after this many messages (0: never)
	malformedNext bool       // corrupt the next message
	closed        bool

	mu           sync.Mutex // guards following
	state        gmState
	setup        *gmSetup
	model        string
	history      []string // the conversation: "user: …", "model: …", function lines
	aad          bool     // automatic activity detection (the server's VAD) on
	vadCfg       vadConfig
	vad          vadState
	inRate       int    // sample rate of the input audio
	inAct        bool   // a user activity is open (activityStart, or VAD heard speech)
	audio        []byte // the open activity's audio
	active       *gmTurn
	sess         *gmSession           // set by the setup
	compressions int                  // sliding-window compressions applied
	pending      map[string]bool      // tool call ids awaiting a toolResponse → blocking
	answered     []gmFunctionResponse // responses to blocking calls, until the last one
	toolRes      chan []gmFunctionResponse
}

// GeminiSession is the state of one live Gemini connection, for tests and the control API.
type GeminiSession struct {
	ID      string   `json:"id"`
	Model   string   `json:"model"`
	History []string `json:"history"`
	// Compressions counts the sliding-window compressions applied to History (the oldest turns
	// dropped).
	Compressions int `json:"compressions"`
}

func (s *Server) handleGeminiLive(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointGeminiLive)
	defer s.record(rec)
	key := r.URL.Query().Get("key")
	if key == "" {
		key = r.Header.Get("x-goog-api-key")
	}
	if key == "" || (s.geminiKey != "" && key != s.geminiKey) {
		rec.Status = http.StatusForbidden
		writeGoogleError(w, http.StatusForbidden, "PERMISSION_DENIED",
			"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		rec.Status = http.StatusBadRequest
		writeGoogleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "openaisim: the Live API expects a WebSocket upgrade")
		return
	}
	o := s.resolve(&matchInput{endpoint: EndpointGeminiLive})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		rec.Status = http.StatusBadRequest
		return
	}
	rec.Status = http.StatusSwitchingProtocols
	c := &gmConn{s: s, id: s.newID("gconn"), requestID: rec.RequestID, conn: conn,
		goAway: make(chan time.Duration, 1), dropAt: o.fault.DropAfterEvents, malformedNext: o.fault.MalformedJSON}
	c.ctx, c.stop = context.WithCancel(s.ctx)
	conn.SetReadLimit(16 << 20)
	if !s.adopt(func() { s.gmConns[c] = struct{}{} }) {
		c.stop()
		_ = conn.Close()
		return
	}
	s.record(rec)
	defer s.release(func() { c.stop(); c.wg.Wait(); _ = conn.Close() }, func() { delete(s.gmConns, c) })
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.lifetime()
	}()
	c.readLoop(&o)
}

// writeGoogleError answers an HTTP request with a Google API error body.
func writeGoogleError(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// readLoop reads client messages until the socket ends or the simulator closes it for a
// message the real API refuses.
func (c *gmConn) readLoop(handshake *outcome) {
	for {
		_, data, err := c.conn.ReadMessage() // JSON in text and binary frames alike
		if err != nil {
			return
		}
		kind, msg, cerr := decodeGeminiClientMessage(data)
		c.s.recordGemini(RealtimeEvent{Session: c.id, Type: messageType(kind, msg), Raw: append(json.RawMessage(nil), data...), At: c.s.now()})
		if cerr == nil {
			cerr = c.handle(kind, msg, handshake)
		}
		if cerr != nil {
			c.closeWith(cerr.Code, cerr.Reason)
			return
		}
	}
}

// messageType names a client message for the record: its kind, and for realtime input what it
// carried ("realtimeInput.audio", "realtimeInput.activityStart", …).
func messageType(kind string, m *gmClientMessage) string {
	if m == nil || m.RealtimeInput == nil {
		return kind
	}
	ri := m.RealtimeInput
	switch {
	case ri.ActivityStart != nil:
		return "realtimeInput.activityStart"
	case ri.ActivityEnd != nil:
		return "realtimeInput.activityEnd"
	case ri.Audio != nil || len(ri.MediaChunks) > 0:
		return "realtimeInput.audio"
	case ri.AudioStreamEnd:
		return "realtimeInput.audioStreamEnd"
	case ri.Text != "":
		return "realtimeInput.text"
	}
	return kind
}

// handle dispatches one decoded message by the connection's state.
func (c *gmConn) handle(kind string, m *gmClientMessage, handshake *outcome) *gmCloseError {
	c.mu.Lock()
	state, blocked := c.state, c.blockedLocked()
	c.mu.Unlock()
	switch {
	case state == gmAwaitingSetup && kind != "setup":
		return invalidArgument("Request contains an invalid argument: the first message must be setup, got %s.", kind)
	case state == gmSettingUp:
		return invalidArgument("Request contains an invalid argument: %s sent before setupComplete.", kind)
	case kind == "setup" && state == gmReady:
		return invalidArgument("Request contains an invalid argument: setup may only be sent once.")
	case kind == "setup":
		return c.onSetup(m.Setup, handshake)
	case blocked && kind != "toolResponse":
		return &gmCloseError{Code: 1008, Reason: "The operation was aborted: a tool call is pending; send its toolResponse first."}
	case kind == "clientContent":
		return c.onClientContent(m.ClientContent)
	case kind == "realtimeInput":
		return c.onRealtimeInput(m.RealtimeInput)
	default:
		return c.onToolResponse(m.ToolResponse)
	}
}

// blockedLocked reports whether a blocking tool call awaits its response.
func (c *gmConn) blockedLocked() bool {
	for _, blocking := range c.pending {
		if blocking {
			return true
		}
	}
	return false
}

// durationJSON is a google.protobuf.Duration in JSON: seconds with an "s" ("1.5s").
func durationJSON(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// send writes one server message as JSON, in a binary frame unless the server was built
// WithGeminiTextFrames. It applies the drop and malformed faults. Safe for concurrent use.
func (c *gmConn) send(m *gmServerMessage) {
	b, err := json.Marshal(m)
	if err != nil {
		b = []byte(`{}`)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed {
		return
	}
	if c.malformedNext && m.ServerContent != nil && m.ServerContent.ModelTurn != nil {
		c.malformedNext = false
		b = b[:len(b)/2]
	}
	typ := websocket.BinaryMessage
	if c.s.gmTextFrames {
		typ = websocket.TextMessage
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := c.conn.WriteMessage(typ, b); err != nil {
		c.closed = true
		return
	}
	c.sent++
	if c.dropAt > 0 && c.sent >= c.dropAt {
		c.closed = true
		_ = c.conn.UnderlyingConn().Close() // abrupt: no close frame
	}
}

// closeWith sends a close frame with code and reason and ends the connection.
func (c *gmConn) closeWith(code int, reason string) {
	if len(reason) > 123 { // a close frame's reason is at most 123 bytes
		reason = reason[:123]
	}
	c.writeMu.Lock()
	if !c.closed {
		c.closed = true
		msg := websocket.FormatCloseMessage(code, reason)
		_ = c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
	}
	c.writeMu.Unlock()
	c.stop()
	_ = c.conn.UnderlyingConn().Close()
}

// abort closes the socket abruptly; the read loop then ends the connection.
func (c *gmConn) abort() {
	c.stop()
	_ = c.conn.UnderlyingConn().Close()
}

// GeminiGoAway sends goAway with timeLeft to every live Gemini connection that has finished its
// setup, and closes each when timeLeft has passed, as the real server does at its connection
// limit. It returns how many connections were told.
func (s *Server) GeminiGoAway(timeLeft time.Duration) int {
	n := 0
	for _, c := range s.geminiConns() {
		c.mu.Lock()
		ready := c.state == gmReady
		c.mu.Unlock()
		if !ready {
			continue
		}
		select {
		case c.goAway <- timeLeft:
			n++
		default: // already going away
		}
	}
	return n
}

// GeminiSessions returns the live Gemini connections: id, model, conversation so far.
func (s *Server) GeminiSessions() []GeminiSession {
	var out []GeminiSession
	for _, c := range s.geminiConns() {
		c.mu.Lock()
		out = append(out, GeminiSession{ID: c.id, Model: c.model, History: append([]string(nil), c.history...), Compressions: c.compressions})
		c.mu.Unlock()
	}
	return out
}

// GeminiMessages returns every client message received on a Gemini Live socket, in order:
// Session is the connection id, Type the message's kind ("setup", "realtimeInput.audio", …).
func (s *Server) GeminiMessages() []RealtimeEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RealtimeEvent(nil), s.gmEvents...)
}

func (s *Server) geminiConns() []*gmConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*gmConn, 0, len(s.gmConns))
	for c := range s.gmConns {
		out = append(out, c)
	}
	return out
}

func (s *Server) recordGemini(e RealtimeEvent) {
	s.mu.Lock()
	s.gmEvents = append(s.gmEvents, e)
	s.mu.Unlock()
}
