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
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/voice"
)

var _ voice.Responder = (*Responder)(nil)

// ResponderOptions configure a Responder.
type ResponderOptions struct {
	// Config is the template of every guild's Bridge (Sink and
	// StopSpeaking are not used: audio goes to the session's Playback).
	Config Config
	// Gen writes the brain strategy's replies (*llm.Client); required for
	// StrategyBrain.
	Gen voice.Generator
	// Model is the brain's generation model (voice.generationLlm.model).
	Model string
	// MaxTokens bounds a brain reply; 0 leaves it to the server.
	MaxTokens int
}

// Responder is voice.Responder for voice.mode realtime: the voice session
// hands it each admitted turn (and the join greeting) and it answers
// through one Bridge, one realtime socket, per guild (started on the
// guild's first reply, kept across turns so the model's conversation
// lives on). Audio is written to Reply.Out (the session's Playback, which
// paces it and measures what was played); a cancelled ctx (barge-in)
// cancels the response and truncates the item at Reply.Out.Played().
//
//   - native: the turn's audio (resampled to 24 kHz mono unless the
//     session listens at 24 kHz, voice.Options.ListenFormat) is forwarded
//     and the model answers it, with Reply.Instructions for that response.
//     A turn whose Decision is not allowed is never forwarded.
//   - brain: Gen writes the reply from Reply.Instructions and Messages;
//     Stage B ([SKIP], empty) may drop it, else the model voices the text.
type Responder struct {
	opts ResponderOptions
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // guards following
	bridges map[string]*Bridge
}

