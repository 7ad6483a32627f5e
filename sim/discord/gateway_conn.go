package discordsim

import (
	"bytes"
	"compress/zlib"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// frame is one item of a connection's send queue: a JSON payload, or a
// close frame with a code, after which the writer stops.
type frame struct {
	data      []byte
	closeCode CloseCode
	closeText string
	compress  bool      // payload compression (identify compress:true)
	due       time.Time // with injected latency: not written before
}

// sendQueue bounds what a connection may fall behind by; a client slower
// than this is disconnected (its session stays resumable), never waited for.
const sendQueue = 4096

// gwConn is one gateway WebSocket. The handler goroutine reads; a writer
// goroutine owns all writes and, with zlib-stream, the shared compressor.
type gwConn struct {
	g          *gateway
	ws         *websocket.Conn
	num        int
	out        chan frame
	done       chan struct{} // closed by kill
	writerDone chan struct{}
	killOnce   sync.Once
	zlibStream bool

	// Guarded by gateway.mu:
	sess        *session
	compress    bool // payload compression was requested at Identify
	withholdACK int  // heartbeats left to leave unacknowledged
}

// serve upgrades any path with ?v=9|10&encoding=json (§4 C).
// https://discord.com/developers/docs/events/gateway#connecting
func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ws, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	c := &gwConn{
		g: g, ws: ws, out: make(chan frame, sendQueue), done: make(chan struct{}),
		writerDone: make(chan struct{}), zlibStream: q.Get("compress") == "zlib-stream",
	}
	ws.SetReadLimit(1 << 20)
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		_ = ws.Close()
		return
	}
	g.wg.Add(2) // this handler goroutine (the reader) and the writer
	g.conns[c] = struct{}{}
	g.connSeq++
	c.num = g.connSeq
	comp := ""
	if c.zlibStream {
		comp = "zlib-stream"
	}
	g.recordLocked(GatewayEvent{Kind: GatewayConnected, Conn: c.num, Compression: comp})
	g.mu.Unlock()
	defer g.wg.Done()
	go c.writeLoop()

	v := q.Get("v")
	if enc := q.Get("encoding"); enc != "" && enc != "json" {
		c.closeWith(CloseDecodeError, "only encoding=json is simulated")
	} else if v != "9" && v != "10" {
		c.closeWith(CloseInvalidAPIVersion, "Invalid API version")
	} else {
		c.send(frame{data: encodeOp(OpHello, map[string]int64{"heartbeat_interval": g.cfg.heartbeat.Milliseconds()})})
		c.readLoop()
	}
	<-c.writerDone
	g.mu.Lock()
	delete(g.conns, c)
	g.mu.Unlock()
}

// readLoop handles client frames until the socket fails or closes. Missing
// heartbeats (none for 1.5 intervals plus a second) time the socket out.
func (c *gwConn) readLoop() {
	g := c.g
	deadline := func() time.Time { return time.Now().Add(g.cfg.heartbeat*3/2 + time.Second) }
	_ = c.ws.SetReadDeadline(deadline())
	for {
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			var code CloseCode
			var ce *websocket.CloseError
			var ne net.Error
			switch {
			case errors.As(err, &ce):
				code = CloseCode(ce.Code)
			case errors.As(err, &ne) && ne.Timeout():
				g.mu.Lock()
				g.recordLocked(c.eventLocked(GatewayTimedOut, CloseSessionTimedOut))
				g.mu.Unlock()
				c.closeWith(CloseSessionTimedOut, "Session timed out")
				c.detach(CloseSessionTimedOut)
				return // the writer closes the socket after the close frame
			}
			c.detach(code)
			c.kill()
			return
		}
		if mt != websocket.TextMessage {
			c.closeWith(CloseDecodeError, "binary frames from clients are not supported")
			c.detach(CloseDecodeError)
			return
		}
		p, err := decodeClientPayload(data)
		if err != nil {
			var ce *codecError
			code := CloseDecodeError
			if errors.As(err, &ce) {
				code = CloseCode(ce.Code)
			}
			g.log.Debug("discordsim: bad gateway payload", "err", err)
			c.closeWith(code, err.Error())
			c.detach(code)
			return
		}
		if p.Op == OpHeartbeat {
			_ = c.ws.SetReadDeadline(deadline())
		}
		if code := c.handle(p); code != 0 {
			c.detach(code)
			return
		}
	}
}

