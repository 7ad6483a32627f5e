package realtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/decision"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/internal/logbuf"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
	llmrt "github.com/banterbot/banter/llm/realtime"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/voice"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	testGuild   = "1300000000000000001"
	testChannel = "1300000000000000003"
	testBot     = "1300000000000000100"
	testHuman   = "1300000000000000200"
)

// loadSpeech reads a 16 kHz mono WAV fixture and returns it as 48 kHz
// stereo, what a Discord member sends.
func loadSpeech(t testing.TB, name string) []int16 {
	t.Helper()
	return loadSpeechAs(t, name, pcm.Discord())
}

// loadSpeechAs reads a WAV fixture and returns it in format to.
func loadSpeechAs(t testing.TB, name string, to pcm.Format) []int16 {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	s, f, err := wav.Decode(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := resample.New(f, to)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int16, r.MaxOut(len(s))+r.MaxOut(f.Rate/5))
	n, err := r.Process(out, s)
	if err != nil {
		t.Fatal(err)
	}
	tail := make([]int16, f.Rate/5) // 200 ms of silence flushes the filter
	m, err := r.Process(out[n:], tail)
	if err != nil {
		t.Fatal(err)
	}
	return out[:n+m]
}

// harness is a thin voice session for the end-to-end tests: the bot's own
// discord/voice Conn on the voice simulator, one audio.Listener per speaker
// (24 kHz mono, as the realtime API wants), transcription through llm
// against the OpenAI simulator, voice Stage A from decision, and the
// Responder under test answering each decided turn into a voice.Playback on
// the Conn, as the voice session does (Begin, Respond, End).
type harness struct {
	t         *testing.T
	vs        *voicesim.Server
	oa        *openaisim.Server
	voice     *dvoice.Conn
	llm       *llm.Client
	engine    *decision.VoiceEngine
	member    *voicesim.Member
	logs      *logbuf.Buffer
	reg       *prometheus.Registry
	strategy  Strategy
	responder *Responder
	playback  *voice.Playback
	sent      *countingSender // the Playback's sender: frames that went out

	replies     chan replyOutcome
	replyMu     sync.Mutex
	replyCancel context.CancelFunc

	utterances chan utterance
	decisions  chan decision.Decision
	turnSeq    atomic.Int64
	wg         sync.WaitGroup
	cancel     context.CancelFunc
}

type utterance struct {
	userID string
	audio  []int16 // 24 kHz mono
	at     time.Time
}

// replyOutcome is what Responder.Respond returned for a turn.
type replyOutcome struct {
	res    voice.Result
	err    error
	played time.Duration
}

type harnessOptions struct {
	strategy  Strategy
	eagerness int
	rules     []openaisim.Rule
	bridge    func(*Config)
	sim       []openaisim.Option // more simulator options (the Gemini face's)
	// gemini runs the session on the Gemini Live API (the simulator's Gemini face) instead
	// of OpenAI's realtime API.
	gemini bool
}

// countingSender is the Conn as the Playback's voice.Sender, counting the
// frames it accepted and the talk spurts ended.
type countingSender struct {
	voice.Sender
	frames, stops atomic.Int64
}

func (c *countingSender) SendOpus(ctx context.Context, opus []byte) error {
	err := c.Sender.SendOpus(ctx, opus)
	if err == nil {
		c.frames.Add(1)
	}
	return err
}

