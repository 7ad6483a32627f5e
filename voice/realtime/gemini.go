package realtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
)

// geminiBridge is the provider for the Gemini Live API (llm/gemini): one Live connection at a
// time for one voice session. A native turn's audio goes as 16 kHz realtimeInput.audio between
// activityStart and activityEnd (banter's endpointing leads) or, with the server's activity
// detection, followed by audioStreamEnd; a brain reply is a text turn asking the model to
// voice it. The model's 24 kHz audio parts go to the reply's writer until turnComplete; a cut
// mutes the rest and interrupts the model with an empty activity. goAway (or a drop) opens a
// new connection with the last session resumption handle, so the server keeps the
// conversation; a close that names no session left (1008 session not found) starts a fresh one
// from banter's summary; a close that retrying cannot mend (1007, an unknown model) stops.
//
// Goroutines: a supervisor (owns the connection and its read loop). Close stops and waits for
// it. Replies are served one at a time.
type geminiBridge struct {
	cfg  Config
	log  *slog.Logger
	m    *Metrics
	now  func() time.Time
	hist history
	away chan struct{} // goAway seen (buffered 1)
	// fresh is signalled when a take-back needs a fresh session (buffered 1).
	fresh chan struct{}

	cancel context.CancelFunc
	done   chan struct{} // closed when the bridge stops
	wg     sync.WaitGroup

	turnMu sync.Mutex // serialises replies, and replies with a resumption
	pcmBuf []byte     // guarded by turnMu: one audio chunk

	mu      sync.Mutex // guards following
	conn    *gemini.Conn
	connCh  chan struct{} // closed while conn != nil
	handle  string        // the last resumption handle
	context string        // the last turn context sent in this session (sendContext)
	resp    *gReply       // the reply in progress
	last    *gReply       // the latest reply asked for: a take-back's (takeBack)
	// freshPending: a take-back wants a session without the turn; replies wait (ready) until
	// one opened without a handle is up, and freshDone is closed then.
	freshPending bool
	freshDone    chan struct{}

	guild string // the voice session's: what its replies are charged to
}

// gReply is one reply, from its request to turnComplete.
type gReply struct {
	turnID      string
	requestedAt time.Time
	out         chan []byte // model audio for the writer
	done        chan struct{}
	// Guarded by the bridge's mu:
	transcript  strings.Builder
	heard       strings.Builder // the input transcription: what Gemini heard of the turn
	audioBytes  int
	playedBytes int  // set when cut
	muted       bool // cut by us: later audio is dropped
	interrupted bool // the server said interrupted
	dropped     bool // taken back after a false end: it adds no line to the history
	lost        bool // the connection dropped first
	// usage is the turn's last usageMetadata (nil: none yet), metered at turnComplete and
	// charged to account.
	usage   *gemini.Usage
	account llm.Account
}

// gemini16k is the Live API's native input format.
var gemini16k = pcm.Format{Rate: 16000, Channels: 1}

// geminiChunk is 100 ms of 16 kHz audio, the size the API guides recommend (50-100 ms).
const geminiChunk = 1600

// startGemini connects and starts the bridge; ctx is the voice session's.
func startGemini(ctx context.Context, cfg Config) (*geminiBridge, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	g := &geminiBridge{cfg: cfg, log: cfg.Logger.With("provider", string(ProviderGemini)), m: cfg.Metrics, now: cfg.Now,
		guild: llm.AccountFrom(ctx).Guild,
		hist:  history{max: cfg.HistoryTurns, maxChars: cfg.HistoryChars}, away: make(chan struct{}, 1), fresh: make(chan struct{}, 1),
		done: make(chan struct{}), connCh: make(chan struct{}), pcmBuf: make([]byte, 0, 2*geminiChunk)}
	conn, fresh, err := g.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("realtime: start gemini: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	g.cancel = cancel
	g.setConn(conn, fresh)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer close(g.done)
		g.supervise(rctx, conn)
	}()
	g.log.Info("realtime_session_started", "strategy", cfg.Strategy.String(), "model", cfg.Gemini.Model)
	return g, nil
}

