package realtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/internal/logbuf"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
	llmrt "github.com/banterbot/banter/llm/realtime"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/voice"
)

// serviceWorld runs the real voice service (discordgo, discord/voice with
// DAVE wired, hearing, STT, Stage A, Playback) with voice.mode realtime:
// the Responder from this package answers through the realtime simulator.
// This is how cmd/banter plugs voice.mode realtime in.
type serviceWorld struct {
	t     *testing.T
	ctx   context.Context
	dsim  *discordsim.Server
	vsim  *voicesim.Server
	osim  *openaisim.Server
	logs  *logbuf.Buffer
	guild discordsim.GuildID
	vc    discordsim.ChannelID
	svc   *voice.Service
	botID string
}

func newServiceWorld(t *testing.T, strategy string, eagerness int, rules ...openaisim.Rule) *serviceWorld {
	t.Helper()
	return newServiceWorldOn(t, ProviderOpenAI, strategy, eagerness, rules...)
}

// newServiceWorldOn is newServiceWorld on the given realtime provider: with Gemini, the
// Responder speaks on the simulator's Gemini face and the session hears through GeminiHearing,
// as cmd/banter wires it.
func newServiceWorldOn(t *testing.T, p Provider, strategy string, eagerness int, rules ...openaisim.Rule) *serviceWorld {
	t.Helper()
	return newServiceWorldWith(t, p, strategy, eagerness, nil, rules...)
}

