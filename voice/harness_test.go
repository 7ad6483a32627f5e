package voice_test

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/internal/logbuf"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/llm"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/voice"
)

// world runs the real voice service against both simulators: discordgo and
// discord/voice (with DAVE wired) to the Discord and voice simulators,
// openai-go (through llm) to the OpenAI simulator.
type world struct {
	t    testing.TB
	ctx  context.Context
	dsim *discordsim.Server
	vsim *voicesim.Server
	osim *openaisim.Server
	cfg  *config.Config
	// conf is the configuration the service reads (cfg until reconfigure).
	conf   atomic.Pointer[config.Config]
	logs   *logbuf.Buffer
	reg    *prometheus.Registry
	guild  discordsim.GuildID
	vc     discordsim.ChannelID
	text   discordsim.ChannelID
	users  map[string]discordsim.UserID
	sess   *discordgo.Session
	svc    *voice.Service
	botID  string
	client *llm.Client
	// members counts simulated members joined (for waitDAVE).
	members int
}

func newWorld(t testing.TB, mutate func(*config.Config), rules ...openaisim.Rule) *world {
	t.Helper()
	return newWorldWith(t, worldOptions{}, mutate, rules...)
}

// worldOptions are a world's optional parts.
type worldOptions struct {
	sim      []openaisim.Option   // more OpenAI simulator options
	personas voice.PersonaLookup  // the members' /persona descriptions (a store)
	kept     store.VoiceSessions  // voice.Options.KeptSessions (a store)
	open     store.OpenVoiceTurns // voice.Options.OpenTurns (a store)
	encoder  opus.EncoderConfig   // voice.Options.SpeakEncoder
	timeout  time.Duration        // bounds the world's whole life (0: 3 × guard)
	// owner, when set, names a user who owns the guild instead of the bot: the bot then has
	// @everyone's permissions, and channel overwrites apply to it (the owner bypasses them).
	owner string
	// budget, when set, builds the daily budgets' Guard on the world's live config: it gates
	// the model client and quiets the service (budget_test.go).
	budget func(conf func() *config.Config) *budget.Guard
}

