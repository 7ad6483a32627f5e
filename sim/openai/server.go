package openaisim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a running (or mountable) OpenAI API simulator. It is safe for
// concurrent use; rules may be added while requests are served.
type Server struct {
	log         *slog.Logger
	models      []string
	apiKey      string
	latency     Latency
	sleep       func(ctx context.Context, d time.Duration) error
	realSleep   bool // sleep is sleepCtx: pacers may use deadlines
	itemCreated bool
	now         func() time.Time
	maxUpload   int64
	check       Checker     // WithConformance; nil: off
	report      func(error) // gets check's errors

	// The Gemini Live face (gemini*.go).
	geminiKey           string        // WithGeminiAPIKey; "": any non-empty key
	gmModels            []string      // models setup may name (without "models/")
	gmLimit             time.Duration // connection limit (0: none)
	gmGoAwayLead        time.Duration // goAway this long before the limit
	gmTextFrames        bool          // server messages in text frames (default binary)
	gmSessionLimit      time.Duration // a session without compression, audio only (0: none)
	gmVideoSessionLimit time.Duration // … once video was sent

	mux *http.ServeMux

	// Set by Start; nil when used as a plain http.Handler.
	ln      net.Listener
	srv     *http.Server
	baseURL string
	ctx     context.Context
	cancel  context.CancelFunc
	serveWG sync.WaitGroup // the http.Server.Serve goroutine
	connWG  sync.WaitGroup // realtime sessions
	reqWG   sync.WaitGroup // handlers in flight (Add under mu while !closed)

	mu          sync.Mutex // guards following
	rules       []*compiledRule
	transcripts []string
	heard       heardSpeech // the audio that last took a queued transcript
	requests    []Recorded
	rtEvents    []RealtimeEvent
	rtConns     map[*rtSession]struct{}
	gmConns     map[*gmConn]struct{}
	gmEvents    []RealtimeEvent
	gmHandles   map[string]gmHandle // session resumption handle → the conversation and its session
	gmSkew      time.Duration       // GeminiAdvance: the Gemini face's clock ahead of now
	gmTick      chan struct{}       // closed (and replaced) when gmSkew or a session's limit changes
	truncations []Truncation
	stored      map[string]*storedResponse // by response id, for previous_response_id
	ids         map[string]int
	started     int // requests (and realtime sockets) that have arrived
	inflight    map[*Recorded]*InFlight
	closed      bool
}

// Option configures a Server.
type Option func(*Server) error

// WithLogger sets the logger (default: discard). The simulator logs per
// request at debug level, never per audio chunk.
func WithLogger(l *slog.Logger) Option {
	return func(s *Server) error { s.log = l; return nil }
}