func (c *countingSender) StopSpeaking(ctx context.Context) error {
	c.stops.Add(1)
	return c.Sender.StopSpeaking(ctx)
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, logs: newTestLog(), reg: prometheus.NewRegistry(), strategy: o.strategy,
		utterances: make(chan utterance, 8), decisions: make(chan decision.Decision, 8),
		replies: make(chan replyOutcome, 8)}
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.vs = voicetest.Serve(t)
	h.oa = openaitest.Serve(t, append([]openaisim.Option{openaisim.WithRules(o.rules...)}, o.sim...)...)

	// The session's context charges its model calls to its guild, as the voice session's does.
	ctx, cancel := context.WithCancel(llm.WithAccount(context.Background(), llm.Account{Guild: testGuild}))
	h.cancel = cancel
	t.Cleanup(h.close)

	sess := voicesim.Session{GuildID: testGuild, ChannelID: testChannel, UserID: testBot,
		SessionID: "session-" + t.Name(), Token: "token-" + t.Name()}
	if err := h.vs.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(h.vs.CACertPEM())
	dctx, dcancel := context.WithTimeout(ctx, 60*time.Second)
	defer dcancel()
	vc, err := dvoice.Dial(dctx, dvoice.Config{Endpoint: h.vs.Endpoint(), GuildID: testGuild, ChannelID: testChannel,
		UserID: testBot, SessionID: sess.SessionID, Token: sess.Token, TLSConfig: &tls.Config{RootCAs: pool},
		Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	h.voice = vc
	h.member, err = h.vs.JoinMember(dctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman})
	if err != nil {
		t.Fatal(err)
	}

	h.llm, err = llm.New(llm.Options{BaseURL: h.oa.BaseURL(), APIKey: "sk-test", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	p := decision.DefaultVoicePolicy("banter")
	p.ReplyEagerness = o.eagerness
	h.engine = decision.NewVoiceEngine(p, decision.EngineOptions{Logger: logger})

	cfg := Config{
		Realtime:         llmrt.Config{URL: h.oa.BaseURL(), APIKey: "sk-test", Model: "gpt-realtime", Logger: logger, Metrics: llmrt.NewMetrics(h.reg)},
		Strategy:         o.strategy,
		Instructions:     "You are banter, a friendly voice in a Discord call.",
		Voice:            "marin",
		ReconnectBackoff: 20 * time.Millisecond,
		Logger:           logger,
	}
	if o.gemini {
		cfg.Metrics = NewMetricsFor(h.reg, ProviderGemini)
	} else {
		cfg.Metrics = NewMetrics(h.reg)
	}
	if o.gemini {
		cfg.Provider = ProviderGemini
		cfg.Gemini = gemini.Config{BaseURL: "http" + strings.TrimPrefix(h.oa.GeminiURL(), "ws"), APIKey: "gk-test",
			Model: "gemini-3.8-live", Voice: "Kore", ManualActivity: true}
	}
	if o.bridge != nil {
		o.bridge(&cfg)
	}
	h.sent = &countingSender{Sender: vc}
	if h.playback, err = voice.NewPlayback(h.sent, pcm.Mono24k(), nil, nil); err != nil {
		t.Fatal(err)
	}
	h.responder, err = NewResponder(ctx, ResponderOptions{Config: cfg, Gen: h.llm, Model: "gpt-5-mini"},
		voice.SessionInfo{GuildID: testGuild, ChannelID: testChannel})
	if err != nil {
		t.Fatal(err)
	}

	h.wg.Add(2)
	go h.listen(ctx)
	go h.turns(ctx)
	return h
}

func (h *harness) close() {
	h.cancel()
	h.wg.Wait()
	if h.responder != nil {
		h.responder.Close()
	}
	if h.voice != nil {
		h.voice.Close()
	}
	if h.member != nil {
		h.member.Leave()
	}
}

// listen runs one Listener per speaker stream of the bot's connection.
func (h *harness) listen(ctx context.Context) {
	defer h.wg.Done()
	for {
		select {
		case s, ok := <-h.voice.Streams():
			if !ok {
				return
			}
			h.wg.Add(1)
			go h.speaker(ctx, s)
		case <-ctx.Done():
			return
		}
	}
}

func (h *harness) speaker(ctx context.Context, s *dvoice.Stream) {
	defer h.wg.Done()
	cfg := audio.ListenerConfig{Format: pcm.Mono24k(), DirectDecode: true, VAD: vad.Config{EndSilence: 400 * time.Millisecond}}
	l, err := audio.NewListener(cfg, func(ev vad.Event) {
		if ev.Kind != vad.EventEnd || len(ev.Audio) == 0 {
			return
		}
		u := utterance{userID: s.UserID, audio: append([]int16(nil), ev.Audio...), at: time.Now()}
		select {
		case h.utterances <- u:
		default:
		}
	}, nil)
	if err != nil {
		h.t.Error(err)
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case f, ok := <-s.Frames():
			if !ok {
				l.Flush()
				return
			}
			l.Push(jitter.Packet{SSRC: f.SSRC, Seq: f.Sequence, Timestamp: f.Timestamp, Payload: f.Opus})
		case <-tick.C:
			l.Tick()
		case <-ctx.Done():
			return
		}
	}
}

// turns transcribes each utterance, runs Stage A and hands the turn to the
// Responder, one at a time.
func (h *harness) turns(ctx context.Context) {
	defer h.wg.Done()
	for {
		select {
		case u := <-h.utterances:
			h.turn(ctx, u)
		case <-ctx.Done():
			return
		}
	}
}

func (h *harness) turn(ctx context.Context, u utterance) {
	tr, err := h.llm.Transcribe(ctx, "gpt-4o-transcribe", wav.Encode(pcm.Mono24k(), u.audio), llm.TranscribeOptions{})
	if err != nil {
		if ctx.Err() == nil {
			h.t.Errorf("transcribe: %v", err)
		}
		return
	}
	vt := &decision.VoiceTurn{ID: fmt.Sprintf("utt-%d", h.turnSeq.Add(1)), ChannelID: testChannel, SpeakerID: u.userID,
		SpeakerName: "Alice", Transcript: tr.Text, Duration: pcm.Mono24k().Duration(len(u.audio)), At: u.at,
		Participants: []decision.Participant{{ID: testHuman, Name: "Alice"}}}
	d := h.engine.Decide(ctx, vt)
	select {
	case h.decisions <- d:
	default:
	}
	h.respond(ctx, vt, u, d)
}

// respond plays the session's part for a decided turn: a Reply on the
// Playback, run by the Responder, cancellable with interrupt. Unlike the
// session it hands over denied turns too: the Responder's own gate must keep
// them from the model.
func (h *harness) respond(ctx context.Context, vt *decision.VoiceTurn, u utterance, d decision.Decision) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.replyMu.Lock()
	h.replyCancel = cancel
	h.replyMu.Unlock()
	vturn := &voice.Turn{ID: vt.ID, GuildID: testGuild, ChannelID: testChannel, SpeakerID: u.userID, SpeakerName: "Alice",
		Transcript: vt.Transcript, Audio: u.audio, Format: pcm.Mono24k(), SpeechEnd: u.at}
	r := &voice.Reply{Turn: vturn, Decision: d, Out: h.playback, Mark: func(voice.Phase, time.Time) {},
		Instructions: "You are banter in a voice call. " + decision.SkipInstruction,
		Messages:     []llm.Message{{Role: llm.RoleUser, Content: "Alice: " + vt.Transcript}}}
	h.playback.Begin(nil)
	res, err := h.responder.Respond(rctx, r)
	played := h.playback.Played()
	ectx, ecancel := context.WithTimeout(ctx, 10*time.Second)
	h.playback.End(ectx, err == nil)
	ecancel()
	h.replies <- replyOutcome{res: res, err: err, played: played}
}