// newWorldWith is newWorld with optional parts.
func newWorldWith(t testing.TB, o worldOptions, mutate func(*config.Config), rules ...openaisim.Rule) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(o.timeout, 3*guard))
	t.Cleanup(cancel)
	w := &world{t: t, ctx: ctx, logs: &logbuf.Buffer{}, users: map[string]discordsim.UserID{}}
	w.vsim = voicetest.Serve(t, voicesim.WithDAVE())
	w.dsim = simtest.Serve(t, discordsim.WithVoiceSim(w.vsim))
	w.osim = openaitest.Serve(t, append([]openaisim.Option{openaisim.WithRules(rules...)}, o.sim...)...)
	if o.owner != "" {
		owner := w.dsim.CreateUser(o.owner)
		w.users[o.owner] = owner
		w.guild = w.dsim.CreateGuildOwnedBy("Voice Test", owner)
	} else {
		w.guild = w.dsim.CreateGuild("Voice Test")
	}
	w.vc = w.dsim.CreateVoiceChannel(w.guild, "Lounge")
	w.text = w.dsim.CreateTextChannel(w.guild, "voice-log")
	for _, name := range []string{"alice", "bob"} {
		u := w.dsim.CreateUser(name)
		if err := w.dsim.AddMember(w.guild, u); err != nil {
			t.Fatal(err)
		}
		w.users[name] = u
	}

	cfg := config.Default()
	cfg.Discord.APIURL = w.dsim.APIBaseURL()
	cfg.LLM.BaseURL = w.osim.BaseURL()
	cfg.LLM.MaxRetries = 0
	cfg.Secrets.DiscordToken = w.dsim.Token()
	cfg.Secrets.OpenAIAPIKey = "sk-test"
	cfg.Voice.JoinGreetingWindowSeconds = 0
	cfg.Voice.Endpointing.SilenceMs = 500
	// Most tests script the transcripts in the order of the utterances (QueueTranscripts):
	// one transcription an utterance, so no speculation at pauses. The speculation tests
	// (e2e_speculation_test.go, BenchmarkSpeculative) turn it on.
	cfg.Voice.Speculation.Enabled = false
	cfg.Voice.Endpointing.CompleteSilenceMs, cfg.Voice.Endpointing.TrailingSilenceMs = 0, 0
	cfg.Voice.ReplyDecisionLLM.TimeoutMs = 2000
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	w.cfg = cfg
	w.conf.Store(cfg)

	logger := slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w.reg = prometheus.NewRegistry()
	meter := llm.NewMeter(testPrices, logger, w.reg)
	var spendGuard *budget.Guard
	var gate llm.Gate
	var quiet voice.Quieter
	if o.budget != nil {
		spendGuard = o.budget(w.conf.Load)
		meter.SetSpender(spendGuard)
		gate, quiet = spendGuard, spendGuard
	}
	client, err := llm.New(llm.Options{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.Secrets.OpenAIAPIKey,
		Timeout: 5 * time.Second, FirstByteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second,
		MaxRetries: cfg.LLM.MaxRetries, Logger: logger, Meter: meter, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	w.client = client
	engine := decision.NewVoiceEngine(voice.Policy(cfg), decision.EngineOptions{
		Classifier: decision.ClassifierFunc(client.ClassifyWith(func() string {
			return w.conf.Load().Voice.ReplyDecisionLLM.ReasoningEffort
		})), Logger: logger, Metrics: decision.NewMetrics(w.reg)})
	sess, err := discord.NewSession(discord.SessionOptions{Token: cfg.Secrets.DiscordToken, APIURL: cfg.Discord.APIURL})
	if err != nil {
		t.Fatal(err)
	}
	sess.LogLevel = -1
	ready := make(chan struct{}, 1)
	sess.AddHandler(func(_ *discordgo.Session, _ *discordgo.GuildCreate) {
		select {
		case ready <- struct{}{}:
		default:
		}
	})
	if err := sess.Open(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatal("no GUILD_CREATE")
	}
	w.sess, w.botID = sess, sess.State.User.ID
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(w.vsim.CACertPEM())
	// BANTER_TEST_SEND_CLOCK=shared|own runs the world on a send clock
	// (with its shared socket, or a socket per connection).
	var clock *dvoice.SendClock
	if mode := os.Getenv("BANTER_TEST_SEND_CLOCK"); mode != "" {
		if clock, err = dvoice.NewSendClock(dvoice.ClockOptions{SharedSocket: mode == "shared", LocalAddr: "127.0.0.1:0"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { clock.Close() }) // after the service's shutdown below
	}
	svc, err := voice.New(voice.Options{
		Config: w.conf.Load, Discord: sess, LLM: client, Engine: engine,
		VoiceTLS: &tls.Config{RootCAs: pool}, Logger: logger, Metrics: voice.NewMetrics(w.reg), Personas: o.personas,
		SendClock: clock, SpeakEncoder: o.encoder, AudioMetrics: audio.NewMetrics(w.reg), TransportMetrics: dvoice.NewMetrics(w.reg),
		Budget: quiet, KeptSessions: o.kept, OpenTurns: o.open,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.svc = svc
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := svc.Shutdown(sctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		sess.Close()
		if t.Failed() {
			t.Logf("logs:\n%s", w.logs.String())
		}
	})
	return w
}

// tempStore opens a SQLite store in the test's folder, closed at cleanup.
func tempStore(t testing.TB) *store.SQLite {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "banter.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// reconfigure switches the service to a copy of its configuration changed by mutate (read
// from the next frame or turn on, as a reload would be).
func (w *world) reconfigure(mutate func(*config.Config)) {
	w.t.Helper()
	c := *w.conf.Load()
	mutate(&c)
	if err := c.Validate(); err != nil {
		w.t.Fatal(err)
	}
	w.conf.Store(&c)
}

// member joins a simulated member to the voice channel.
func (w *world) member(name string) *voicesim.Member {
	w.t.Helper()
	m, err := w.dsim.JoinVoiceMember(w.ctx, w.users[name], w.vc, voicesim.MemberOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(m.Leave)
	w.members++
	return m
}

// join makes the bot join the voice channel and waits until the channel's
// DAVE group holds the bot and every member, with no change in progress, so
// that nobody's first words are dropped for want of a key.
func (w *world) join() {
	w.t.Helper()
	if err := w.svc.Join(w.ctx, string(w.guild), string(w.vc)); err != nil {
		w.t.Fatal(err)
	}
	for {
		st := w.vsim.DAVE(string(w.guild), string(w.vc))
		if st.Version == 1 && st.Established && !st.Busy && len(st.Members) == w.members+1 {
			return
		}
		select {
		case <-w.ctx.Done():
			w.t.Fatalf("DAVE group not ready: %+v", st)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// guard bounds every wait on an event: a failure guard, never a measure (a
// loaded machine under -race can be very slow).
const guard = 60 * time.Second

// waitLog waits until a log line contains every substring.
func (w *world) waitLog(subs ...string) {
	w.t.Helper()
	w.waitLogs(1, subs...)
}

// waitLogs waits until n log lines contain every substring.
func (w *world) waitLogs(n int, subs ...string) {
	w.t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		if w.logs.Count(subs...) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.t.Fatalf("%d log lines with %q, want %d", w.logs.Count(subs...), subs, n)
}

// waitEvent waits for the first log record whose msg is one of names.
func (w *world) waitEvent(names ...string) map[string]any {
	w.t.Helper()
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(w.logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && slices.Contains(names, fmt.Sprint(m["msg"])) {
				return m
			}
		}
	}
	w.t.Fatalf("no %v log line", names)
	return nil
}

// waitEventWith waits for the first log record named name whose field key is value.
func (w *world) waitEventWith(name, key string, value any) map[string]any {
	w.t.Helper()
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, ev := range w.logs.Events(name) {
			if ev[key] == value {
				return ev
			}
		}
	}
	w.t.Fatalf("no %s log line with %s %v", name, key, value)
	return nil
}

// metricValue sums the counter name over its series with a label of value label in reg (0 if
// there is none); label "" is the counter without labels.
func metricValue(t testing.TB, reg *prometheus.Registry, name, label string) float64 {
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
			if label == "" && len(m.GetLabel()) == 0 { // an unlabelled counter
				sum += m.GetCounter().GetValue()
			}
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == label {
					sum += m.GetCounter().GetValue()
					break
				}
			}
		}
	}
	return sum
}

// fixtures caches the speech fixtures (48 kHz stereo).
var fixtures sync.Map

func speech(t testing.TB, name string) []int16 {
	t.Helper()
	if v, ok := fixtures.Load(name); ok {
		return v.([]int16)
	}
	b, err := os.ReadFile(filepath.Join("testdata", name+".wav"))
	if err != nil {
		t.Fatal(err)
	}
	s, f, err := wav.Decode(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if f != pcm.Discord() {
		t.Fatalf("%s: format %v, want 48 kHz stereo", name, f)
	}
	fixtures.Store(name, s)
	return s
}

// play makes m say a fixture.
func (w *world) play(m *voicesim.Member, name string) {
	w.t.Helper()
	if err := m.PlayPCM(w.ctx, speech(w.t, name)); err != nil {
		w.t.Fatal(err)
	}
}
