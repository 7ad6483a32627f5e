package realtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
	llmrt "github.com/banterbot/banter/llm/realtime"
)

// ErrClosed is returned by calls on a Bridge that was closed (or whose
// context ended).
var ErrClosed = errors.New("realtime: bridge closed")

// Config configures a Bridge.
type Config struct {
	// Provider is the realtime API (voice.realtime.provider); "" is ProviderOpenAI.
	Provider Provider
	// Gemini is the Live connection of ProviderGemini: BaseURL, APIKey, Model, Voice,
	// ManualActivity (voice.geminiRealtime.serverTurnDetection off), compression. Its
	// Instructions and Handle are set by the bridge (Instructions plus the summary; the last
	// resumption handle).
	Gemini gemini.Config
	// Realtime is the socket: URL (API base or realtime endpoint), APIKey,
	// Model, Dialer (a test CA), Logger and the client's Metrics (which
	// count malformed server events).
	Realtime llmrt.Config
	// Meter counts the usage and cost of every response.done (nil: none), charged to the guild
	// of Start's context and the tally of the reply's.
	Meter *llm.Meter
	// Gate, when set, admits every reply before it is asked for (the spending budgets: a
	// reply refused at the cap fails, nothing is sent); nil admits everything.
	Gate llm.Gate
	// Strategy is voice.realtimeReplyStrategy (required).
	Strategy Strategy
	// Instructions are the persona's instructions for the realtime model.
	Instructions string
	// Voice is voice.openaiRealtime.voice ("marin").
	Voice string
	// ServerTurnDetection is voice.openaiRealtime.serverTurnDetection. Off
	// (the default) sends turn_detection null: banter endpoints locally so
	// the decision engine sees every turn. On asks for server_vad with
	// create_response and interrupt_response false, so the server still
	// never answers a turn the decision engine did not admit.
	ServerTurnDetection bool
	// InputTranscriptionModel, when set, has the server transcribe the
	// forwarded turns (the transcripts land in the model's conversation).
	InputTranscriptionModel string
	// MaxOutputTokens bounds each response; 0 leaves it to the server.
	MaxOutputTokens int
	// SessionMax is how long one realtime session is used before it is
	// rolled over to a fresh one, carrying a summary of recent turns
	// (voice.openaiRealtime.sessionMaxMinutes; OpenAI ends sessions after
	// 60 min). Default 55 min.
	SessionMax time.Duration
	// ConnectAttempts is the attempts of each Open (handshake with
	// back-off inside llm/realtime). Default 3.
	ConnectAttempts int
	// ReconnectBackoff is the pause between failed reconnects; it doubles
	// up to MaxReconnectBackoff. Defaults 500 ms and 30 s.
	ReconnectBackoff, MaxReconnectBackoff time.Duration
	// GiveUpBackoff is how long a voice session's Responder waits before it starts a new
	// provider after one gave up (a close not worth retrying: 1007, an unknown model) or failed
	// to start; it doubles with each give-up in a row, up to MaxGiveUpBackoff, with jitter (a
	// random half of it off), and the count resets when a reply is answered. Replies in the
	// meantime fail at once (ErrBackingOff) without dialling. Defaults 2 s and 5 min.
	GiveUpBackoff, MaxGiveUpBackoff time.Duration
	// CancelTimeout bounds how long Interrupt waits for the cancelled
	// response's response.done before truncating, and how long a reply
	// after a take-back waits for input_audio_buffer.cleared and sends its
	// deletes (flushDeletes). Default 2 s.
	CancelTimeout time.Duration
	// HistoryTurns and HistoryChars bound the summary of recent turns a new
	// session starts with. Defaults 12 turns of at most 300 characters.
	HistoryTurns, HistoryChars int

	Logger  *slog.Logger
	Metrics *Metrics
	// Now is the clock for latencies; nil means time.Now.
	Now func() time.Time
}

// FromConfig maps voice.realtimeReplyStrategy and voice.openaiRealtime onto
// a Config. The caller adds Realtime.URL and Realtime.APIKey (llm.baseUrl,
// OPENAI_API_KEY), Instructions (the persona), Logger and Metrics.
func FromConfig(c *config.Config) (Config, error) {
	s, err := ParseStrategy(c.Voice.RealtimeReplyStrategy)
	if err != nil {
		return Config{}, err
	}
	if c.Voice.Realtime.Provider == config.KindGemini {
		return geminiFromConfig(c, s)
	}
	rt := c.Voice.OpenAIRealtime
	p, err := c.Provider(rt.Provider)
	if err != nil {
		return Config{}, fmt.Errorf("voice.openaiRealtime.provider: %w", err)
	}
	url := p.BaseURL
	if url == "" {
		url = llmrt.DefaultURL
	}
	return Config{
		Realtime:            llmrt.Config{URL: url, APIKey: p.APIKey, Model: rt.Model},
		Strategy:            s,
		Voice:               rt.Voice,
		ServerTurnDetection: rt.ServerTurnDetection,
		SessionMax:          time.Duration(rt.SessionMaxMinutes) * time.Minute,
	}, nil
}

