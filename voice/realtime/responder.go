package realtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/voice"
)

var (
	_ voice.Responder  = (*Responder)(nil)
	_ voice.TakeBacker = (*Responder)(nil)
)

// ResponderOptions configure the realtime Responders.
type ResponderOptions struct {
	// Config is the template of every session's Bridge.
	Config Config
	// Gen writes the brain strategy's replies (*llm.Client); required for
	// StrategyBrain.
	Gen voice.Generator
	// Model is the brain's generation model (voice.generationLlm.model).
	Model string
	// MaxTokens bounds a brain reply; 0 leaves it to the server.
	MaxTokens int
}

func (o *ResponderOptions) validate() error {
	switch o.Config.Strategy {
	case StrategyNative:
	case StrategyBrain:
		if o.Gen == nil {
			return errors.New("realtime: responder: brain strategy needs Gen")
		}
	default:
		return fmt.Errorf("realtime: responder: strategy %s: want native or brain", o.Config.Strategy)
	}
	return nil
}

// Sessions returns the voice.Options.NewResponder of voice.mode realtime:
// every voice session gets its own Responder (NewResponder), which the
// session closes when it ends.
func Sessions(o ResponderOptions) (voice.ResponderFactory, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s voice.SessionInfo) (voice.Responder, error) {
		return NewResponder(ctx, o, s)
	}, nil
}

// Responder is voice.Responder for voice.mode realtime, for one voice
// session: it answers the session's admitted turns (and its join greeting)
// through one Bridge — one realtime socket, one model conversation — opened
// on the session's first reply and kept across turns, so the model's
// conversation lives on; Close (the session's end) closes it. Audio is
// written to Reply.Out (the session's Playback, which paces it and measures
// what was played); a cancelled ctx (barge-in) cancels the response and
// truncates the item at Reply.Out.Played().
//
//   - native: the turn's audio (resampled to 24 kHz mono unless the
//     session listens at 24 kHz, voice.Options.ListenFormat) is forwarded
//     and the model answers it, with Reply.Instructions for that response.
//     A turn whose Decision is not allowed is never forwarded.
//   - brain: Gen writes the reply from Reply.Instructions and Messages;
//     Stage B ([SKIP], empty) may drop it, else the model voices the text.
type Responder struct {
	opts ResponderOptions
	cfg  Config          // opts.Config, logging with the session's ids
	ctx  context.Context // the voice session's: the Bridge lives on it

	mu       sync.Mutex // guards following; held while a Bridge starts
	b        provider
	closed   bool
	failures int       // providers in a row that gave up or did not start (backoff.go)
	retryAt  time.Time // no provider starts before this
}

// NewResponder returns the Responder of the voice session s; ctx is the
// session's (the Bridge stops when it ends). Nothing is dialled before the
// first reply. Close it when the session ends. It logs, and its Bridges log, through
// s.Logger when the session gives one and o.Config has a Logger (the session's lines name
// the channel the session is in at the time: a move of the bot is followed), else through
// o.Config.Logger with s's guild and channel ids.
func NewResponder(ctx context.Context, o ResponderOptions, s voice.SessionInfo) (*Responder, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	cfg := o.Config
	cfg.giveUpDefaults()
	switch {
	case cfg.Logger != nil && s.Logger != nil:
		// The session's own: its channel_id follows a move of the bot (voice.SessionInfo).
		cfg.Logger = s.Logger
	case cfg.Logger != nil && s.GuildID != "":
		cfg.Logger = cfg.Logger.With("guild_id", s.GuildID, "channel_id", s.ChannelID)
	}
	return &Responder{opts: o, cfg: cfg, ctx: ctx}, nil
}

// SpokenEvent names the log event of a turn this Responder answered aloud (voice.SpokenEventNamer).
func (p *Responder) SpokenEvent() string { return "realtime_reply_spoken" }

// Close closes the session's Bridge (its socket). Safe to call more than
// once; Respond fails with ErrClosed after it.
func (p *Responder) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.b != nil {
		p.b.Close()
		p.b = nil
	}
	return nil
}