// interrupt cancels the reply in progress (the session's barge-in).
func (h *harness) interrupt() {
	h.replyMu.Lock()
	defer h.replyMu.Unlock()
	if h.replyCancel != nil {
		h.replyCancel()
	}
}

// reply waits for the Responder's outcome of the next turn.
func (h *harness) reply() replyOutcome {
	h.t.Helper()
	select {
	case o := <-h.replies:
		return o
	case <-time.After(guard):
		h.t.Fatal("no reply outcome")
	}
	return replyOutcome{}
}

// guard bounds every wait on an event: a failure guard, never a measure.
const guard = 60 * time.Second

// say has the member speak a fixture and waits for Stage A's decision on it.
func (h *harness) say(name, transcript string) decision.Decision {
	h.t.Helper()
	h.oa.QueueTranscripts(transcript)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := h.member.PlayPCM(ctx, loadSpeech(h.t, name)); err != nil {
		h.t.Fatal(err)
	}
	select {
	case d := <-h.decisions:
		return d
	case <-ctx.Done():
		h.t.Fatalf("no decision for %s", name)
	}
	return decision.Decision{}
}

// waitHeard waits until the member heard at least n frames of the bot.
func (h *harness) waitHeard(n int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := h.member.WaitHeard(ctx, testBot, n); err != nil {
		h.t.Fatalf("member heard %d frames of the bot, want %d: %v", len(h.member.Heard(testBot)), n, err)
	}
}

// waitTruncations waits until the simulator has received n truncations (a
// truncate is sent before Respond returns, and read by the simulator after)
// and returns them.
func waitTruncations(t *testing.T, oa *openaisim.Server, n int) []openaisim.Truncation {
	t.Helper()
	for deadline := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		if tr := oa.Truncations(); len(tr) >= n || time.Now().After(deadline) {
			return tr
		}
	}
}

// clientEvents returns the realtime client events of the given type.
func (h *harness) clientEvents(typ string) []openaisim.RealtimeEvent {
	var out []openaisim.RealtimeEvent
	for _, e := range h.oa.RealtimeEvents() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// metric sums the samples of a metric family in the harness registry.
func (h *harness) metric(name string) float64 {
	h.t.Helper()
	return gatherSum(h.t, h.reg, name)
}

// gatherSum sums the samples of a metric family in reg.
func gatherSum(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum
}

// rms is the root mean square of s.
func rms(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var e float64
	for _, v := range s {
		e += float64(v) * float64(v)
	}
	return math.Sqrt(e / float64(len(s)))
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// newTestLog returns a log sink for a test, copied to stderr when the test runs verbose.
func newTestLog() *logbuf.Buffer {
	b := new(logbuf.Buffer)
	if testing.Verbose() {
		b.Echo(os.Stderr)
	}
	return b
}
