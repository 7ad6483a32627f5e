package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/realtime"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/voice"
)

// modelClients builds one llm.Client per provider (providers: in the config) on first use and
// hands each model slot the client of the provider it names. Clients share one set of metrics.
// A provider with a request budget (requestsPerMinute) gets it from the store: shared by every
// process on a Postgres store, in-process with SQLite.
type modelClients struct {
	cfg     *config.Config
	base    llm.Options // Logger and Metrics; the rest comes from the provider
	st      store.Store // holds the request budgets; nil: none (replay)
	clients map[string]*llm.Client
}

func newModelClients(cfg *config.Config, base llm.Options, st store.Store) *modelClients {
	return &modelClients{cfg: cfg, base: base, st: st, clients: map[string]*llm.Client{}}
}

// For returns the client of a slot's provider ("" follows llm.provider).
func (m *modelClients) For(slotProvider string) (*llm.Client, error) {
	p, err := m.cfg.Provider(slotProvider)
	if err != nil {
		return nil, err
	}
	if c, ok := m.clients[p.Name]; ok {
		return c, nil
	}
	api, err := llm.ParseAPI(p.API)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", p.Name, err)
	}
	opts := m.base
	opts.BaseURL, opts.APIKey, opts.API = p.BaseURL, p.APIKey, api
	opts.Timeout, opts.MaxRetries, opts.OmitStreamUsage = p.Timeout, p.MaxRetries, p.OmitStreamUsage
	if p.RequestsPerMinute > 0 && m.st != nil {
		opts.Budget = store.NewRequestBudget(m.st, p.Name, llm.RequestInterval(p.RequestsPerMinute))
	}
	c, err := llm.New(opts)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", p.Name, err)
	}
	m.clients[p.Name] = c
	return c, nil
}

// newMeter builds the usage and cost meter from the config's price table; it follows reloads
// of prices: (w nil: the table of cfg, fixed).
func newMeter(cfg *config.Config, w *config.Watcher, log *slog.Logger, reg prometheus.Registerer) *llm.Meter {
	m := llm.NewMeter(llmPrices(cfg), log, reg)
	if w != nil {
		w.Subscribe(func(_, updated *config.Config) { m.SetPrices(llmPrices(updated)) })
	}
	return m
}

// llmPrices converts the config's price table to the meter's.
func llmPrices(cfg *config.Config) map[string]llm.Price {
	prices := make(map[string]llm.Price, len(cfg.Prices))
	for model, p := range cfg.Prices {
		prices[model] = llm.Price{InputPerMTok: p.Input, CachedPerMTok: p.CachedInput, AudioInputPerMTok: p.AudioInput,
			OutputPerMTok: p.Output, AudioOutputPerMTok: p.AudioOutput, AudioInPerMinute: p.AudioInPerMinute,
			AudioOutPerMinute: p.AudioOutPerMinute, PerMCharacters: p.PerMillionCharacters}
	}
	return prices
}

// voiceModels gives the STT pipeline's three slots (transcription, generation, speech) their
// own providers' clients.
type voiceModels struct {
	stt, gen, tts *llm.Client
}

var (
	_ voice.Model              = voiceModels{}
	_ voice.SessionTranscriber = voiceModels{}
)

func (v voiceModels) Transcribe(ctx context.Context, model string, wav []byte, opts llm.TranscribeOptions) (llm.Transcript, error) {
	return v.stt.Transcribe(ctx, model, wav, opts)
}

// OpenTranscription opens a realtime transcription session on the transcription slot's
// provider (voice.speculation.transcription: session).
func (v voiceModels) OpenTranscription(ctx context.Context, opts realtime.TranscriptionOptions) (*realtime.Transcriber, error) {
	return v.stt.OpenTranscription(ctx, opts)
}

func (v voiceModels) Stream(ctx context.Context, req llm.GenerateRequest) (*llm.TextStream, error) {
	return v.gen.Stream(ctx, req)
}

func (v voiceModels) SpeakStream(ctx context.Context, model, voiceName, text string) (*llm.SpeechStream, error) {
	return v.tts.SpeakStream(ctx, model, voiceName, text)
}

// newVoiceModels resolves the voice slots' clients.
func newVoiceModels(m *modelClients) (voiceModels, error) {
	s := m.cfg.Voice.STTPipeline
	var v voiceModels
	var err error
	if v.stt, err = m.For(s.TranscriptionProvider); err != nil {
		return v, fmt.Errorf("voice.sttPipeline.transcriptionProvider: %w", err)
	}
	if v.gen, err = m.For(m.cfg.Voice.GenerationLLM.Provider); err != nil {
		return v, fmt.Errorf("voice.generationLlm.provider: %w", err)
	}
	if v.tts, err = m.For(s.TTSProvider); err != nil {
		return v, fmt.Errorf("voice.sttPipeline.ttsProvider: %w", err)
	}
	return v, nil
}