// bridge returns the session's Bridge, starting it on first use (or again if
// it stopped). Start dials within ctx (the reply's: a barge-in or leave stops
// the dial) and the Bridge then lives on the session's context.
func (p *Responder) bridge(ctx context.Context) (provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.ctx.Err() != nil {
		return nil, ErrClosed
	}
	if p.b != nil {
		select {
		case <-p.b.stopped(): // on its own: a close it does not retry
			p.b.Close()
			p.b = nil
			p.gaveUp("stopped", nil)
		default:
			return p.b, nil
		}
	}
	if err := p.backingOff(); err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(p.ctx)
	defer context.AfterFunc(ctx, stop)()
	var b provider
	var err error
	if p.cfg.Provider == ProviderGemini {
		b, err = startGemini(sctx, p.cfg)
	} else {
		b, err = Start(sctx, p.cfg)
	}
	if err != nil {
		stop()
		if ctx.Err() == nil {
			p.gaveUp("start_failed", err)
		}
		return nil, err
	}
	p.b = b
	return b, nil
}

// Respond implements voice.Responder.
func (p *Responder) Respond(ctx context.Context, r *voice.Reply) (voice.Result, error) {
	b, err := p.bridge(ctx)
	if err != nil {
		return voice.Result{}, fmt.Errorf("realtime: responder: %w", err)
	}
	t := bridgeTurn(r)
	out := audioOut{write: r.Out.WritePCM, played: r.Out.Played, firstPacket: r.Out.First,
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
		f := b.inputFormat()
		if audio, err = toFormat(r.Turn.Audio, r.Turn.Format, f); err != nil {
			return voice.Result{}, err
		}
		if len(audio) < minTurnMs*f.Rate/1000 {
			b.skipped(ctx, t, "audio_too_short")
			return voice.Result{Skipped: true}, nil
		}
		b.remember(t.ID, speakerName(t), t.Transcript)
	}
	// Native has no Stage B: the model must not be told to answer [SKIP].
	instructions := strings.TrimSpace(strings.ReplaceAll(r.Instructions, decision.SkipInstruction, ""))
	res, err := b.answer(ctx, t, audio, "", instructions, out)
	if err == nil {
		p.answered()
	}
	return voice.Result{Spoken: res.spoken, Text: res.transcript, Skipped: res.transcript == "" && err == nil}, err
}

// brain generates the reply text, applies Stage B and has the model voice it.
func (p *Responder) brain(ctx context.Context, b provider, r *voice.Reply, t *Turn, out audioOut) (voice.Result, error) {
	s, err := p.opts.Gen.Stream(ctx, llm.GenerateRequest{Model: p.opts.Model, Instructions: r.Instructions,
		Messages: r.Messages, MaxOutputTokens: p.opts.MaxTokens})
	if err != nil {
		return voice.Result{}, fmt.Errorf("voice: generate: %w", err)
	}
	defer s.Close()
	r.Mark(voice.PhaseFirstToken, p.now())
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
	r.Mark(voice.PhaseFirstSentence, p.now())
	if t != nil {
		b.remember(t.ID, speakerName(t), t.Transcript)
	}
	res, err := b.answer(ctx, t, nil, text, "", out)
	if err == nil {
		p.answered()
	}
	spoken := text
	if res.interrupted {
		spoken = res.spoken
	}
	return voice.Result{Spoken: spoken, Text: text, StageB: stageB}, err
}

// TakeBack implements voice.TakeBacker: after a false end the turn t and the answer to it leave
// the provider's conversation and the summary (docs/realtime.md, "A false end").
func (p *Responder) TakeBack(t *voice.Turn) {
	p.mu.Lock()
	b := p.b
	p.mu.Unlock()
	if b != nil && t != nil {
		b.takeBack(t.ID)
	}
}

// now is the Responder's clock (Config.Now, else time.Now).
func (p *Responder) now() time.Time {
	if p.cfg.Now != nil {
		return p.cfg.Now()
	}
	return time.Now()
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

// toFormat returns audio in the provider's input format (24 kHz mono for OpenAI, 16 kHz mono
// for Gemini), from the session's listening format (48 kHz stereo, or what it was set to).
func toFormat(audio []int16, f, to pcm.Format) ([]int16, error) {
	if f == to || f.Rate == 0 {
		return audio, nil
	}
	rs, err := resample.New(f, to)
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
