package voicesim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Session is what the main gateway hands out for one voice join: the
// VOICE_STATE_UPDATE session_id and the VOICE_SERVER_UPDATE token for a
// user in a guild's voice channel. The voice server accepts an Identify
// only for an authorized Session.
type Session struct {
	GuildID   string
	ChannelID string
	UserID    string
	SessionID string
	Token     string
	// SelfDeaf stops the forwarding unit from sending audio to this
	// member, as Discord does for self-deafened users.
	SelfDeaf bool
}

// Options configure a Server. The zero value is usable.
type Options struct {
	// Logger receives connection-level events (never per packet).
	// Nil discards.
	Logger *slog.Logger
	// HeartbeatInterval is sent in Hello (op 8). Default 13.75 s.
	HeartbeatInterval time.Duration
	// HeartbeatTimeout closes a connection that sent nothing for this
	// long with 4009 (session timeout). Default 2.5 × HeartbeatInterval.
	HeartbeatTimeout time.Duration
	// Modes are the encryption modes offered in Ready, in order.
	// Default: aead_aes256_gcm_rtpsize, aead_xchacha20_poly1305_rtpsize
	// (Discord's order; clients pick the first they support).
	Modes []Mode
	// DAVE turns on the DAVE server role: calls whose clients all
	// announce max_dave_protocol_version >= 1 run at protocol 1 with the
	// server as MLS external sender (see the package doc). Off, every
	// client gets dave_protocol_version 0 and the DAVE opcodes are only
	// passed to OnBinary and OnJSON.
	DAVE bool
	// RequireDAVE closes an Identify with max_dave_protocol_version < 1
	// with 4017, as Discord does since 2026-03-02. It implies DAVE.
	RequireDAVE bool
	// DAVETimeout bounds a DAVE proposal round (no valid commit: the
	// proposals are revoked and made again) and a transition (recipients
	// that did not send op 23 are not waited for). Default 5 s.
	DAVETimeout time.Duration
	// ResumeBuffer bounds the messages kept per session for buffered
	// resume. Default 1024.
	ResumeBuffer int
	// Port, when set, is the port of both the voice gateway (TCP, TLS) and
	// the UDP socket on 127.0.0.1, so scripts can rely on the endpoint;
	// 0 picks a free one for each.
	Port int
	// OnBinary, if set, receives every binary (DAVE) frame a client
	// sends. It is called on the connection's read goroutine without
	// locks held; Payload is a copy the callee may keep.
	OnBinary func(BinaryMessage)
	// OnJSON, if set, receives the DAVE JSON messages a client sends
	// (op 23 transition ready, op 31 invalid commit/welcome). Same calling
	// rules as OnBinary. With DAVE on, the server acts on them as well.
	OnJSON func(JSONMessage)
}

// Option edits Options (for Serve).
type Option func(*Options)

// WithLogger sets Options.Logger.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// WithHeartbeat sets the Hello interval and the server-side timeout.
func WithHeartbeat(interval, timeout time.Duration) Option {
	return func(o *Options) { o.HeartbeatInterval, o.HeartbeatTimeout = interval, timeout }
}

// WithModes sets the offered encryption modes.
func WithModes(m ...Mode) Option { return func(o *Options) { o.Modes = m } }

// WithDAVE sets Options.DAVE.
func WithDAVE() Option { return func(o *Options) { o.DAVE = true } }

// WithDAVETimeout sets Options.DAVETimeout.
func WithDAVETimeout(d time.Duration) Option { return func(o *Options) { o.DAVETimeout = d } }

// WithRequireDAVE sets Options.RequireDAVE.
func WithRequireDAVE() Option { return func(o *Options) { o.RequireDAVE = true } }

// WithResumeBuffer sets Options.ResumeBuffer.
func WithResumeBuffer(n int) Option { return func(o *Options) { o.ResumeBuffer = n } }

