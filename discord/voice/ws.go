package voice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/gorilla/websocket"
)

const writeTimeout = 5 * time.Second

// wsSession is one voice WebSocket (the first, or one resume). Its read
// goroutine dispatches server messages; it starts the heartbeat goroutine on
// Hello. The supervisor owns it: shutdown and wait.
type wsSession struct {
	c      *Conn
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	ended  chan struct{} // closed by the reader when the socket is gone
	code   gateway.CloseCode
	reason string

	ready   chan gateway.ReadyEvent
	desc    chan gateway.SessionDescriptionEvent
	resumed chan struct{}

	unacked atomic.Int32
	beating bool // reader only
}

// openSession dials the WebSocket and sends Identify (or Resume) at once, as
// @discordjs/voice does, without waiting for Hello.
func (c *Conn) openSession(ctx context.Context, resume bool) (*wsSession, error) {
	d := websocket.Dialer{
		TLSClientConfig:  c.cfg.TLSConfig,
		HandshakeTimeout: c.cfg.HandshakeTimeout,
		Proxy:            http.ProxyFromEnvironment,
	}
	ws, _, err := d.DialContext(ctx, wsURL(c.cfg.Endpoint), nil)
	if err != nil {
		return nil, fmt.Errorf("voice: dial %s: %w", c.cfg.Endpoint, err)
	}
	s := &wsSession{
		c:       c,
		ws:      ws,
		ended:   make(chan struct{}),
		ready:   make(chan gateway.ReadyEvent, 1),
		desc:    make(chan gateway.SessionDescriptionEvent, 1),
		resumed: make(chan struct{}, 1),
	}
	s.ctx, s.cancel = context.WithCancel(c.ctx)
	c.wsMu.Lock()
	c.ws = ws
	c.wsMu.Unlock()
	if resume {
		err = c.writeJSON(gateway.OpResume, gateway.ResumeCommand{
			ServerID: c.cfg.GuildID, SessionID: c.cfg.SessionID, Token: c.cfg.Token, SeqAck: int(c.seq.Load()),
		})
	} else {
		err = c.writeJSON(gateway.OpIdentify, gateway.IdentifyCommand{
			ServerID: c.cfg.GuildID, UserID: c.cfg.UserID, SessionID: c.cfg.SessionID, Token: c.cfg.Token,
			MaxDAVEProtocolVersion: c.maxDAVE(),
		})
	}
	if err != nil {
		ws.Close()
		s.cancel()
		return nil, fmt.Errorf("voice: send %s: %w", map[bool]string{true: "resume", false: "identify"}[resume], err)
	}
	s.wg.Add(1)
	go s.readLoop()
	return s, nil
}

// shutdown closes the socket; the reader then exits.
func (s *wsSession) shutdown() {
	s.cancel()
	s.c.wsMu.Lock()
	s.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	s.c.wsMu.Unlock()
	s.ws.Close()
}

func (s *wsSession) wait() { s.wg.Wait() }

// closeError describes the session's end during a handshake step.
func (s *wsSession) closeError(step string) error {
	<-s.ended
	return &CloseError{Code: s.code, Reason: fmt.Sprintf("during %s: %s", step, s.reason)}
}

func (s *wsSession) readLoop() {
	defer s.wg.Done()
	defer close(s.ended)
	defer s.cancel()
	for {
		mt, data, err := s.ws.ReadMessage()
		if err != nil {
			s.code, s.reason = closeCode(err)
			return
		}
		var msg gateway.Message
		if mt == websocket.BinaryMessage {
			msg, err = gateway.DecodeBinary(data)
		} else {
			msg, err = gateway.DecodeText(data)
		}
		if err != nil {
			s.c.log.Warn("voice: dropping undecodable gateway message", "err", err, "len", len(data))
			continue
		}
		if msg.Seq != gateway.NoSeq {
			s.c.seq.Store(int64(msg.Seq))
		}
		if err := s.dispatch(msg); err != nil {
			s.c.log.Warn("voice: gateway message", "op", msg.Op.String(), "err", err)
		}
	}
}

// closeCode maps a read error to the close code that ended the socket:
// the server's close frame, or 1006 for a drop without one.
func closeCode(err error) (gateway.CloseCode, string) {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return gateway.CloseCode(ce.Code), ce.Text
	}
	return gateway.CloseAbnormal, err.Error()
}

