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
	// IdleClose closes a session's Bridge (its socket) after this long
	// without a reply, e.g. after the session left. Default 15 min.
	IdleClose time.Duration
}

// Responder is voice.Responder for voice.mode realtime: the voice session
// hands it each admitted turn (and the join greeting) and it answers
// through one Bridge, one realtime socket, per voice session (told apart
// by the session's Playback; started on the session's first reply, kept
// across turns so the model's conversation lives on, closed by Release,
// after IdleClose without replies, or by Close). Audio is written to Reply.Out (the session's Playback, which
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
	now  func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex // guards following
	bridges map[*voice.Playback]*sessionBridge
}

// sessionBridge is one voice session's Bridge. Sessions are told apart by
// their Playback (voice.Reply carries no guild for the join greeting).
type sessionBridge struct {
	b        *Bridge
	guildID  string
	lastUsed time.Time
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
	if o.IdleClose <= 0 {
		o.IdleClose = 15 * time.Minute
	}
	now := o.Config.Now
	if now == nil {
		now = time.Now
	}
	p := &Responder{opts: o, log: log, now: now, bridges: map[*voice.Playback]*sessionBridge{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.reap()
	return p, nil
}

// reap closes Bridges idle for IdleClose.
func (p *Responder) reap() {
	defer p.wg.Done()
	t := time.NewTicker(min(p.opts.IdleClose/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		var idle []*Bridge
		p.mu.Lock()
		for k, sb := range p.bridges {
			if p.now().Sub(sb.lastUsed) >= p.opts.IdleClose && sb.b.idle() {
				idle = append(idle, sb.b)
				delete(p.bridges, k)
			}
		}
		p.mu.Unlock()
		for _, b := range idle {
			b.Close()
		}
	}
}

// Close closes every Bridge and stops the Responder.
func (p *Responder) Close() error {
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	bs := p.bridges
	p.bridges = map[*voice.Playback]*sessionBridge{}
	p.mu.Unlock()
	for _, sb := range bs {
		sb.b.Close()
	}
	return nil
}

// Release closes the Bridges of the guild's voice sessions (call it when a
// session ends); the guild's next reply starts a fresh one. Bridges of
// sessions that only greeted are closed by the idle timer.
func (p *Responder) Release(guildID string) {
	var bs []*Bridge
	p.mu.Lock()
	for k, sb := range p.bridges {
		if sb.guildID == guildID {
			bs = append(bs, sb.b)
			delete(p.bridges, k)
		}
	}
	p.mu.Unlock()
	for _, b := range bs {
		b.Close()
	}
}

// bridge returns the session's Bridge, starting it if needed.
func (p *Responder) bridge(ctx context.Context, r *voice.Reply) (*Bridge, error) {
	key := r.Out
	p.mu.Lock()
	sb := p.bridges[key]
	if sb != nil {
		sb.lastUsed = p.now()
		if r.Turn != nil {
			sb.guildID = r.Turn.GuildID
		}
	}
	p.mu.Unlock()
	if sb != nil {
		select {
		case <-sb.b.done:
		default:
			return sb.b, nil
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
	nsb := &sessionBridge{b: nb, lastUsed: p.now()}
	if r.Turn != nil {
		nsb.guildID = r.Turn.GuildID
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.bridges[key]; cur != nil && cur != sb {
		nb.Close() // another reply started one meanwhile
		return cur.b, nil
	}
	p.bridges[key] = nsb
	if sb != nil {
		sb.b.Close()
	}
	return nb, nil
}

// Respond implements voice.Responder.
func (p *Responder) Respond(ctx context.Context, r *voice.Reply) (voice.Result, error) {
	b, err := p.bridge(ctx, r)
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