// WithOnBinary sets Options.OnBinary.
func WithOnBinary(f func(BinaryMessage)) Option { return func(o *Options) { o.OnBinary = f } }

// WithOnJSON sets Options.OnJSON.
func WithOnJSON(f func(JSONMessage)) Option { return func(o *Options) { o.OnJSON = f } }

// JSONMessage is a DAVE JSON message a client sent; D is the raw "d".
type JSONMessage struct {
	GuildID, UserID string
	Op              Op
	D               json.RawMessage
}

// BinaryMessage is a binary frame a client sent: [opcode u8][payload].
type BinaryMessage struct {
	GuildID, UserID string
	Op              Op
	Payload         []byte
}

type partKey struct{ guild, user string }

// Server is the simulated Discord voice server: a voice gateway v8 over TLS
// and a UDP forwarding unit on loopback. Create it with New or Serve; all
// methods are safe for concurrent use.
type Server struct {
	opts     Options
	log      *slog.Logger
	certs    *certs
	caDir    string
	ln       net.Listener
	http     *http.Server
	udp      *net.UDPConn
	udpPort  int
	endpoint string
	upgrader websocket.Upgrader
	wg       sync.WaitGroup // http serve loop, UDP loop, WS handlers, DAVE timer
	quit     chan struct{}  // closed by Close

	mu       sync.Mutex // guards following
	closed   bool
	auth     map[string]Session // token → session
	parts    map[partKey]*participant
	bySSRC   map[uint32]*participant
	nextSSRC uint32
	conns    map[*wsConn]struct{}
	faults   map[faultKey]*faultPath
	stats    Stats
	perUser  map[string]*Stats // ingress stats by sending user
	members  map[*Member]struct{}
	daves    map[daveKey]*daveCall
}

// participant is one user's voice session in a guild: a WS client (conn
// may be nil while it is disconnected and may resume) or an in-process
// Member. Fields are guarded by Server.mu.
type participant struct {
	key      partKey
	sess     Session
	ssrc     uint32
	maxDAVE  int
	conn     *wsConn
	out      seqBuffer
	tr       *transport   // nil until op 1 Select Protocol
	remote   *net.UDPAddr // where forwarded RTP goes
	speaking int          // last op 5 flags
	spoke    bool         // op 5 seen at least once
	knows    map[uint32]bool
	member   *Member
	counter  uint32 // transport nonce counter for packets we send it
	beats    Heartbeats
	// daveVersion is the DAVE protocol version the participant runs
	// (op 4, then executed transitions).
	daveVersion int
}

// New starts a voice server on loopback: a TLS listener for the voice
// gateway and a UDP socket, with a freshly generated CA.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 13750 * time.Millisecond
	}
	if opts.HeartbeatTimeout <= 0 {
		opts.HeartbeatTimeout = opts.HeartbeatInterval * 5 / 2
	}
	if len(opts.Modes) == 0 {
		opts.Modes = []Mode{ModeAES256GCMRTPSize, ModeXChaCha20Poly1305RTPSize}
	}
	if opts.ResumeBuffer <= 0 {
		opts.ResumeBuffer = 1024
	}
	if opts.DAVETimeout <= 0 {
		opts.DAVETimeout = 5 * time.Second
	}
	c, err := newCerts(time.Now())
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		certs:    c,
		auth:     map[string]Session{},
		parts:    map[partKey]*participant{},
		bySSRC:   map[uint32]*participant{},
		nextSSRC: 1000,
		conns:    map[*wsConn]struct{}{},
		faults:   map[faultKey]*faultPath{},
		perUser:  map[string]*Stats{},
		members:  map[*Member]struct{}{},
		daves:    map[daveKey]*daveCall{},
		quit:     make(chan struct{}),
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
	}
	if s.caDir, err = os.MkdirTemp("", "voicesim-ca-"); err != nil {
		return nil, fmt.Errorf("voicesim: ca dir: %w", err)
	}
	if err = os.WriteFile(s.CAFile(), c.caPEM, 0o600); err != nil {
		os.RemoveAll(s.caDir)
		return nil, fmt.Errorf("voicesim: write ca: %w", err)
	}
	s.ln, err = tls.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)), &tls.Config{
		Certificates: []tls.Certificate{c.server},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	})
	if err != nil {
		os.RemoveAll(s.caDir)
		return nil, fmt.Errorf("voicesim: listen: %w", err)
	}
	s.udp, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: opts.Port})
	if err != nil {
		s.ln.Close()
		os.RemoveAll(s.caDir)
		return nil, fmt.Errorf("voicesim: listen udp: %w", err)
	}
	s.udpPort = s.udp.LocalAddr().(*net.UDPAddr).Port
	s.endpoint = s.ln.Addr().String()
	s.http = &http.Server{Handler: http.HandlerFunc(s.handleWS), ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("voicesim: serve", "err", err)
		}
	}()
	go func() {
		defer s.wg.Done()
		s.udpLoop()
	}()
	if s.daveEnabled() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.daveTimerLoop()
		}()
	}
	s.log.Info("voicesim: listening", "endpoint", s.endpoint, "udp", s.udp.LocalAddr().String())
	return s, nil
}