// open dials with the last handle (the server keeps the conversation) or, without one, the
// instructions plus banter's summary of the conversation so far. While a take-back is pending
// it dials without the handle, and fresh reports so (setConn).
func (g *geminiBridge) open(ctx context.Context) (conn *gemini.Conn, fresh bool, err error) {
	c := g.cfg.Gemini
	g.mu.Lock()
	c.Handle = g.handle
	if fresh = g.freshPending; fresh { // a take-back: the old conversation still holds the turn
		c.Handle, g.handle = "", ""
	}
	if c.Handle == "" {
		g.context = "" // a new session holds no turn context yet
	}
	g.mu.Unlock()
	c.Instructions = g.cfg.Instructions
	if sum := g.hist.summary(); sum != "" && c.Handle == "" {
		c.Instructions = strings.TrimSpace(c.Instructions + "\n\n" + sum)
	}
	conn, err = gemini.Open(ctx, c)
	if err != nil {
		return nil, false, fmt.Errorf("realtime: open gemini: %w", err)
	}
	return conn, fresh, nil
}

// Close stops the bridge: the socket closes, its goroutines are waited for.
func (g *geminiBridge) Close() error {
	g.cancel()
	g.wg.Wait()
	return nil
}

func (g *geminiBridge) stopped() <-chan struct{} { return g.done }

func (g *geminiBridge) inputFormat() pcm.Format { return gemini16k }

func (g *geminiBridge) remember(turnID, speaker, text string) {
	g.hist.add(turnID, speaker, text, false)
}

// takeBack implements provider. The Live API cannot delete a turn from its conversation, so the
// next reply waits for a fresh session (no resumption handle) that starts from banter's summary,
// which no longer has the turn nor its answer; it is opened at once, while the member is still
// talking. The reply being taken back is over (the session calls takeBack after it returned);
// its turnComplete, if still to come, adds no line.
func (g *geminiBridge) takeBack(turnID string) {
	g.mu.Lock()
	g.hist.forget(turnID) // under g.mu: finish adds the answer's line under it
	r := g.last
	if r == nil || r.turnID != turnID {
		g.mu.Unlock()
		return // the turn was not answered (nothing of it reached the model)
	}
	r.dropped = true
	if !g.freshPending {
		g.freshPending, g.freshDone = true, make(chan struct{})
	}
	g.mu.Unlock()
	g.log.Info("realtime_taken_back", "turn_id", turnID)
	select {
	case g.fresh <- struct{}{}:
	default:
	}
}

func (g *geminiBridge) skipped(ctx context.Context, t *Turn, reason string) {
	g.m.replySkipped(g.cfg.Strategy)
	attrs := append(turnAttrs(g.cfg.Strategy, t), slog.String("skip_reason", reason))
	g.log.LogAttrs(ctx, slog.LevelInfo, "realtime_reply_skipped", attrs...)
}

// supervise runs connections until ctx ends or a close is not worth retrying.
func (g *geminiBridge) supervise(ctx context.Context, conn *gemini.Conn) {
	for conn != nil {
		readErr := make(chan error, 1)
		go func(c *gemini.Conn) { readErr <- g.readLoop(c) }(conn) // waited for on every path below
		conn = g.serve(ctx, conn, readErr)
	}
}

// serve watches the connection conn, whose read loop reports to readErr, until it is replaced
// (the next connection, with no read loop yet) or the bridge stops (nil).
func (g *geminiBridge) serve(ctx context.Context, conn *gemini.Conn, readErr chan error) *gemini.Conn {
	for {
		select {
		case <-ctx.Done():
			_ = conn.Close()
			<-readErr
			g.dropConn()
			return nil
		case err := <-readErr:
			_ = conn.Close()
			g.dropConn()
			if ctx.Err() != nil {
				return nil
			}
			return g.afterClose(ctx, err)
		case <-g.away:
			return g.resume(ctx, conn, readErr)
		case <-g.fresh:
			g.mu.Lock()
			pending := g.freshPending
			g.mu.Unlock()
			// A take-back: closed at once (a reply still finishing its turn there, the cut one,
			// was taken back: dropped without counting as lost) and reopened without a handle.
			// None pending: a connection opened since is fresh already, and conn is it.
			if pending {
				return g.replace(ctx, conn, readErr, "false_end")
			}
		}
	}
}