// newServiceWorldWith is newServiceWorldOn with tweak (nil: none) applied to the bot's config
// before it is validated.
func newServiceWorldWith(t *testing.T, p Provider, strategy string, eagerness int, tweak func(*config.Config),
	rules ...openaisim.Rule) *serviceWorld {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*guard)
	t.Cleanup(cancel)
	w := &serviceWorld{t: t, ctx: ctx, logs: newTestLog()}
	w.vsim = voicetest.Serve(t)
	w.dsim = simtest.Serve(t, discordsim.WithVoiceSim(w.vsim))
	w.osim = openaitest.Serve(t, openaisim.WithRules(rules...))
	w.guild = w.dsim.CreateGuild("Realtime Test")
	w.vc = w.dsim.CreateVoiceChannel(w.guild, "Lounge")

	cfg := config.Default()
	cfg.Discord.APIURL = w.dsim.APIBaseURL()
	cfg.LLM.BaseURL = w.osim.BaseURL()
	cfg.LLM.MaxRetries = 0
	cfg.Secrets.DiscordToken = w.dsim.Token()
	cfg.Secrets.OpenAIAPIKey = "sk-test"
	cfg.Voice.Mode = "realtime"
	cfg.Voice.RealtimeReplyStrategy = strategy
	cfg.Voice.ReplyEagerness = eagerness
	cfg.Voice.JoinGreetingWindowSeconds = 0
	cfg.Voice.Endpointing.SilenceMs = 500
	if tweak != nil {
		tweak(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}

	logger := slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := prometheus.NewRegistry()
	client, err := llm.New(llm.Options{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.Secrets.OpenAIAPIKey, MaxRetries: 0, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc.Instructions = "You are banter, a friendly voice in a Discord call."
	rc.Logger, rc.Metrics = logger, NewMetrics(reg)
	rc.Realtime.Logger, rc.Realtime.Metrics = logger, llmrt.NewMetrics(reg)
	var model voice.Model = client
	if p == ProviderGemini {
		rc.Provider = ProviderGemini
		rc.Gemini = gemini.Config{BaseURL: "http" + strings.TrimPrefix(w.osim.GeminiURL(), "ws"), APIKey: "gk-test",
			Model: "gemini-3.8-live", Voice: "Kore", ManualActivity: true}
		hear := gemini.NewTranscriber(rc.Gemini)
		t.Cleanup(func() { _ = hear.Close() })
		model = GeminiHearing{Model: client, Transcriber: hear}
	}
	sessions, err := Sessions(ResponderOptions{Config: rc, Gen: client, Model: cfg.Voice.GenerationLLM.Model})
	if err != nil {
		t.Fatal(err)
	}

	engine := decision.NewVoiceEngine(voice.Policy(cfg), decision.EngineOptions{Logger: logger})
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
	w.botID = sess.State.User.ID
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(w.vsim.CACertPEM())
	w.svc, err = voice.New(voice.Options{
		Config: func() *config.Config { return cfg }, Discord: sess, LLM: model, Engine: engine,
		NewResponder: sessions, ListenFormat: pcm.Mono24k(), SpeakFormat: pcm.Mono24k(),
		VoiceTLS: &tls.Config{RootCAs: pool}, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := w.svc.Shutdown(sctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		sess.Close()
	})
	return w
}

func (w *serviceWorld) member(name string) *voicesim.Member {
	w.t.Helper()
	u := w.dsim.CreateUser(name)
	if err := w.dsim.AddMember(w.guild, u); err != nil {
		w.t.Fatal(err)
	}
	m, err := w.dsim.JoinVoiceMember(w.ctx, u, w.vc, voicesim.MemberOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(m.Leave)
	return m
}

// waitLog waits for the first log record msg.
func (w *serviceWorld) waitLog(msg string) map[string]any {
	w.t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		if ev := w.logs.Events(msg); len(ev) > 0 {
			return ev[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.t.Fatalf("no %s log", msg)
	return nil
}

// TestServiceRealtimeNative: the voice service in voice.mode realtime,
// native: a member asks the bot by name and hears the realtime model's
// answer; a remark not addressed to it (eagerness 0) never reaches the
// realtime socket.
func TestServiceRealtimeNative(t *testing.T) {
	t.Parallel()
	w := newServiceWorld(t, "native", 0)
	alice := w.member("alice")
	if err := w.svc.Join(w.ctx, string(w.guild), string(w.vc)); err != nil {
		t.Fatal(err)
	}
	w.osim.QueueTranscripts("what do you think about pineapple on pizza? and be honest")
	if err := alice.PlayPCM(w.ctx, loadSpeech(t, "two-questions.wav")); err != nil {
		t.Fatal(err)
	}
	w.waitLog("stt_pipeline_reply_denied")
	for _, e := range w.osim.RealtimeEvents() {
		// Speech to text hears every utterance (in a transcription session); the model must not.
		if !e.Transcription && strings.HasPrefix(e.Type, "input_audio_buffer") {
			t.Fatalf("a denied turn reached the realtime socket: %s", e.Type)
		}
	}

	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	if err := alice.PlayPCM(w.ctx, loadSpeech(t, "hey-banter-weather.wav")); err != nil {
		t.Fatal(err)
	}
	if err := alice.WaitHeard(w.ctx, w.botID, 40); err != nil {
		t.Fatalf("alice heard no answer: %v", err)
	}
	req := w.waitLog("realtime_reply_requested")
	if req["strategy"] != "native" || req["reason"] != decision.ReasonDirectAddressFastPath.String() {
		t.Errorf("realtime_reply_requested %v", req)
	}
	if db := pcm.EnergyDB(alice.HeardPCM(w.botID)); db < -40 {
		t.Errorf("decoded answer is near silence: %.1f dBFS", db)
	}
	rec := w.osim.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].AudioDuration < time.Second {
		t.Fatalf("realtime responses: %+v", rec)
	}
	w.waitLog("realtime_reply_spoken")
	if n := len(w.logs.Events("stt_pipeline_reply_spoken")); n != 0 {
		t.Errorf("a realtime turn logged stt_pipeline_reply_spoken %d times", n)
	}
}

// TestServiceRealtimeBrain: voice.mode realtime, brain: the first addressed
// turn's generation answers [SKIP] and nothing reaches the realtime model;
// the second is answered, voiced by the realtime model and heard.
func TestServiceRealtimeBrain(t *testing.T) {
	t.Parallel()
	const answer = "It is sunny and warm today."
	w := newServiceWorld(t, "brain", 0,
		openaisim.Rule{Name: "skip", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Skip: true}, Times: 1},
		openaisim.Rule{Name: "gen", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Text: answer}},
		openaisim.Rule{Name: "voice", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse, PromptPattern: "Text:\n" + answer},
			Reply: openaisim.Reply{Text: answer}})
	alice := w.member("alice")
	if err := w.svc.Join(w.ctx, string(w.guild), string(w.vc)); err != nil {
		t.Fatal(err)
	}
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	if err := alice.PlayPCM(w.ctx, loadSpeech(t, "hey-banter-weather.wav")); err != nil {
		t.Fatal(err)
	}
	skip := w.waitLog("realtime_reply_skipped")
	if skip["skip_reason"] != decision.ReasonLLMSkip.String() {
		t.Errorf("realtime_reply_skipped %v", skip)
	}
	if n := len(w.osim.RequestsFor(openaisim.EndpointRealtimeResponse)); n != 0 {
		t.Fatalf("%d realtime responses after [SKIP]", n)
	}
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	if err := alice.PlayPCM(w.ctx, loadSpeech(t, "hey-banter-weather.wav")); err != nil {
		t.Fatal(err)
	}
	if err := alice.WaitHeard(w.ctx, w.botID, 30); err != nil {
		t.Fatalf("alice heard no answer: %v", err)
	}
	rec := w.osim.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].Rule != "voice" {
		t.Fatalf("realtime responses: %+v", rec)
	}
	spoken := w.waitLog("realtime_reply_spoken")
	if spoken["spoken"] != answer {
		t.Errorf("spoken %v", spoken["spoken"])
	}
}
