package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/dave"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/llm/gemini"
	llmrt "github.com/banterbot/banter/llm/realtime"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/voice"
	"github.com/banterbot/banter/voice/realtime"
)

// newVoice builds the voice service: Stage A engine (kept in step with reloads), the members'
// personas from the store, the STT pipeline or, with voice.mode realtime, a realtime responder
// (one socket) per voice session.
func (a *app) newVoice(w *config.Watcher, shards *discord.Shards, st store.Store, chat voice.ChatImageLookup, models *modelClients, reg prometheus.Registerer) (svc *voice.Service, err error) {
	cfg := w.Current()
	classifier, err := models.For(cfg.Voice.ReplyDecisionLLM.Provider)
	if err != nil {
		return nil, fmt.Errorf("voice.replyDecisionLlm.provider: %w", err)
	}
	slots, err := newVoiceModels(models)
	if err != nil {
		return nil, err
	}
	// Always wired: the policy's Enabled (live) decides whether it is asked; wired only when
	// enabled at start, switching it on by reload left every turn pending (needs_classifier).
	// The reasoning effort is read per call: a reload applies to the next classifier call.
	opts := decision.EngineOptions{Logger: a.logger, Metrics: a.decisionMetrics(reg),
		Classifier: decision.ClassifierFunc(classifier.ClassifyWith(func() string {
			return w.Current().Voice.ReplyDecisionLLM.ReasoningEffort
		}))}
	engine := decision.NewVoiceEngine(voice.Policy(cfg), opts)
	w.Subscribe(func(_, updated *config.Config) { engine.SetPolicy(voice.Policy(updated)) })

	tlsConfig, err := voiceTLS(cfg.Discord.VoiceCAFile)
	if err != nil {
		return nil, err
	}
	vo := voice.Options{
		Config:  w.Current,
		Discord: shards.Any(),
		Sender:  a.sender,
		Gateway: shards,
		StateFor: func(guildID string) *discordgo.State {
			if s := shards.ForGuild(guildID); s != nil {
				return s.State
			}
			return nil
		},
		LLM:              slots,
		Engine:           engine,
		Budget:           a.voiceBudget(),
		Personas:         st,
		KeptSessions:     st,   // /join and !join sessions come back after a restart (rejoin at start)
		OpenTurns:        st,   // the utterance being answered comes back after a crash or a stop
		ChatImages:       chat, // images.voiceChatMinutes: the chat image of the voice channel
		VoiceTLS:         tlsConfig,
		Logger:           a.logger,
		Metrics:          voice.NewMetrics(reg),
		TransportMetrics: dvoice.NewMetrics(reg),
		AudioMetrics:     audio.NewMetrics(reg),
		DAVEMetrics:      dave.NewMetrics(reg),

		SendRealtimePriority: cfg.Voice.SendRealtimePriority,
		SendSpin:             sendSpin(cfg.Voice.SendSpinMs),
	}
	if a.memory != nil { // transcripts captured, facts in the prompts (memory.enabled decides)
		vo.Memory = a.memory
	}
	if vo.SendClock, err = a.sendClock(cfg.Voice); err != nil {
		return nil, err
	}
	if vo.SendClock != nil {
		defer func() {
			if err != nil {
				vo.SendClock.Close()
			}
		}()
	}
	var hear *gemini.Transcriber // Gemini's hearing (voice.realtime.provider gemini)
	defer func() {
		switch {
		case hear == nil:
		case err != nil:
			_ = hear.Close()
		default:
			a.closers = append(a.closers, func() { _ = hear.Close() })
		}
	}()
	if cfg.Voice.Mode == "realtime" {
		if hear, err = a.realtimeVoice(cfg, &vo, slots, models, reg); err != nil {
			return nil, err
		}
	}
	if svc, err = voice.New(vo); err != nil {
		return nil, err
	}
	if clock := vo.SendClock; clock != nil {
		a.closers = append(a.closers, func() { clock.Close() }) // after the voice service's Shutdown
	}
	return svc, nil
}

// sendClock starts the process-wide send clock voice.sendClock asks for (nil for "off").
func (a *app) sendClock(v config.Voice) (*dvoice.SendClock, error) {
	if v.SendClock == "off" {
		return nil, nil
	}
	if v.SendRealtimePriority > 0 || v.SendSpinMs != 0 {
		a.logger.Warn("voice_send_options_ignored", "send_clock", v.SendClock,
			"detail", "voice.sendRealtimePriority and voice.sendSpinMs apply only with voice.sendClock: off")
	}
	clock, err := dvoice.NewSendClock(dvoice.ClockOptions{SharedSocket: v.SendClock == "shared", Logger: a.logger})
	if err != nil {
		return nil, fmt.Errorf("voice.sendClock %s: %w", v.SendClock, err)
	}
	return clock, nil
}

// voiceTLS trusts the system roots plus, when set, discord.voiceCaFile (the simulator's CA).
func voiceTLS(caFile string) (*tls.Config, error) {
	if strings.TrimSpace(caFile) == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("discord.voiceCaFile: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("discord.voiceCaFile: %s holds no PEM certificate", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// sendSpin maps voice.sendSpinMs onto discord/voice's SendSpin (0 default, negative off).
func sendSpin(ms int) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// realtimeVoice sets voice.mode realtime up on vo: a realtime Responder per voice session on the
// configured provider and, on Gemini, the session's hearing through Gemini's own input
// transcription (returned, for the caller to close; nil on OpenAI).
func (a *app) realtimeVoice(cfg *config.Config, vo *voice.Options, slots voiceModels, models *modelClients, reg prometheus.Registerer) (*gemini.Transcriber, error) {
	rc, err := realtime.FromConfig(cfg)
	if err != nil {
		return nil, err
	}
	rc.Instructions = cfg.Bot.Personas[cfg.Bot.Persona].Prompt
	rc.Logger, rc.Metrics = a.logger, realtime.NewMetricsFor(reg, rc.Provider)
	rc.Meter, rc.Gate = models.base.Meter, models.base.Gate
	provider := rc.Provider
	if provider == "" {
		provider = realtime.ProviderOpenAI
	}
	// The banter_realtime_* families, labelled provider like the voice-level ones.
	rtm := llmrt.NewMetricsFor(reg, string(provider))
	rc.Realtime.Logger, rc.Realtime.Metrics, rc.Gemini.Metrics = a.logger, rtm, rtm
	sessions, err := realtime.Sessions(realtime.ResponderOptions{Config: rc, Gen: slots.gen, Model: cfg.Voice.GenerationLLM.Model})
	if err != nil {
		return nil, err
	}
	vo.NewResponder = sessions
	vo.ListenFormat, vo.SpeakFormat = pcm.Mono24k(), pcm.Mono24k()
	if rc.Provider != realtime.ProviderGemini {
		return nil, nil
	}
	// Stage A and the brain decide on the words Gemini itself heard (docs/realtime.md).
	hear := gemini.NewTranscriber(rc.Gemini)
	vo.LLM = realtime.GeminiHearing{Model: slots, Transcriber: hear, Gate: rc.Gate, Meter: rc.Meter}
	return hear, nil
}
