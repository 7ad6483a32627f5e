package voicesim

import (
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const (
	sendQueue    = 256
	writeTimeout = 5 * time.Second
	closeLinger  = time.Second // how long we wait for the client's close reply
)

// wsConn is one voice WebSocket. The HTTP handler goroutine reads; a writer
// goroutine it owns drains send. Other goroutines only call enqueue,
// closeWith and drop, which never block.
type wsConn struct {
	ws      *websocket.Conn
	send    chan outFrame
	closeCh chan closeReq // capacity 1: the first close request wins
	done    chan struct{} // closed when the handler is finishing
	once    sync.Once
	closing chan struct{} // closed once a close was requested or the conn dropped
	clOnce  sync.Once
}

type closeReq struct {
	code   CloseCode
	reason string
}

func newWSConn(ws *websocket.Conn) *wsConn {
	return &wsConn{
		ws:      ws,
		send:    make(chan outFrame, sendQueue),
		closeCh: make(chan closeReq, 1),
		done:    make(chan struct{}),
		closing: make(chan struct{}),
	}
}

// enqueue queues f for writing; false means the queue is full.
func (c *wsConn) enqueue(f outFrame) bool {
	select {
	case <-c.closing:
		return true // closing: the frame stays in the resume buffer
	default:
	}
	select {
	case c.send <- f:
		return true
	default:
		return false
	}
}

// closeWith asks the writer to send a close frame with code after the
// frames already queued, then to close the connection.
func (c *wsConn) closeWith(code CloseCode, reason string) {
	c.clOnce.Do(func() {
		c.closeCh <- closeReq{code: code, reason: reason}
		close(c.closing)
	})
}

// drop closes the TCP connection without a close frame.
func (c *wsConn) drop() {
	c.clOnce.Do(func() { close(c.closing) })
	c.ws.NetConn().Close()
}

func (c *wsConn) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

// writeLoop writes queued frames until the handler finishes or a close was
// requested.
func (c *wsConn) writeLoop() {
	for {
		select {
		case f := <-c.send:
			if !c.write(f) {
				c.ws.NetConn().Close()
				return
			}
		case req := <-c.closeCh:
			// Flush what was queued before the close.
			for {
				select {
				case f := <-c.send:
					if !c.write(f) {
						c.ws.NetConn().Close()
						return
					}
					continue
				default:
				}
				break
			}
			msg := websocket.FormatCloseMessage(int(req.code), truncate(req.reason, 120))
			c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(writeTimeout))
			c.ws.SetReadDeadline(time.Now().Add(closeLinger))
			return
		case <-c.done:
			return
		}
	}
}

func (c *wsConn) write(f outFrame) bool {
	if f.batch != nil {
		for _, g := range f.batch {
			if !c.write(g) {
				return false
			}
		}
		return true
	}
	c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	t := websocket.TextMessage
	if f.binary {
		t = websocket.BinaryMessage
	}
	return c.ws.WriteMessage(t, f.data) == nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// handleWS serves one voice WebSocket.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered with an HTTP error
	}
	c := newWSConn(ws)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	closed := s.closed
	s.mu.Unlock()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	defer func() {
		if c.isClosing() {
			// Let the writer flush and send the close frame.
			select {
			case <-writerDone:
			case <-time.After(closeLinger):
			}
		}
		c.once.Do(func() { close(c.done) })
		<-writerDone
		ws.Close()
		s.mu.Lock()
		delete(s.conns, c)
		for _, p := range s.parts {
			if p.conn == c {
				p.conn = nil
			}
		}
		s.mu.Unlock()
	}()
	if closed {
		c.closeWith(CloseCode(websocket.CloseGoingAway), "voicesim: shutting down")
	}
	// Only voice gateway v8 is implemented; Discord documents no close code
	// for a bad version, so the simulator uses 4020 (bad request).
	if v := r.URL.Query().Get("v"); v != "8" {
		c.closeWith(CloseBadRequest, "voicesim: only ?v=8 is supported, got v="+v)
	} else {
		c.enqueue(outFrame{data: encodeServerJSON(OpHello, -1, helloPayload{HeartbeatInterval: float64(s.opts.HeartbeatInterval.Milliseconds())})})
	}
	h := &connHandler{s: s, c: c}
	h.readLoop()
}