// WithRules adds scripted rules, in order.
func WithRules(rules ...Rule) Option {
	return func(s *Server) error {
		for _, r := range rules {
			if err := s.AddRule(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithLatency sets the latency injected into replies whose rule has none
// (including default replies).
func WithLatency(l Latency) Option {
	return func(s *Server) error { s.latency = l; return nil }
}

// WithModels replaces the model list served by GET /v1/models. Requests for
// other models are still answered (OpenAI-compatible servers vary).
func WithModels(ids ...string) Option {
	return func(s *Server) error { s.models = append([]string(nil), ids...); return nil }
}

// WithAPIKey makes the simulator demand "Authorization: Bearer key" (401
// invalid_api_key otherwise). By default any key is accepted.
func WithAPIKey(key string) Option {
	return func(s *Server) error { s.apiKey = key; return nil }
}

// WithMaxUpload sets the transcription upload limit (default 25 MB, as on
// OpenAI); larger files get a 413.
func WithMaxUpload(n int64) Option {
	return func(s *Server) error { s.maxUpload = n; return nil }
}

// WithItemCreatedEvents makes realtime sessions also send the beta-era
// conversation.item.created before each GA conversation.item.added, for
// clients written against the beta protocol.
func WithItemCreatedEvents() Option {
	return func(s *Server) error { s.itemCreated = true; return nil }
}

// WithSleep replaces how injected latency is waited for (default: a timer
// that also ends when ctx is done). Tests of timing logic can record or
// compress delays with it; recorded Injected values are the requested ones.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(s *Server) error { s.sleep, s.realSleep = sleep, false; return nil }
}

// WithClock sets the clock used for timestamps (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(s *Server) error { s.now = now; return nil }
}

// Checker checks requests against the real API's specification (sim/conform's
// OpenAI checker is one): an HTTP request (method, path as sent with /v1, the
// JSON body or nil) and a Realtime client event.
type Checker interface {
	Request(method, path string, body []byte) error
	RealtimeClientEvent(raw []byte) error
}

// WithConformance checks every request the simulator receives under /v1
// (but the realtime handshake) and every Realtime client event with check,
// before it is served, and hands each violation to report (from the
// request's goroutine; it must be safe for concurrent use). Requests are
// served either way; the test that set report decides. A multipart upload
// is checked for its operation only. openaitest.Serve turns it on with the
// embedded official spec and fails the test on any violation.
func WithConformance(check Checker, report func(error)) Option {
	return func(s *Server) error { s.check, s.report = check, report; return nil }
}

// WithoutConformance turns the check of WithConformance off again (for a
// test that sends off-spec requests on purpose).
func WithoutConformance() Option {
	return func(s *Server) error { s.check, s.report = nil, nil; return nil }
}

// conformRequest runs the conformance check on an HTTP request, putting
// its body back for the handler.
func (s *Server) conformRequest(r *http.Request) {
	if s.check == nil || !strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/v1/realtime" {
		return
	}
	var body []byte
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" && r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, 16<<20+1))
		if err == nil {
			body = b
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	}
	if err := s.check.Request(r.Method, r.URL.Path, body); err != nil && s.report != nil {
		s.report(err)
	}
}

// conformEvent runs the conformance check on a Realtime client event.
func (s *Server) conformEvent(raw []byte) {
	if s.check == nil {
		return
	}
	if err := s.check.RealtimeClientEvent(raw); err != nil && s.report != nil {
		s.report(err)
	}
}

// DefaultModels returns what GET /v1/models lists unless WithModels is given.
func DefaultModels() []string {
	return []string{
		"gpt-5-mini", "gpt-5-nano", "gpt-4.1-mini", "gpt-4o-mini",
		"gpt-4o-transcribe", "gpt-4o-mini-transcribe", "whisper-1",
		"gpt-4o-mini-tts", "tts-1", "gpt-realtime", "gpt-realtime-mini",
	}
}

// NewServer builds a simulator that is not listening; it is an http.Handler
// (mount it under any server) until Start is called.
func NewServer(opts ...Option) (*Server, error) {
	s := &Server{
		log:                 slog.New(slog.DiscardHandler),
		models:              DefaultModels(),
		sleep:               sleepCtx,
		realSleep:           true,
		now:                 time.Now,
		maxUpload:           25 << 20,
		rtConns:             make(map[*rtSession]struct{}),
		gmConns:             make(map[*gmConn]struct{}),
		gmHandles:           make(map[string]gmHandle),
		gmTick:              make(chan struct{}),
		gmSessionLimit:      DefaultGeminiSessionLimit,
		gmVideoSessionLimit: DefaultGeminiVideoSessionLimit,
		gmModels:            DefaultGeminiModels(),
		gmLimit:             10 * time.Minute,
		gmGoAwayLead:        10 * time.Second,
		ids:                 make(map[string]int),
		stored:              make(map[string]*storedResponse),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, o := range opts {
		if err := o(s); err != nil {
			s.cancel()
			return nil, err
		}
	}
	s.routes()
	return s, nil
}

// Start builds a simulator and serves it on addr (e.g. "127.0.0.1:0") until
// Close.
func Start(addr string, opts ...Option) (*Server, error) {
	s, err := NewServer(opts...)
	if err != nil {
		return nil, err
	}
	if err := s.listen(addr); err != nil {
		s.cancel()
		return nil, err
	}
	return s, nil
}

func (s *Server) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("openaisim: listen %s: %w", addr, err)
	}
	s.ln = ln
	s.baseURL = "http://" + ln.Addr().String() + "/v1"
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.serveWG.Add(1)
	go func() {
		defer s.serveWG.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("openaisim: serve", "err", err)
		}
	}()
	return nil
}

// Close stops the listener, ends hanging (Timeout) requests and realtime
// sockets, and waits for every goroutine the server started.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*rtSession, 0, len(s.rtConns))
	for c := range s.rtConns {
		conns = append(conns, c)
	}
	gconns := make([]*gmConn, 0, len(s.gmConns))
	for c := range s.gmConns {
		gconns = append(gconns, c)
	}
	s.mu.Unlock()

	s.cancel()
	for _, c := range conns {
		c.abort()
	}
	for _, c := range gconns {
		c.abort()
	}
	var err error
	if s.srv != nil {
		err = s.srv.Close()
		s.serveWG.Wait()
	}
	s.connWG.Wait()
	s.reqWG.Wait()
	if err != nil {
		return fmt.Errorf("openaisim: close: %w", err)
	}
	return nil
}

// BaseURL is the API base, e.g. "http://127.0.0.1:PORT/v1", usable as
// openai-go's option.WithBaseURL. Empty if the server is not listening.
func (s *Server) BaseURL() string { return s.baseURL }