// Endpoint is the voice server address as VOICE_SERVER_UPDATE carries it:
// "127.0.0.1:PORT", without scheme. Clients dial wss://ENDPOINT/?v=8.
func (s *Server) Endpoint() string { return s.endpoint }

// URL is the voice gateway URL a v8 client dials.
func (s *Server) URL() string { return "wss://" + s.endpoint + "/?v=8" }

// UDPAddr is the address of the server's UDP socket (what Ready carries).
func (s *Server) UDPAddr() *net.UDPAddr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: s.udpPort}
}

// CACertPEM returns the PEM of the CA that signed the server certificate.
func (s *Server) CACertPEM() []byte { return append([]byte(nil), s.certs.caPEM...) }

// CAFile is the path of a file holding CACertPEM (for NODE_EXTRA_CA_CERTS
// and the like). It is removed by Close.
func (s *Server) CAFile() string { return filepath.Join(s.caDir, "voicesim-ca.pem") }

// Authorize lets a client Identify with sess (called by the main-gateway
// simulator when it sends VOICE_SERVER_UPDATE). A user has one session per
// guild: any earlier token of the same user in the guild stops working, and
// if the user is connected in another channel that connection is closed
// with 4014 (moved), as Discord does.
func (s *Server) Authorize(sess Session) error {
	if sess.GuildID == "" || sess.ChannelID == "" || sess.UserID == "" || sess.SessionID == "" || sess.Token == "" {
		return fmt.Errorf("voicesim: authorize: %w: %+v", errMissingField, sess)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok, old := range s.auth {
		if old.GuildID == sess.GuildID && old.UserID == sess.UserID {
			delete(s.auth, tok)
		}
	}
	s.auth[sess.Token] = sess
	if p := s.parts[partKey{sess.GuildID, sess.UserID}]; p != nil && p.sess.ChannelID != sess.ChannelID {
		s.removeLocked(p, CloseDisconnected)
	}
	return nil
}

// Revoke ends a user's voice session in a guild (the user left the channel
// or was kicked): the token stops working, a connected client is closed
// with 4014, and the others in the channel get op 13.
func (s *Server) Revoke(guildID, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok, old := range s.auth {
		if old.GuildID == guildID && old.UserID == userID {
			delete(s.auth, tok)
		}
	}
	if p := s.parts[partKey{guildID, userID}]; p != nil {
		s.removeLocked(p, CloseDisconnected)
	}
}

// Close stops the server: members leave, WebSockets are closed with 1001,
// the listeners close, every goroutine is waited for and the CA file is
// removed.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.quit)
	members := make([]*Member, 0, len(s.members))
	for m := range s.members {
		members = append(members, m)
	}
	s.mu.Unlock()
	for _, m := range members {
		m.Leave()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	s.mu.Lock()
	for c := range s.conns {
		c.closeWith(CloseCode(websocket.CloseGoingAway), "voicesim: shutting down")
	}
	s.mu.Unlock()
	s.udp.Close()
	s.wg.Wait()
	if rerr := os.RemoveAll(s.caDir); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("voicesim: close: %w", err)
	}
	return nil
}

