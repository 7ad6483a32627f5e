package voice

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/banterbot/banter/discord/voice/pace"
	"github.com/banterbot/banter/discord/voice/rtp"
	"github.com/banterbot/banter/discord/voice/transport"
	"github.com/gorilla/websocket"
)

// Conn is one voice connection (one guild, one token): the voice WebSocket,
// resumed transparently after transport drops and 4015, and the UDP socket.
//
// Goroutines: a supervisor (owns the WebSocket sessions, each with a read and
// a heartbeat goroutine), a UDP reader and a keepalive sender. Close stops
// and waits for all of them. E2EE callbacks run on the WebSocket reader (ops)
// and the UDP reader (DecryptOpus); Streams are announced from the
// WebSocket reader.
type Conn struct {
	cfg  Config
	log  *slog.Logger
	m    *Metrics
	e2ee E2EE

	ctx     context.Context // ends when the connection ends
	cancel  context.CancelFunc
	wg      sync.WaitGroup // UDP reader and keepalive
	done    chan struct{}
	endOnce sync.Once
	err     error // set in endOnce, read after done

	seq     atomic.Int64 // last server seq (JSON or binary), gateway.NoSeq if none
	streams chan *Stream

	// Set during Dial, read-only afterwards.
	udp  *net.UDPConn // own socket; nil on a clock's shared socket
	ssrc uint32
	mode transport.Mode

	// Send clock (Config.Clock): the queue between SendOpus and the clock,
	// the clock's state for this connection, and the shared socket's
	// routing (shared: this connection uses it).
	clock      *SendClock
	q          outQueue
	clk        clockState
	firstSpurt bool // producer-owned: the next kick delays one slot
	shared     bool
	server     netip.AddrPort
	serverUDP  *net.UDPAddr
	discovered chan netip.AddrPort

	wsMu sync.Mutex // guards following (gorilla allows one writer)
	ws   *websocket.Conn

	mu        sync.RWMutex // guards following
	state     State
	bySSRC    map[uint32]*Stream
	connected map[string]bool

	// Receive path, owned by the UDP reader.
	recvCipher *transport.Cipher
	recvHdr    rtp.Header
	recvBuf    []byte

	// Send path, owned by the SendOpus caller (detected with sending); with
	// a clock, the RTP state and sendBuf belong to the clock goroutine.
	sending    atomic.Bool
	sendCipher *transport.Cipher
	pacer      *pace.Pacer
	speaking   bool
	announced  bool // a Speaking was ever sent on this connection
	rtFailed   bool // EnterRealtime refused once; pace normally
	rtpSeq     uint16
	rtpTS      uint32
	counter    uint32
	lastSend   time.Time
	hdr        rtp.Header
	hdrBuf     [rtp.HeaderSize]byte
	silence    [3]byte // silenceFrame
	sendBuf    []byte
	e2eeBuf    []byte
}

// Dial opens a voice connection: WebSocket, Identify, Hello/Ready, UDP IP
// discovery, Select Protocol and Session Description. ctx bounds the
// handshake only (together with Config.HandshakeTimeout); the connection
// then lives until Close or until the server ends it (see Done and Err).
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	cfg.setDefaults()
	c := &Conn{
		cfg:       cfg,
		log:       cfg.Logger.With("guild", cfg.GuildID, "channel", cfg.ChannelID),
		m:         cfg.Metrics,
		e2ee:      cfg.E2EE,
		done:      make(chan struct{}),
		streams:   make(chan *Stream, 64),
		bySSRC:    map[uint32]*Stream{},
		connected: map[string]bool{},
		recvBuf:   make([]byte, 0, 2048),
		sendBuf:   make([]byte, 0, 2048),
		e2eeBuf:   make([]byte, 0, 2048),
		pacer:     pace.New(frameDuration),
		clock:     cfg.Clock,
	}
	if c.clock != nil {
		c.q.init(c.clock.opts.Lookahead)
	}
	copy(c.silence[:], silenceFrame)
	// Random initial sequence number and timestamp (RFC 3550 §5.1).
	var seed [6]byte
	rand.Read(seed[:])
	c.rtpSeq, c.rtpTS = binary.BigEndian.Uint16(seed[:]), binary.BigEndian.Uint32(seed[2:])
	c.pacer.Spin = max(cfg.SendSpin, 0)
	c.seq.Store(gateway.NoSeq)
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	c.setState(StateConnecting)
	sess, err := c.handshake(ctx)
	if err != nil {
		c.endOnce.Do(func() { c.err = err })
		c.teardown(sess)
		return nil, err
	}
	c.setState(StateReady)
	c.log.Info("voice: connected", "ssrc", c.ssrc, "mode", c.mode.String(), "dave", c.maxDAVE())
	if es, ok := c.e2ee.(E2EESender); ok {
		es.AttachSender(c.writeOutbound)
	}
	go func() {
		last := c.supervise(sess)
		c.teardown(last)
	}()
	return c, nil
}

