package openaisim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Realtime API over WebSocket, GA protocol (no OpenAI-Beta header).
// https://platform.openai.com/docs/api-reference/realtime-client-events
// https://platform.openai.com/docs/api-reference/realtime-server-events
//
// Audio is pcm16 (s16le) 24 kHz mono, base64 in JSON events.

// rtSession is one realtime WebSocket session. The read loop runs in the
// HTTP handler goroutine; each response runs in a goroutine owned by the
// session (wg), cancelled through its context and waited for on exit.
type rtSession struct {
	s     *Server
	id    string
	model string
	// requestID is the handshake's x-request-id.
	requestID string
	conn      *websocket.Conn
	ctx       context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup // response goroutines
	ignore    string         // record client events of this type and do nothing with them

	writeMu        sync.Mutex // guards following
	sent           int        // server events written
	dropAt         int        // drop the socket after this many events (0: never)
	dropOn         string     // drop the socket when the client sends an event of this type
	malformedNext  bool       // corrupt the next event
	malformedDelta bool       // corrupt the next delta event
	dead           bool

	mu      sync.Mutex // guards following
	session map[string]any
	items   []*rtItem
	buf     []byte // uncommitted input audio
	vad     vadState
	active  *rtResponse

	transcriptionOnly bool                 // ?intent=transcription: a transcription session
	committedMs       int                  // input audio committed so far
	tq                chan rtTranscription // transcription session: items to transcribe, in order
}

// rtItem is one conversation item.
type rtItem struct {
	id         string
	typ        string // message, function_call, function_call_output
	role       string
	text       string // user text, transcript, or assistant transcript
	audioMs    int    // audio length (input audio or assistant output)
	truncateMs int    // -1 unless truncated
	raw        map[string]any
}

// Truncation is one conversation.item.truncate a client sent (and the
// simulator accepted).
type Truncation struct {
	Session    string
	ItemID     string
	AudioEndMs int
	// AudioMs is the full audio length of the truncated item.
	AudioMs int
}

func (s *Server) handleRealtime(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointRealtime)
	defer s.record(rec)
	model := r.URL.Query().Get("model")
	intent := r.URL.Query().Get("intent")
	if model == "" && intent == "" {
		model = "gpt-realtime"
	}
	rec.Model = model
	if intent != "" && intent != intentTranscription {
		rec.Status = http.StatusBadRequest
		badRequest(w, "intent", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'transcription'.", intent))
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		badRequest(w, "", "openaisim: /v1/realtime expects a WebSocket upgrade")
		return
	}
	o := s.resolve(&matchInput{endpoint: EndpointRealtime, model: model})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	up := websocket.Upgrader{
		CheckOrigin:  func(*http.Request) bool { return true },
		Subprotocols: []string{"realtime"},
	}
	conn, err := up.Upgrade(w, r, http.Header{"X-Request-Id": {rec.RequestID}})
	if err != nil {
		rec.Status = http.StatusBadRequest
		return // Upgrade already answered
	}
	rec.Status = http.StatusSwitchingProtocols
	c := &rtSession{
		s: s, id: s.newID("sess"), model: model, conn: conn, requestID: rec.RequestID,
		dropAt: o.fault.DropAfterEvents, dropOn: o.fault.DropOnClientEvent, ignore: o.fault.IgnoreClientEvent, malformedNext: o.fault.MalformedJSON,
	}
	c.ctx, c.stop = context.WithCancel(s.ctx)
	if intent == intentTranscription {
		c.transcriptionOnly = true
		c.session = defaultTranscriptionSession(c.id, s.now())
	} else {
		c.session = defaultSession(c.id, model, s.now())
	}
	conn.SetReadLimit(16 << 20)

	if !s.adopt(func() { s.rtConns[c] = struct{}{} }) {
		c.stop()
		_ = conn.Close()
		return
	}
	s.record(rec)
	defer s.release(func() { c.stop(); c.wg.Wait(); _ = conn.Close() }, func() { delete(s.rtConns, c) })
	c.send(map[string]any{"type": "session.created", "session": c.sessionSnapshot()})
	if strings.Contains(r.Header.Get("OpenAI-Beta"), "realtime=v1") {
		c.sendError("", "invalid_request_error", "beta_protocol_not_simulated", "",
			"openaisim speaks only the GA realtime protocol; remove the 'OpenAI-Beta: realtime=v1' header.")
	}
	c.readLoop()
}

// adopt registers a socket (add runs under mu) unless the server is closed; the server's Close
// then waits for its release.
func (s *Server) adopt(add func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	add()
	s.connWG.Add(1)
	return true
}

// release ends an adopted socket: stop (its goroutines stopped and waited for), then remove
// (under mu).
func (s *Server) release(stop, remove func()) {
	stop()
	s.mu.Lock()
	remove()
	s.mu.Unlock()
	s.connWG.Done()
}

// abort closes the socket abruptly; the read loop then ends the session.
func (c *rtSession) abort() {
	c.stop()
	_ = c.conn.UnderlyingConn().Close()
}

func (c *rtSession) readLoop() {
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		c.handleEvent(data)
	}
}

// send writes one server event, adding event_id. It applies the drop fault
// and marks deltas malformed when asked. Safe for concurrent use.
func (c *rtSession) send(ev map[string]any) {
	c.sendEvent(ev, false)
}

func (c *rtSession) sendEvent(ev map[string]any, delta bool) {
	ev["event_id"] = c.s.newID("event")
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.dead {
		return
	}
	var b []byte
	if c.malformedNext || (delta && c.malformedDelta) {
		c.malformedNext, c.malformedDelta = false, false
		b = []byte(`{"type":"` + ev["type"].(string) + `","event_id":"malformed",`)
	} else {
		var err error
		if b, err = json.Marshal(ev); err != nil {
			b = []byte(`{"type":"error","error":{"type":"server_error","message":"openaisim: encode failed"}}`)
		}
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := c.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		c.dead = true
		return
	}
	c.sent++
	if c.dropAt > 0 && c.sent >= c.dropAt {
		c.dead = true
		_ = c.conn.UnderlyingConn().Close() // abrupt: no close frame
	}
}

// dropOnEvent drops the socket abruptly (no close frame) when the client event is of the type
// Fault.DropOnClientEvent names, and reports whether it did.
func (c *rtSession) dropOnEvent(typ string) bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.dropOn == "" || typ != c.dropOn || c.dead {
		return false
	}
	c.dead = true
	_ = c.conn.UnderlyingConn().Close()
	return true
}

// itemAdded announces a new conversation item: conversation.item.added (GA),
// preceded by the beta name conversation.item.created when the server was
// built WithItemCreatedEvents.
func (c *rtSession) itemAdded(prev any, item map[string]any) {
	if c.s.itemCreated {
		c.send(map[string]any{"type": "conversation.item.created", "previous_item_id": prev, "item": deepCopy(item)})
	}
	c.send(map[string]any{"type": "conversation.item.added", "previous_item_id": prev, "item": item})
}

// itemDone announces a finalized conversation item (conversation.item.done).
func (c *rtSession) itemDone(item map[string]any) {
	c.send(map[string]any{"type": "conversation.item.done", "item": item})
}

// sendError sends an `error` event.
func (c *rtSession) sendError(clientEventID, typ, code, param, msg string) {
	c.send(map[string]any{"type": "error", "error": APIError{
		Type: typ, Code: strp(code), Message: msg, Param: strp(param), EventID: clientEventID,
	}})
}

// Truncations returns every accepted conversation.item.truncate.
func (s *Server) Truncations() []Truncation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Truncation(nil), s.truncations...)
}