// geminiFromConfig maps voice.geminiRealtime and its provider onto a Config.
func geminiFromConfig(c *config.Config, s Strategy) (Config, error) {
	rt := c.Voice.GeminiRealtime
	name := rt.Provider
	if name == "" {
		name = config.GeminiProvider
	}
	p, err := c.Provider(name)
	if err != nil {
		return Config{}, fmt.Errorf("voice.geminiRealtime.provider: %w", err)
	}
	return Config{
		Provider: ProviderGemini, Strategy: s, Voice: rt.Voice, ServerTurnDetection: rt.ServerTurnDetection,
		Gemini: gemini.Config{BaseURL: p.BaseURL, APIKey: p.APIKey, Model: rt.Model, Voice: rt.Voice,
			ManualActivity: !rt.ServerTurnDetection, CompressionTriggerTokens: rt.CompressionTriggerTokens},
		SessionMax: 24 * time.Hour, // no rollover: goAway and resumption keep the conversation
	}, nil
}

func (c *Config) setDefaults() error {
	if c.Strategy != StrategyNative && c.Strategy != StrategyBrain {
		return fmt.Errorf("realtime: strategy %s: want native or brain", c.Strategy)
	}
	if c.Realtime.URL == "" && c.Provider != ProviderGemini {
		return errors.New("realtime: config: Realtime.URL is required")
	}
	if c.SessionMax <= 0 {
		c.SessionMax = 55 * time.Minute
	}
	if c.ConnectAttempts <= 0 {
		c.ConnectAttempts = 3
	}
	if c.ReconnectBackoff <= 0 {
		c.ReconnectBackoff = 500 * time.Millisecond
	}
	if c.MaxReconnectBackoff <= 0 {
		c.MaxReconnectBackoff = 30 * time.Second
	}
	c.giveUpDefaults()
	if c.CancelTimeout <= 0 {
		c.CancelTimeout = 2 * time.Second
	}
	if c.HistoryTurns <= 0 {
		c.HistoryTurns = 12
	}
	if c.HistoryChars <= 0 {
		c.HistoryChars = 300
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// giveUpDefaults sets the give-up back-off's defaults.
func (c *Config) giveUpDefaults() {
	if c.GiveUpBackoff <= 0 {
		c.GiveUpBackoff = 2 * time.Second
	}
	if c.MaxGiveUpBackoff <= 0 {
		c.MaxGiveUpBackoff = 5 * time.Minute
	}
}

// Bridge owns the realtime socket of one voice session: it connects and
// configures the session, forwards admitted turns (native) or has the model
// voice the brain's text (brain), hands the model's audio to the caller's
// writer (replyTo: the voice session's Playback), cuts a reply (cancel +
// truncate at what was played), reconnects with back-off after a drop and
// rolls over to a fresh session before SessionMax, both times restoring the
// instructions plus a summary of recent turns. The Responder is its only
// user.
//
// Goroutines: a supervisor (owns the socket and its read loop, which runs
// server events). Close stops and waits for it. Replies are served one at a
// time.
type Bridge struct {
	cfg   Config
	guild string // the voice session's, from Start's context: what its responses are charged to
	log   *slog.Logger
	m     *Metrics
	now   func() time.Time
	hist  history
	free  chan []byte // audio delta buffers to reuse (getBuf, putBuf)

	cancel context.CancelFunc
	done   chan struct{} // closed when the bridge stops
	wg     sync.WaitGroup

	turnMu sync.Mutex // serialises turns, and turns with a rollover
	pcmBuf []byte     // guarded by turnMu: one append chunk
	// unfinished (guarded by turnMu): a forward stopped between its first append and its
	// commit, so the input buffer may hold its audio; the next forward clears it first.
	unfinished bool

	mu      sync.Mutex // guards following
	conn    *llmrt.Conn
	connGen uint64
	connCh  chan struct{} // closed while conn != nil
	resp    *response     // the response in progress
	// committed are the user items of the input_audio_buffer.committed since the last
	// response.created: the audio a native turn forwarded (one item, or several when the
	// server's turn detection commits at pauses), taken by the response asked for next.
	committed []string
	last      *response // the latest response asked for: a take-back's (takeBack)
	// takenBack and orphans are what take-backs left for the next reply to delete, in session
	// deletesGen (flushDeletes): responses taken back (their items), and user items committed
	// for no response.
	takenBack  []*response
	orphans    []string
	deletesGen uint64
	// forwarding is the turn whose audio a forward has begun to send, until its response.create
	// is sent: a take-back of it leaves audio appended or committed for no response.
	forwarding string
	// orphaned: such a take-back happened in session deletesGen. The items its commits made may
	// not be announced yet, so the next reply's flushDeletes clears the input buffer and
	// collects them at the input_audio_buffer.cleared that answers its clear (the clearWant-th
	// of the session; cleared is closed then, or when the session drops), which the server
	// sends after the committed events of every earlier commit. clears counts the clears sent
	// in the session, clearsSeen the cleared events received.
	orphaned                      bool
	cleared                       chan struct{}
	clears, clearsSeen, clearWant int
}

// response is one requested response, from response.create to response.done.
type response struct {
	turnID      string
	requestedAt time.Time
	gen         uint64
	id          string
	item        string   // the assistant item
	forwarded   bool     // the turn's audio was forwarded before it (native)
	userItems   []string // the user items of that audio (input_audio_buffer.committed)
	dropped     bool     // taken back after a false end: its answer adds no line to the history
	audioBytes  int
	transcript  string
	deltas      strings.Builder // transcript deltas, for a cancelled response
	status      string          // response.done status; "lost" when the socket dropped
	out         chan []byte     // audio deltas for the reply's writer (replyOnce)
	muted       bool            // interrupted: drop further audio
	interrupted bool            // for the history
	played      uint64          // frames played when interrupted
	done        chan struct{}
	// account is what the response is charged to: the session's guild, the realtime slot and
	// the reply's tally (its turn's cost_usd).
	account llm.Account
}

// itemRef is the assistant audio item of a reply, for a truncation (also
// after its response has finished: the audio is usually still playing).
type itemRef struct {
	id         string
	gen        uint64
	audioBytes int
	transcript string
}

// Start connects (llm/realtime Open: dial, session.update, back-off) and
// starts the Bridge. ctx is the voice session's: the Bridge stops when it
// ends or on Close.
func Start(ctx context.Context, cfg Config) (*Bridge, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	b := &Bridge{cfg: cfg, log: cfg.Logger, m: cfg.Metrics, now: cfg.Now, guild: llm.AccountFrom(ctx).Guild,
		hist: history{max: cfg.HistoryTurns, maxChars: cfg.HistoryChars},
		done: make(chan struct{}), connCh: make(chan struct{}), pcmBuf: make([]byte, 0, appendChunk*2),
		free: make(chan []byte, 64)}
	conn, err := llmrt.Open(ctx, cfg.Realtime, b.session(), cfg.ConnectAttempts)
	if err != nil {
		return nil, fmt.Errorf("realtime: start: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	b.cancel = cancel
	b.setConn(conn, 1)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(b.done)
		for gen := uint64(1); conn != nil; gen++ {
			conn = b.serve(rctx, conn, gen)
		}
	}()
	b.log.Info("realtime_session_started", "strategy", cfg.Strategy.String(), "model", cfg.Realtime.Model)
	return b, nil
}

// Close stops the Bridge: the socket closes, its goroutines are waited for.
// Safe to call more than once.
func (b *Bridge) Close() error {
	b.cancel()
	b.wg.Wait()
	return nil
}

// session is the Session sent on every (re)connect: the instructions plus
// a summary of the conversation so far.
func (b *Bridge) session() llmrt.Session {
	s := llmrt.Session{Instructions: b.cfg.Instructions, Voice: b.cfg.Voice, OutputModalities: []string{"audio"},
		InputTranscriptionModel: b.cfg.InputTranscriptionModel, MaxOutputTokens: b.cfg.MaxOutputTokens}
	if sum := b.hist.summary(); sum != "" {
		if s.Instructions != "" {
			s.Instructions += "\n\n"
		}
		s.Instructions += sum
	}
	if b.cfg.ServerTurnDetection {
		no := false
		s.TurnDetection = &llmrt.TurnDetection{Type: "server_vad", CreateResponse: &no, InterruptResponse: &no}
	}
	return s
}