func (c *Conn) maxDAVE() int {
	if c.e2ee == nil {
		return 0
	}
	return c.e2ee.MaxProtocolVersion()
}

func (c *Conn) handshake(ctx context.Context) (*wsSession, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.HandshakeTimeout)
	defer cancel()
	sess, err := c.openSession(ctx, false)
	if err != nil {
		return nil, err
	}
	var ready gateway.ReadyEvent
	select {
	case ready = <-sess.ready:
	case <-sess.ended:
		return sess, sess.closeError("identify")
	case <-ctx.Done():
		return sess, fmt.Errorf("%w: waiting for Ready: %w", errHandshakeTimeout, ctx.Err())
	}
	c.ssrc = ready.SSRC
	mode, err := transport.ChooseMode(ready.Modes)
	if err != nil {
		return sess, fmt.Errorf("voice: select protocol: %w", err)
	}
	c.mode = mode
	ext, err := c.dialUDP(ctx, ready)
	if err != nil {
		return sess, err
	}
	if err := c.writeJSON(gateway.OpSelectProtocol, gateway.SelectProtocolCommand{
		Protocol: "udp",
		Data:     gateway.SelectProtocolData{Address: ext.Addr().String(), Port: ext.Port(), Mode: mode.String()},
	}); err != nil {
		return sess, fmt.Errorf("voice: select protocol: %w", err)
	}
	var desc gateway.SessionDescriptionEvent
	select {
	case desc = <-sess.desc:
	case <-sess.ended:
		return sess, sess.closeError("select protocol")
	case <-ctx.Done():
		return sess, fmt.Errorf("%w: waiting for Session Description: %w", errHandshakeTimeout, ctx.Err())
	}
	if got := transport.ParseMode(desc.Mode); got != mode {
		return sess, fmt.Errorf("voice: session description: mode %q, selected %q", desc.Mode, mode)
	}
	key, err := desc.Key()
	if err != nil {
		return sess, fmt.Errorf("voice: %w", err)
	}
	if c.recvCipher, err = transport.NewCipher(mode, key); err != nil {
		return sess, fmt.Errorf("voice: session description: %w", err)
	}
	if c.sendCipher, err = transport.NewCipher(mode, key); err != nil {
		return sess, fmt.Errorf("voice: session description: %w", err)
	}
	if c.shared {
		c.wg.Add(1)
	} else {
		c.wg.Add(2)
		go c.readUDP()
	}
	go c.keepalive()
	return sess, nil
}

// supervise owns the WebSocket after the handshake: it resumes after
// resumable closes and ends the connection otherwise. It returns the last
// session for teardown.
func (c *Conn) supervise(sess *wsSession) *wsSession {
	for {
		select {
		case <-c.ctx.Done():
			return sess
		case <-sess.ended:
		}
		sess.wait()
		code := sess.code
		if code.Action() != gateway.ActionResume {
			c.end(&CloseError{Code: code, Reason: sess.reason})
			return sess
		}
		c.log.Warn("voice: websocket closed, resuming", "code", int(code), "reason", sess.reason)
		c.setState(StateResuming)
		next, err := c.resume(code)
		if err != nil {
			c.end(err)
			return nil
		}
		sess = next
		c.setState(StateReady)
		c.log.Info("voice: resumed", "seq_ack", c.seq.Load())
	}
}

