package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord/dave"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/voice"
)

// newVoice builds the voice service for `run` (voice.mode stt_pipeline).
// Call it after session.Open (it needs the bot's user id). w is the live
// configuration (voice Stage A follows reloads); client and decisions are the
// ones the text pipeline uses (one llm client, one decision.Metrics per
// registry).
//
// Wiring, in run:
//
//	voiceSvc, err := newVoice(watcher, session, client, decisions, reg, a.logger)
//	// messages: voiceSvc.HandleMessage(ctx, s, m.Message) before the text pipeline sees "!join"/"!leave"
//	// interactions: if voiceSvc.HandleInteraction(ctx, s, ic.Interaction) { return } before textSvc
//	// slash commands: append(textSvc.Commands(), voiceSvc.Commands()...)
//	// after Open: voiceSvc.AutoJoin(ctx) (logs and returns failures)
//	// shutdown: voiceSvc.Shutdown(shutdownCtx) before session.Close()
func newVoice(w *config.Watcher, session *discordgo.Session, client *llm.Client,
	decisions *decision.Metrics, reg prometheus.Registerer, logger *slog.Logger) (*voice.Service, error) {
	current := w.Current
	cfg := current()
	var tlsCfg *tls.Config
	if cfg.Discord.VoiceCAFile != "" {
		pem, err := os.ReadFile(cfg.Discord.VoiceCAFile)
		if err != nil {
			return nil, fmt.Errorf("voice: discord.voiceCaFile: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("voice: discord.voiceCaFile %s: no PEM certificate", cfg.Discord.VoiceCAFile)
		}
		tlsCfg = &tls.Config{RootCAs: pool}
	}
	engine := decision.NewVoiceEngine(voice.Policy(cfg), decision.EngineOptions{
		Classifier: decision.ClassifierFunc(client.Classify), Logger: logger, Metrics: decisions})
	w.Subscribe(func(_, updated *config.Config) { engine.SetPolicy(voice.Policy(updated)) })
	return voice.New(voice.Options{
		Config:           current,
		Discord:          session,
		LLM:              client,
		Engine:           engine,
		VoiceTLS:         tlsCfg,
		Logger:           logger,
		Metrics:          voice.NewMetrics(reg),
		TransportMetrics: dvoice.NewMetrics(reg),
		AudioMetrics:     audio.NewMetrics(reg),
		DAVEMetrics:      dave.NewMetrics(reg),
	})
}
