package voice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/bwmarrin/discordgo"
)

// MainGateway is what the Manager needs from the main gateway session:
// sending Op 4 Voice State Update and receiving VOICE_STATE_UPDATE /
// VOICE_SERVER_UPDATE. *discordgo.Session implements it.
type MainGateway interface {
	// ChannelVoiceJoinManual sends main-gateway Op 4 (channelID "" leaves).
	// discordgo panics if its WebSocket is not open.
	ChannelVoiceJoinManual(guildID, channelID string, mute, deaf bool) error
	// AddHandler registers an event handler and returns its remover.
	AddHandler(handler any) func()
}

var _ MainGateway = (*discordgo.Session)(nil)

// ManagerConfig configures a Manager.
type ManagerConfig struct {
	// UserID is the bot's user id (discordgo: s.State.User.ID after Open).
	UserID string
	// SelfMute and SelfDeaf go into Op 4. A bot that listens must not be
	// deaf.
	SelfMute, SelfDeaf bool
	// NewE2EE, if set, makes the DAVE session for each new connection.
	NewE2EE func(guildID, channelID string) E2EE
	// OnConnect, if set, is called with every new connection of a guild
	// (the first, and each fresh one after a move or a lost session), on
	// the guild's goroutine; it must not block. Resumes keep the Conn.
	OnConnect func(guildID string, c *Conn)
	// OnMove, if set, makes the Manager follow a move by someone else (a moderator drags the
	// bot): when the bot's own VOICE_STATE_UPDATE puts it in another channel of the guild
	// than the one it was in and wanted, that channel becomes the wanted one (the connection
	// is made afresh with the move's VOICE_SERVER_UPDATE, and OnConnect called with it), and
	// OnMove is called with the channels before and after, on the main gateway's event
	// goroutine; it must not block. Nil: a move is not followed (the old connection ends,
	// 4014, and the Manager waits for a join).
	OnMove func(guildID, from, to string)
	// Conn is the template for connections (TLSConfig, Logger, Metrics,
	// timeouts); the identity fields are filled in per connection.
	Conn Config
	// Backoff is the first delay before rejoining after 4011 or 4021; it
	// doubles per consecutive failure up to MaxBackoff. Defaults 2 s, 1 min.
	Backoff, MaxBackoff time.Duration
	// MaxRejoins bounds consecutive fresh sessions (4004/4006/4009, failed
	// resumes, back-offs) without a connection that lasted StableAfter.
	// Defaults 5 and 30 s.
	MaxRejoins  int
	StableAfter time.Duration
}

// Manager joins, moves and leaves voice channels per guild through the main
// gateway and keeps each guild's voice connection up: it waits for both
// voice events (an endpoint may be null at first), connects with every new
// token exactly once, rejoins for a fresh session after 4006/4009, backs off
// after 4011/4021, stops after 4014/4022 until a new VOICE_SERVER_UPDATE
// (a move), and retries a client-bug close at most once.
//
// Each guild has one goroutine; Close stops and waits for all of them.
type Manager struct {
	gw     MainGateway
	cfg    ManagerConfig
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	remove []func()

	mu     sync.Mutex // guards following
	guilds map[string]*guildVoice
	closed bool
}

// guildVoice is one guild's signalling state and connection. Fields after
// kick are guarded by Manager.mu.
type guildVoice struct {
	id     string
	kick   chan struct{} // wakes the guild goroutine (buffer 1)
	cancel context.CancelFunc
	done   chan struct{}

	want      string // channel we asked for; "" leaving
	channel   string // channel per our VOICE_STATE_UPDATE
	sessionID string
	token     string
	endpoint  string
	tokenUsed bool
	conn      *Conn
	waiters   []chan joinResult
}

type joinResult struct {
	conn *Conn
	err  error
}

var (
	errManagerClosed = errors.New("voice: manager closed")
	errLeft          = errors.New("voice: left the channel")
	errGaveUp        = errors.New("voice: giving up on the guild's voice connection")
)