func (c *gwConn) eventLocked(k GatewayEventKind, code CloseCode) GatewayEvent {
	e := GatewayEvent{Kind: k, Conn: c.num, CloseCode: code}
	if c.sess != nil {
		e.User, e.Session, e.Intents = c.sess.user, c.sess.id, c.sess.intents
	}
	return e
}

// detach unbinds the connection from its session; the session stays for
// Resume.
func (c *gwConn) detach(code CloseCode) {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.recordLocked(c.eventLocked(GatewayDisconnected, code))
	if c.sess != nil && c.sess.conn == c {
		c.sess.conn = nil
	}
}

// send queues a frame without blocking; a full queue kills the connection.
func (c *gwConn) send(f frame) {
	select {
	case <-c.done:
		return
	default:
	}
	select {
	case c.out <- f:
	default:
		c.g.log.Warn("discordsim: gateway client too slow, disconnecting", "conn", c.num)
		c.kill()
	}
}

// sendLocked queues a payload, compressed per the session's Identify and
// delayed by the injected gateway latency. gateway.mu must be held.
func (c *gwConn) sendLocked(data []byte) {
	f := frame{data: data, compress: c.compress}
	if d := c.g.latency; d > 0 {
		f.due = time.Now().Add(d)
		c.g.delayed++
	}
	c.send(f)
}

// closeWith queues a close frame; the writer sends it and shuts the socket.
func (c *gwConn) closeWith(code CloseCode, text string) {
	c.send(frame{closeCode: code, closeText: text})
}

// kill drops the TCP connection at once, with no close frame.
func (c *gwConn) kill() {
	c.killOnce.Do(func() {
		close(c.done)
		_ = c.ws.NetConn().Close()
	})
}

func (c *gwConn) writeLoop() {
	defer c.g.wg.Done()
	defer close(c.writerDone)
	defer c.kill()
	var (
		streamBuf bytes.Buffer
		streamZ   *zlib.Writer
	)
	if c.zlibStream {
		streamZ = zlib.NewWriter(&streamBuf)
	}
	for {
		var f frame
		select {
		case f = <-c.out:
		case <-c.done:
			return
		}
		if !c.wait(f.due) {
			return
		}
		_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if f.closeCode != 0 {
			text := f.closeText
			if len(text) > 120 { // control frames carry at most 125 bytes
				text = text[:120]
			}
			msg := websocket.FormatCloseMessage(int(f.closeCode), text)
			_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
			return
		}
		var err error
		switch {
		case c.zlibStream:
			// One zlib context for the connection; each message ends with a
			// sync flush (00 00 ff ff).
			// https://discord.com/developers/docs/events/gateway#zlibstream
			streamBuf.Reset()
			_, _ = streamZ.Write(f.data)
			_ = streamZ.Flush()
			err = c.ws.WriteMessage(websocket.BinaryMessage, streamBuf.Bytes())
		case f.compress:
			// Payload compression: each binary frame is a whole zlib stream.
			var b bytes.Buffer
			z := zlib.NewWriter(&b)
			_, _ = z.Write(f.data)
			_ = z.Close()
			err = c.ws.WriteMessage(websocket.BinaryMessage, b.Bytes())
		default:
			err = c.ws.WriteMessage(websocket.TextMessage, f.data)
		}
		if err != nil {
			return
		}
	}
}

// wait blocks until due (the injected latency of a frame) or until the
// connection is killed, which it reports as false.
func (c *gwConn) wait(due time.Time) bool {
	d := time.Until(due)
	if due.IsZero() || d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.done:
		return false
	}
}