// resume reconnects with Op 7 until Op 9 Resumed, with back-off.
func (c *Conn) resume(code gateway.CloseCode) (*wsSession, error) {
	backoff := c.cfg.ResumeBackoff
	var lastErr error
	for attempt := range c.cfg.ResumeAttempts {
		c.m.reconnect(int(code))
		if attempt > 0 {
			select {
			case <-time.After(backoff):
			case <-c.ctx.Done():
				return nil, ErrClosed
			}
			backoff *= 2
		}
		sess, err := c.tryResume()
		if err == nil {
			return sess, nil
		}
		if c.ctx.Err() != nil {
			return nil, ErrClosed
		}
		lastErr = err
		if ce, ok := err.(*CloseError); ok {
			if ce.Action() != gateway.ActionResume {
				return nil, ce
			}
			code = ce.Code
		}
		c.log.Warn("voice: resume attempt failed", "attempt", attempt+1, "err", err)
	}
	return nil, fmt.Errorf("%w after %d attempts: %w", errResumeFailed, c.cfg.ResumeAttempts, lastErr)
}

func (c *Conn) tryResume() (*wsSession, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.HandshakeTimeout)
	defer cancel()
	sess, err := c.openSession(ctx, true)
	if err != nil {
		return nil, err
	}
	select {
	case <-sess.resumed:
		return sess, nil
	case <-sess.ended:
		sess.wait()
		return nil, sess.closeError("resume")
	case <-ctx.Done():
		sess.shutdown()
		sess.wait()
		return nil, fmt.Errorf("voice: resume: waiting for Resumed: %w", ctx.Err())
	}
}

// end records why the connection ends (first caller wins) and stops it.
func (c *Conn) end(err error) {
	c.endOnce.Do(func() { c.err = err })
	c.cancel()
}

// teardown stops everything and waits; sess may be nil.
func (c *Conn) teardown(sess *wsSession) {
	c.cancel()
	if sess != nil {
		sess.shutdown()
		sess.wait()
	}
	if c.udp != nil {
		c.udp.Close()
	}
	if c.shared {
		c.clock.mux.detach(c)
	}
	c.wg.Wait()
	c.mu.Lock()
	for ssrc, s := range c.bySSRC {
		c.endStreamLocked(ssrc, s)
	}
	c.mu.Unlock()
	close(c.streams)
	if es, ok := c.e2ee.(E2EESender); ok {
		es.AttachSender(nil)
	}
	c.setState(StateClosed)
	if err, ok := c.err.(*CloseError); ok {
		c.log.Warn("voice: connection ended", "code", int(err.Code), "action", err.Action().String(), "err", err)
	} else {
		c.log.Info("voice: connection closed", "err", c.err)
	}
	close(c.done)
}

// Close ends the connection and waits for its goroutines. It is safe to call
// more than once and after the server ended the connection.
func (c *Conn) Close() error {
	c.end(ErrClosed)
	<-c.done
	return nil
}

// Done is closed when the connection has ended and its goroutines stopped.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended: a *CloseError for server closes
// that are not resumed, ErrClosed after Close, or a resume failure. It
// returns nil while the connection is up.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// SSRC returns the connection's own SSRC.
func (c *Conn) SSRC() uint32 { return c.ssrc }

// Mode returns the negotiated transport encryption mode.
func (c *Conn) Mode() transport.Mode { return c.mode }

// State returns the connection's state.
func (c *Conn) State() State {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state
}

// Streams announces a Stream for each speaker as its SSRC becomes known
// (op 5). The channel is closed when the connection ends. Announcements
// the consumer does not take in time (64 pending) are dropped and logged.
func (c *Conn) Streams() <-chan *Stream { return c.streams }

// ConnectedUsers returns the user ids the server reported in ops 11/13.
func (c *Conn) ConnectedUsers() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.connected))
	for u := range c.connected {
		out = append(out, u)
	}
	return out
}

func (c *Conn) setState(s State) {
	c.mu.Lock()
	from := c.state
	c.state = s
	c.mu.Unlock()
	c.m.transition(from, s)
}

// wsURL builds wss://{endpoint}?v=8.
func wsURL(endpoint string) string {
	endpoint = strings.TrimPrefix(strings.TrimPrefix(endpoint, "wss://"), "ws://")
	endpoint = strings.TrimSuffix(endpoint, "/")
	return "wss://" + endpoint + "/?v=8"
}