// afterClose classifies a closed connection and reconnects unless the close says not to.
func (g *geminiBridge) afterClose(ctx context.Context, err error) *gemini.Conn {
	action, code := gemini.ActionResume, 1006
	var ce *gemini.CloseError
	if errors.As(err, &ce) {
		action, code = ce.Action(), ce.Code
	}
	g.log.Warn("realtime_socket_dropped", "err", err, "close_code", code, "action", action.String())
	switch action {
	case gemini.ActionGiveUp:
		g.log.Error("realtime_gemini_gave_up", "close_code", code, "err", err)
		return nil
	case gemini.ActionRestart:
		g.mu.Lock()
		g.handle = ""
		g.mu.Unlock()
	}
	return g.reconnect(ctx, "drop")
}

// resume answers goAway: once the reply in progress has ended (new replies wait), the old
// connection is closed (the API refuses a resumption while it is open) and a new one opened
// with the last handle.
func (g *geminiBridge) resume(ctx context.Context, conn *gemini.Conn, readErr <-chan error) *gemini.Conn {
	g.turnMu.Lock()
	defer g.turnMu.Unlock()
	g.mu.Lock()
	r := g.resp
	g.mu.Unlock()
	if r != nil {
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
	return g.replace(ctx, conn, readErr, "go_away")
}

// replace closes conn (its read loop reports to readErr), forgets it and opens the next
// connection (reconnect, logged and counted with cause); nil when the bridge stops first. While
// a take-back is pending the next one opens without a handle (open).
func (g *geminiBridge) replace(ctx context.Context, conn *gemini.Conn, readErr <-chan error, cause string) *gemini.Conn {
	_ = conn.Close()
	<-readErr
	g.dropConn()
	if ctx.Err() != nil {
		return nil
	}
	return g.reconnect(ctx, cause)
}

// reconnect opens a connection with back-off until it succeeds, ctx ends, or a close says
// retrying is useless.
func (g *geminiBridge) reconnect(ctx context.Context, cause string) *gemini.Conn {
	delay := g.cfg.ReconnectBackoff
	for {
		c, fresh, err := g.open(ctx)
		if err == nil {
			g.mu.Lock()
			resumed := g.handle != ""
			g.mu.Unlock()
			g.setConn(c, fresh)
			g.m.reconnect(cause)
			g.log.Info("realtime_reconnected", "cause", cause, "resumed", resumed)
			return c
		}
		if ctx.Err() != nil {
			return nil
		}
		var ce *gemini.CloseError
		if errors.As(err, &ce) && ce.Action() == gemini.ActionGiveUp {
			g.log.Error("realtime_gemini_gave_up", "close_code", ce.Code, "err", err)
			return nil
		}
		if errors.As(err, &ce) && ce.Action() == gemini.ActionRestart {
			g.mu.Lock()
			g.handle = ""
			g.mu.Unlock()
		}
		g.log.Warn("realtime_reconnect_failed", "err", err, "retry_in", delay)
		if !backoff(ctx, &delay, g.cfg.MaxReconnectBackoff) {
			return nil
		}
	}
}

// setConn makes c the connection; fresh (opened without a handle while a take-back was pending)
// lets the replies waiting for it go.
func (g *geminiBridge) setConn(c *gemini.Conn, fresh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn == nil {
		close(g.connCh)
	}
	g.conn = c
	if fresh && g.freshPending {
		g.freshPending = false
		close(g.freshDone)
	}
}

// dropConn forgets the connection: the reply in progress is lost.
func (g *geminiBridge) dropConn() {
	g.mu.Lock()
	if g.conn == nil {
		g.mu.Unlock()
		return
	}
	g.conn, g.connCh = nil, make(chan struct{})
	r := g.resp
	g.resp = nil
	var dropped bool
	var usage *gemini.Usage
	if r != nil {
		r.lost = true
		dropped, usage = r.dropped, r.usage
	}
	g.mu.Unlock()
	if r == nil {
		return
	}
	switch {
	case dropped: // taken back: not a failure; what the model used so far is still billed
		if usage != nil {
			g.cfg.Meter.Record(context.Background(), r.account, g.cfg.Gemini.Model, meteredUsage(*usage))
		}
	default:
		g.m.responseFailed()
		g.log.Warn("realtime_reply_lost", "turn_id", r.turnID)
	}
	close(r.done)
}