// NewManager registers its handlers on gw and returns the Manager.
func NewManager(gw MainGateway, cfg ManagerConfig) *Manager {
	if cfg.Backoff <= 0 {
		cfg.Backoff = 2 * time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	if cfg.MaxRejoins <= 0 {
		cfg.MaxRejoins = 5
	}
	if cfg.StableAfter <= 0 {
		cfg.StableAfter = 30 * time.Second
	}
	if cfg.Conn.Logger == nil {
		cfg.Conn.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{gw: gw, cfg: cfg, log: cfg.Conn.Logger, guilds: map[string]*guildVoice{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.remove = []func(){
		gw.AddHandler(func(_ *discordgo.Session, e *discordgo.VoiceStateUpdate) { m.onVoiceState(e) }),
		gw.AddHandler(func(_ *discordgo.Session, e *discordgo.VoiceServerUpdate) { m.onVoiceServer(e) }),
	}
	return m
}

// Join joins channelID in guildID, or moves there, and returns the guild's
// voice connection once it is up. A move closes the old connection and
// connects fresh with the new token.
func (m *Manager) Join(ctx context.Context, guildID, channelID string) (*Conn, error) {
	if channelID == "" {
		return nil, fmt.Errorf("voice: join %s: empty channel id", guildID)
	}
	res := make(chan joinResult, 1)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errManagerClosed
	}
	g := m.guilds[guildID]
	if g == nil {
		g = m.startGuildLocked(guildID)
	}
	if g.want == channelID && g.channel == channelID && g.conn != nil && g.conn.Err() == nil {
		c := g.conn
		m.mu.Unlock()
		return c, nil
	}
	g.want = channelID
	g.waiters = append(g.waiters, res)
	m.mu.Unlock()
	if err := m.voiceStateUpdate(guildID, channelID); err != nil {
		return nil, fmt.Errorf("voice: join %s/%s: %w", guildID, channelID, err)
	}
	select {
	case r := <-res:
		return r.conn, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("voice: join %s/%s: %w", guildID, channelID, ctx.Err())
	}
}

// Leave leaves the guild's voice channel (Op 4 with a null channel) and
// closes its connection.
func (m *Manager) Leave(ctx context.Context, guildID string) error {
	m.mu.Lock()
	g := m.guilds[guildID]
	if g == nil {
		m.mu.Unlock()
		return nil
	}
	delete(m.guilds, guildID)
	m.mu.Unlock()
	g.cancel()
	select {
	case <-g.done:
	case <-ctx.Done():
		return fmt.Errorf("voice: leave %s: %w", guildID, ctx.Err())
	}
	if err := m.voiceStateUpdate(guildID, ""); err != nil {
		return fmt.Errorf("voice: leave %s: %w", guildID, err)
	}
	return nil
}

// Conn returns the guild's current connection, or nil.
func (m *Manager) Conn(guildID string) *Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g := m.guilds[guildID]; g != nil {
		return g.conn
	}
	return nil
}

// Close removes the handlers and closes every connection, waiting for the
// guild goroutines. It does not send Op 4 (the main gateway is usually
// closing too); call Leave first to leave channels.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	guilds := m.guilds
	m.guilds = map[string]*guildVoice{}
	m.mu.Unlock()
	for _, r := range m.remove {
		r()
	}
	m.cancel()
	for _, g := range guilds {
		<-g.done
	}
	return nil
}

func (m *Manager) startGuildLocked(guildID string) *guildVoice {
	ctx, cancel := context.WithCancel(m.ctx)
	g := &guildVoice{id: guildID, kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	m.guilds[guildID] = g
	go func() {
		defer close(g.done)
		m.runGuild(ctx, g)
	}()
	return g
}

func (g *guildVoice) wake() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// onVoiceState takes the bot's own VOICE_STATE_UPDATE: session id and
// channel (null when disconnected).
func (m *Manager) onVoiceState(e *discordgo.VoiceStateUpdate) {
	if e.VoiceState == nil || e.UserID != m.cfg.UserID {
		return
	}
	m.mu.Lock()
	g := m.guilds[e.GuildID]
	from := ""
	if g != nil {
		// Moved by someone else: we were in the channel we wanted and are now in another one
		// (a VOICE_STATE_UPDATE answering our own join or move names the wanted channel).
		if m.cfg.OnMove != nil && g.want != "" && g.channel == g.want && e.ChannelID != "" && e.ChannelID != g.want {
			from, g.want = g.want, e.ChannelID
		}
		g.sessionID, g.channel = e.SessionID, e.ChannelID
	}
	m.mu.Unlock()
	if g != nil {
		g.wake()
	}
	if from != "" {
		m.log.Info("voice: moved by someone else; following", "guild", e.GuildID, "from", from, "to", e.ChannelID)
		m.cfg.OnMove(e.GuildID, from, e.ChannelID)
	}
}

// Channel returns the channel the bot is in per its latest VOICE_STATE_UPDATE in the guild
// ("" when disconnected, or when the Manager has not joined there).
func (m *Manager) Channel(guildID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g := m.guilds[guildID]; g != nil {
		return g.channel
	}
	return ""
}

// onVoiceServerUpdate takes VOICE_SERVER_UPDATE: a new token (each join and
// move) and the endpoint, which is null while no server is allocated.
func (m *Manager) onVoiceServer(e *discordgo.VoiceServerUpdate) {
	m.mu.Lock()
	g := m.guilds[e.GuildID]
	if g != nil {
		if e.Token != g.token {
			g.token, g.tokenUsed = e.Token, false
		}
		g.endpoint = e.Endpoint
	}
	m.mu.Unlock()
	if g != nil {
		g.wake()
	}
}

// runGuild is the guild's goroutine: it connects whenever a fresh token is
// ready for the wanted channel and reacts to the connection's end.
func (m *Manager) runGuild(ctx context.Context, g *guildVoice) {
	var (
		conn      *Conn
		connDone  <-chan struct{}
		since     time.Time
		rejoins   int
		bugRetry  bool
		backoff   = m.cfg.Backoff
		retry     <-chan time.Time
		log       = m.log.With("guild", g.id)
		closeConn = func() {
			if conn != nil {
				conn.Close()
				conn, connDone = nil, nil
			}
		}
	)
	defer func() {
		closeConn()
		m.finishWaiters(g, nil, errLeft)
	}()
	for {
		m.mu.Lock()
		ready := g.want != "" && g.channel == g.want && g.sessionID != "" && g.token != "" && g.endpoint != "" && !g.tokenUsed
		if g.channel == "" && conn != nil {
			ready = false
		}
		var cfg Config
		if ready {
			g.tokenUsed = true
			cfg = m.cfg.Conn
			cfg.Endpoint, cfg.GuildID, cfg.ChannelID, cfg.UserID = g.endpoint, g.id, g.want, m.cfg.UserID
			cfg.SessionID, cfg.Token = g.sessionID, g.token
		}
		kicked := g.channel == "" && conn != nil // disconnected by someone else
		m.mu.Unlock()
		if kicked {
			log.Info("voice: disconnected from the channel")
			closeConn()
		}
		if ready {
			closeConn() // a move or server change: never reuse the old session
			if m.cfg.NewE2EE != nil {
				cfg.E2EE = m.cfg.NewE2EE(cfg.GuildID, cfg.ChannelID)
			}
			c, err := Dial(ctx, cfg) // bounded by cfg.HandshakeTimeout
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Warn("voice: connect failed", "err", err)
				retry = m.afterEnd(ctx, g, err, &rejoins, &bugRetry, &backoff, log)
				continue
			}
			conn, connDone, since = c, c.Done(), time.Now()
			if m.cfg.OnConnect != nil {
				m.cfg.OnConnect(g.id, c)
			}
			m.mu.Lock()
			g.conn = c
			m.mu.Unlock()
			m.finishWaiters(g, c, nil)
		}
		select {
		case <-ctx.Done():
			return
		case <-g.kick:
		case <-retry:
			retry = nil
			m.rejoin(g, log)
		case <-connDone:
			err := conn.Err()
			conn, connDone = nil, nil
			m.mu.Lock()
			g.conn = nil
			m.mu.Unlock()
			if time.Since(since) >= m.cfg.StableAfter {
				rejoins, bugRetry, backoff = 0, false, m.cfg.Backoff
			}
			retry = m.afterEnd(ctx, g, err, &rejoins, &bugRetry, &backoff, log)
		}
	}
}

// afterEnd decides what follows a connection's end (or a failed connect):
// an immediate rejoin, a rejoin after a back-off (returned timer), or
// nothing until the next VOICE_SERVER_UPDATE.
func (m *Manager) afterEnd(ctx context.Context, g *guildVoice, err error, rejoins *int, bugRetry *bool, backoff *time.Duration, log *slog.Logger) <-chan time.Time {
	action := gateway.ActionNewSession
	var ce *CloseError
	if errors.As(err, &ce) {
		action = ce.Action()
	}
	if errors.Is(err, ErrClosed) || ctx.Err() != nil {
		return nil
	}
	switch action {
	case gateway.ActionStop:
		log.Info("voice: disconnected by the server; waiting for a new voice server", "err", err)
		return nil
	case gateway.ActionClientBug:
		if *bugRetry {
			log.Error("voice: client-bug close again; not reconnecting", "err", err)
			m.finishWaiters(g, nil, err)
			return nil
		}
		*bugRetry = true
		log.Error("voice: client-bug close; one fresh attempt", "err", err)
		m.rejoin(g, log)
		return nil
	}
	*rejoins++
	if *rejoins > m.cfg.MaxRejoins {
		log.Error("voice: too many fresh sessions; giving up", "err", err)
		m.finishWaiters(g, nil, fmt.Errorf("%w: %w", errGaveUp, err))
		return nil
	}
	if action == gateway.ActionBackoff {
		d := *backoff
		*backoff = min(2**backoff, m.cfg.MaxBackoff)
		log.Warn("voice: backing off before rejoining", "delay", d, "err", err)
		return time.After(d)
	}
	log.Warn("voice: session lost; rejoining", "err", err)
	m.rejoin(g, log)
	return nil
}

// rejoin asks the main gateway for a fresh voice session (Op 4 again),
// which brings a new token.
func (m *Manager) rejoin(g *guildVoice, log *slog.Logger) {
	m.mu.Lock()
	want := g.want
	m.mu.Unlock()
	if want == "" {
		return
	}
	if err := m.voiceStateUpdate(g.id, want); err != nil {
		log.Error("voice: rejoin", "err", err)
	}
}

// voiceStateUpdate sends main-gateway Op 4, turning discordgo's panic on a
// closed gateway WebSocket into an error.
func (m *Manager) voiceStateUpdate(guildID, channelID string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("voice state update: main gateway not open: %v", r)
		}
	}()
	if err := m.gw.ChannelVoiceJoinManual(guildID, channelID, m.cfg.SelfMute, m.cfg.SelfDeaf); err != nil {
		return fmt.Errorf("voice state update: %w", err)
	}
	return nil
}

func (m *Manager) finishWaiters(g *guildVoice, c *Conn, err error) {
	m.mu.Lock()
	ws := g.waiters
	g.waiters = nil
	m.mu.Unlock()
	for _, w := range ws {
		w <- joinResult{conn: c, err: err}
	}
}