// allocSSRCLocked returns a fresh SSRC.
func (s *Server) allocSSRCLocked() uint32 {
	for {
		s.nextSSRC++
		if s.nextSSRC != 0 && s.bySSRC[s.nextSSRC] == nil {
			return s.nextSSRC
		}
	}
}

// peersLocked returns the other participants in p's channel.
func (s *Server) peersLocked(p *participant) []*participant {
	var out []*participant
	for _, q := range s.parts {
		if q != p && q.key.guild == p.key.guild && q.sess.ChannelID == p.sess.ChannelID {
			out = append(out, q)
		}
	}
	return out
}

// removeLocked ends p's session: its conn is closed with code (if any),
// its token is dropped and the channel gets op 13.
func (s *Server) removeLocked(p *participant, code CloseCode) {
	if s.parts[p.key] != p {
		return
	}
	delete(s.parts, p.key)
	delete(s.bySSRC, p.ssrc)
	if p.conn != nil {
		p.conn.closeWith(code, code.String())
		p.conn = nil
	}
	for tok, sess := range s.auth {
		if sess.GuildID == p.key.guild && sess.UserID == p.key.user && sess.Token == p.sess.Token {
			delete(s.auth, tok)
		}
	}
	for _, q := range s.peersLocked(p) {
		delete(q.knows, p.ssrc)
		s.sendSeqJSONLocked(q, OpClientDisconnect, clientDisconnectPayload{UserID: p.key.user})
	}
	s.daveLeftLocked(p)
	s.log.Info("voicesim: session ended", "guild", p.key.guild, "user", p.key.user, "code", int(code))
}

// sendSeqJSONLocked numbers, buffers and delivers a JSON message to p.
// Members have no WebSocket: a DAVE member's session is told about ops 11
// and 13 (its recognized users); nothing else reaches them here.
func (s *Server) sendSeqJSONLocked(p *participant, op Op, d any) {
	if p.member != nil {
		if p.member.dave != nil && (op == OpClientsConnect || op == OpClientDisconnect) {
			s.memberRosterLocked(p, op, d)
		}
		return
	}
	f := p.out.add(func(seq uint16) outFrame {
		return outFrame{data: encodeServerJSON(op, int(seq), d)}
	})
	s.deliverLocked(p, f)
}

// deliverLocked hands a frame to p's live connection, if any. A connection
// whose queue is full is dropped: the client resumes and gets the frame
// from the buffer, so nothing is lost.
func (s *Server) deliverLocked(p *participant, f outFrame) {
	if p.conn == nil {
		return
	}
	if !p.conn.enqueue(f) {
		s.log.Warn("voicesim: client too slow, dropping connection", "user", p.key.user)
		p.conn.drop()
		p.conn = nil
	}
}

// announceSpeakingLocked relays p's SSRC mapping and speaking flags (op 5)
// to everyone else in the channel.
func (s *Server) announceSpeakingLocked(p *participant) {
	for _, q := range s.peersLocked(p) {
		if q.knows == nil {
			q.knows = map[uint32]bool{}
		}
		q.knows[p.ssrc] = true
		s.sendSeqJSONLocked(q, OpSpeaking, serverSpeakingPayload{UserID: p.key.user, SSRC: p.ssrc, Speaking: p.speaking})
	}
}

func userStatsLocked(s *Server, user string) *Stats {
	st := s.perUser[user]
	if st == nil {
		st = &Stats{}
		s.perUser[user] = st
	}
	return st
}

func itoa(n int) string { return strconv.Itoa(n) }