// RealtimeURL is the realtime WebSocket endpoint, e.g.
// "ws://127.0.0.1:PORT/v1/realtime" (append ?model=...).
func (s *Server) RealtimeURL() string {
	if s.baseURL == "" {
		return ""
	}
	return "ws" + strings.TrimPrefix(s.baseURL, "http") + "/realtime"
}

// Addr is the listening address ("127.0.0.1:PORT").
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// AddRule appends a rule. It fails if a pattern does not compile.
func (s *Server) AddRule(r Rule) error {
	c, err := compileRule(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.rules = append(s.rules, c)
	s.mu.Unlock()
	return nil
}

// ResetRules removes every rule and queued transcript.
func (s *Server) ResetRules() {
	s.mu.Lock()
	s.rules = nil
	s.transcripts, s.heard = nil, heardSpeech{}
	s.mu.Unlock()
}

// ClearTranscripts drops the queued transcripts that no transcription request has taken yet and
// returns them (e.g. an utterance the client never transcribed, whose transcript must not go to
// the next one).
func (s *Server) ClearTranscripts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.transcripts
	s.transcripts, s.heard = nil, heardSpeech{}
	return t
}

// QueueTranscripts queues transcripts that the next transcription requests
// (REST or realtime input transcription) return, in order, before any rule
// is consulted.
func (s *Server) QueueTranscripts(texts ...string) {
	s.mu.Lock()
	s.transcripts = append(s.transcripts, texts...)
	s.mu.Unlock()
}

// heardSpeech is the audio (a WAV upload's samples, or a transcription session's commit) that
// last took a queued transcript.
type heardSpeech struct {
	pcm     []byte
	text    string
	session string // or the realtime transcription session whose commit took it
}

// continuedBy reports whether pcm is that audio continued: it begins with every sample of it
// and has more.
func (h heardSpeech) continuedBy(pcm []byte) bool {
	return len(h.pcm) > 0 && len(pcm) > len(h.pcm) && bytes.HasPrefix(pcm, h.pcm)
}

// resolve picks the outcome for a request and consumes one use of the rule;
// a rule's Respond function runs here, outside the lock.
func (s *Server) resolve(in *matchInput) outcome {
	o := s.pick(in)
	if o.respond != nil {
		o.reply = o.respond(Request{Endpoint: in.endpoint, Model: in.model, LastUser: in.lastUser,
			Prompt: in.prompt, Tools: in.tools, Audio: in.audio, AudioOffset: in.audioOffset})
	}
	return o
}

func (s *Server) pick(in *matchInput) outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.endpoint == EndpointRealtimeTranscription && in.session != "" && s.heard.session == in.session {
		// A later commit of the transcription session whose first commit took a queued
		// transcript: that transcript was the whole of what the member said.
		return outcome{rule: ruleContinued, latency: s.latency}
	}
	if (in.endpoint == EndpointTranscriptions || in.endpoint == EndpointRealtimeTranscription || in.endpoint == EndpointGeminiTranscription) && len(s.transcripts) > 0 {
		t := s.transcripts[0]
		s.transcripts = s.transcripts[1:]
		s.heard = heardSpeech{pcm: bytes.Clone(in.pcm), text: t, session: in.session}
		return outcome{rule: "queued transcript", reply: Reply{Transcript: t}, latency: s.latency}
	}
	if (in.endpoint == EndpointTranscriptions || in.endpoint == EndpointGeminiTranscription) && s.heard.continuedBy(in.pcm) {
		// The same speech, longer (a client transcribed the words so far at a pause, then the
		// whole utterance): heard the same way, as the real model would.
		s.heard.pcm = bytes.Clone(in.pcm)
		return outcome{rule: "queued transcript", reply: Reply{Transcript: s.heard.text}, latency: s.latency}
	}
	for _, r := range s.rules {
		if r.matches(in) {
			r.used++
			o := outcome{rule: r.Name, reply: r.Reply, latency: r.Latency, fault: r.Fault, respond: r.Respond}
			if o.rule == "" {
				o.rule = "unnamed"
			}
			if o.latency.IsZero() {
				o.latency = s.latency
			}
			return o
		}
	}
	return outcome{latency: s.latency}
}

// newID returns a deterministic, unique id with the given prefix, e.g.
// "resp_sim000001".
func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	s.ids[prefix]++
	n := s.ids[prefix]
	s.mu.Unlock()
	return fmt.Sprintf("%s_sim%06d", prefix, n)
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// wait sleeps d (if positive) and adds it to *acc.
func (s *Server) wait(ctx context.Context, d time.Duration, acc *time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	*acc += d
	return s.sleep(ctx, d)
}

// drain reads and discards a request body so keep-alive connections survive.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 1<<20)) }