func (s *wsSession) dispatch(msg gateway.Message) error {
	c := s.c
	switch msg.Op {
	case gateway.OpHello:
		var h gateway.HelloEvent
		if err := msg.Decode(&h); err != nil {
			return err
		}
		if h.HeartbeatInterval <= 0 {
			return fmt.Errorf("voice: hello: heartbeat_interval %v", h.HeartbeatInterval)
		}
		if !s.beating {
			s.beating = true
			s.wg.Add(1)
			go s.heartbeat(time.Duration(h.HeartbeatInterval * float64(time.Millisecond)))
		}
	case gateway.OpReady:
		var r gateway.ReadyEvent
		if err := msg.Decode(&r); err != nil {
			return err
		}
		select {
		case s.ready <- r:
		default:
		}
	case gateway.OpSessionDescription:
		var d gateway.SessionDescriptionEvent
		if err := msg.Decode(&d); err != nil {
			return err
		}
		select {
		case s.desc <- d:
		default:
		}
		return s.toE2EE(msg)
	case gateway.OpHeartbeatACK:
		s.unacked.Store(0)
	case gateway.OpResumed:
		select {
		case s.resumed <- struct{}{}:
		default:
		}
	case gateway.OpSpeaking:
		var e gateway.SpeakingEvent
		if err := msg.Decode(&e); err != nil {
			return err
		}
		if e.UserID != "" {
			c.mapSSRC(e.UserID, e.SSRC)
		}
	case gateway.OpClientsConnect:
		var e gateway.ClientsConnectEvent
		if err := msg.Decode(&e); err != nil {
			return err
		}
		c.mu.Lock()
		for _, u := range e.UserIDs {
			c.connected[u] = true
		}
		c.mu.Unlock()
		return s.toE2EE(msg)
	case gateway.OpClientDisconnect:
		var e gateway.ClientDisconnectEvent
		if err := msg.Decode(&e); err != nil {
			return err
		}
		c.userLeft(e.UserID)
		return s.toE2EE(msg)
	default:
		if msg.Op.IsDAVE() {
			return s.toE2EE(msg)
		}
		// Undocumented ops (10, 12, 14, 15, 16, 18, 20…) are ignored.
	}
	return nil
}

// toE2EE hands a message to the DAVE session and sends what it answers.
func (s *wsSession) toE2EE(msg gateway.Message) error {
	e := s.c.e2ee
	if e == nil {
		return nil
	}
	payload := []byte(msg.Data)
	if msg.Binary {
		payload = msg.Payload
	}
	out, err := e.HandleGateway(msg.Op, payload, msg.Binary)
	for _, o := range out {
		if werr := s.c.writeOutbound(o); werr != nil {
			return werr
		}
	}
	if err != nil {
		return fmt.Errorf("voice: e2ee %v: %w", msg.Op, err)
	}
	return nil
}

func (s *wsSession) heartbeat(interval time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		if n := s.unacked.Add(1); int(n) > s.c.cfg.MissedHeartbeats {
			s.c.log.Warn("voice: heartbeats unacknowledged, reconnecting", "missed", n-1)
			s.ws.Close() // the reader sees a drop (1006) and the supervisor resumes
			return
		}
		err := s.c.writeJSON(gateway.OpHeartbeat, gateway.HeartbeatCommand{
			T: time.Now().UnixMilli(), SeqAck: int(s.c.seq.Load()),
		})
		if err != nil {
			return
		}
	}
}

// writeJSON sends a JSON command on the current socket.
func (c *Conn) writeJSON(op gateway.Opcode, d any) error {
	b, err := gateway.EncodeCommand(op, d)
	if err != nil {
		return err
	}
	return c.writeFrame(websocket.TextMessage, b)
}

func (c *Conn) writeOutbound(o gateway.OutboundMessage) error {
	if o.Binary {
		return c.writeFrame(websocket.BinaryMessage, gateway.AppendBinaryCommand(nil, o.Op, o.Payload))
	}
	return c.writeJSON(o.Op, json.RawMessage(o.Data))
}

func (c *Conn) writeFrame(mt int, b []byte) error {
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	if c.ws == nil {
		return fmt.Errorf("voice: write: not connected")
	}
	c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := c.ws.WriteMessage(mt, b); err != nil {
		return fmt.Errorf("voice: write: %w", err)
	}
	return nil
}