// NewResponder returns a Responder. Close it to close every guild's socket.
func NewResponder(o ResponderOptions) (*Responder, error) {
	switch o.Config.Strategy {
	case StrategyNative:
	case StrategyBrain:
		if o.Gen == nil {
			return nil, errors.New("realtime: responder: brain strategy needs Gen")
		}
	default:
		return nil, fmt.Errorf("realtime: responder: strategy %s: want native or brain", o.Config.Strategy)
	}
	log := o.Config.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Responder{opts: o, log: log, bridges: map[string]*Bridge{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Close closes every Bridge.
func (p *Responder) Close() error {
	p.cancel()
	p.mu.Lock()
	bs := p.bridges
	p.bridges = map[string]*Bridge{}
	p.mu.Unlock()
	for _, b := range bs {
		b.Close()
	}
	return nil
}

// Release closes the guild's Bridge (call it when the guild's voice
// session ends); the next reply in the guild starts a fresh one.
func (p *Responder) Release(guildID string) {
	p.mu.Lock()
	b := p.bridges[guildID]
	delete(p.bridges, guildID)
	p.mu.Unlock()
	if b != nil {
		b.Close()
	}
}

// bridge returns the guild's Bridge, starting it if needed.
func (p *Responder) bridge(ctx context.Context, guildID string) (*Bridge, error) {
	p.mu.Lock()
	b := p.bridges[guildID]
	p.mu.Unlock()
	if b != nil {
		select {
		case <-b.done:
		default:
			return b, nil
		}
	}
	if p.ctx.Err() != nil {
		return nil, ErrClosed
	}
	// Start dials within ctx but lives on p.ctx.
	sctx, stop := context.WithCancel(p.ctx)
	defer context.AfterFunc(ctx, stop)()
	nb, err := Start(sctx, p.opts.Config)
	if err != nil {
		stop()
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.bridges[guildID]; old != nil && old != b {
		nb.Close() // another reply started one meanwhile
		return old, nil
	}
	p.bridges[guildID] = nb
	if b != nil {
		b.Close()
	}
	return nb, nil
}

// Respond implements voice.Responder.
func (p *Responder) Respond(ctx context.Context, r *voice.Reply) (voice.Result, error) {
	guild := ""
	if r.Turn != nil {
		guild = r.Turn.GuildID
	}
	b, err := p.bridge(ctx, guild)
	if err != nil {
		return voice.Result{}, fmt.Errorf("realtime: responder: %w", err)
	}
	t := bridgeTurn(r)
	out := audioOut{write: r.Out.WritePCM, played: r.Out.Played,
		first: func(at time.Time) { r.Mark(voice.PhaseFirstTTSByte, at) }}
	if p.opts.Config.Strategy == StrategyBrain {
		return p.brain(ctx, b, r, t, out)
	}
	if r.Turn != nil && !r.Decision.Allowed() {
		b.skipped(ctx, t, r.Decision.Reason.String())
		return voice.Result{Skipped: true}, nil
	}
	var audio []int16
	if r.Turn != nil {
		if audio, err = to24k(r.Turn.Audio, r.Turn.Format); err != nil {
			return voice.Result{}, err
		}
		if len(audio) < minTurnSamples {
			b.skipped(ctx, t, "audio_too_short")
			return voice.Result{Skipped: true}, nil
		}
		b.hist.add(speakerName(t), t.Transcript, false)
	}
	// Native has no Stage B: the model must not be told to answer [SKIP].
	cmd := speakCommand(t, "")
	cmd.Instructions = strings.TrimSpace(strings.ReplaceAll(r.Instructions, decision.SkipInstruction, ""))
	res, err := b.replyTo(ctx, t, audio, cmd, out)
	return voice.Result{Spoken: res.spoken, Text: res.transcript, Skipped: res.transcript == "" && err == nil}, err
}

// brain generates the reply text, applies Stage B and has the model voice it.
func (p *Responder) brain(ctx context.Context, b *Bridge, r *voice.Reply, t *Turn, out audioOut) (voice.Result, error) {
	s, err := p.opts.Gen.Stream(ctx, llm.GenerateRequest{Model: p.opts.Model, Instructions: r.Instructions,
		Messages: r.Messages, MaxOutputTokens: p.opts.MaxTokens})
	if err != nil {
		return voice.Result{}, fmt.Errorf("voice: generate: %w", err)
	}
	defer s.Close()
	r.Mark(voice.PhaseFirstToken, b.now())
	var raw strings.Builder
	for s.Next() {
		raw.WriteString(s.Delta())
	}
	if err := s.Err(); err != nil {
		b.skipped(ctx, t, "generation_failed")
		return voice.Result{}, fmt.Errorf("voice: generate: %w", err)
	}
	text, stageB := decision.ReplyDecision(decision.PipelineVoice, raw.String(), r.Decision.Force)
	text = strings.TrimSpace(text)
	if stageB.Skipped() || text == "" {
		b.skipped(ctx, t, stageB.Reason.String())
		return voice.Result{Skipped: true, StageB: stageB}, nil
	}
	r.Mark(voice.PhaseFirstSentence, b.now())
	if t != nil {
		b.hist.add(speakerName(t), t.Transcript, false)
	}
	res, err := b.replyTo(ctx, t, nil, speakCommand(t, text), out)
	spoken := text
	if res.interrupted {
		spoken = res.spoken
	}
	return voice.Result{Spoken: spoken, Text: text, StageB: stageB}, err
}

// bridgeTurn maps the session's reply onto the Bridge's Turn (nil for the
// greeting).
func bridgeTurn(r *voice.Reply) *Turn {
	if r.Turn == nil {
		return nil
	}
	return &Turn{ID: r.Turn.ID, SpeakerID: r.Turn.SpeakerID, SpeakerName: r.Turn.SpeakerName,
		Transcript: r.Turn.Transcript, EndedAt: r.Turn.SpeechEnd, Decision: r.Decision}
}

// to24k returns audio as 24 kHz mono (the realtime API's input format).
func to24k(audio []int16, f pcm.Format) ([]int16, error) {
	if f == pcm.Mono24k() || f.Rate == 0 {
		return audio, nil
	}
	rs, err := resample.New(f, pcm.Mono24k())
	if err != nil {
		return nil, fmt.Errorf("realtime: resample turn: %w", err)
	}
	out := make([]int16, rs.MaxOut(len(audio)))
	n, err := rs.Process(out, audio)
	if err != nil {
		return nil, fmt.Errorf("realtime: resample turn: %w", err)
	}
	return out[:n], nil
}
