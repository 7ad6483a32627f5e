package voice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
)

// Responder answers one admitted turn (or the join greeting) with speech.
// The STT pipeline's STTResponder generates text and speaks it with TTS; the
// realtime strategies (voice/realtime) implement it over the Realtime API.
//
// Respond blocks until the reply has been spoken, skipped, failed or
// interrupted. It writes audio only through r.Out (24 kHz mono pcm16 by
// default, see Reply.Out) and reports timing through r.Mark. When ctx ends
// (barge-in, leave) it must stop within one frame and return a Result whose
// Spoken is the text actually played before the cut; it returns ctx's error
// wrapped, or nil. Implementations must not keep goroutines running after
// Respond returns.
type Responder interface {
	Respond(ctx context.Context, r *Reply) (Result, error)
}

// Reply is one reply to produce.
type Reply struct {
	// Turn is the admitted turn, nil for the join greeting.
	Turn *Turn
	// Decision is Stage A's decision on Turn (zero for the greeting).
	Decision decision.Decision
	// Instructions is the system prompt: persona, voice style, participants
	// and the decision's guidance.
	Instructions string
	// Messages is the conversation, oldest first, ending with the turn.
	Messages []llm.Message
	// Out plays audio into the channel.
	Out *Playback
	// Mark records a phase of the turn at time at (safe from any goroutine;
	// only the first mark of each phase counts).
	Mark func(p Phase, at time.Time)
}

// Result is how a reply ended.
type Result struct {
	// Spoken is the text that was played, up to the cut when interrupted.
	Spoken string
	// Text is all text the model produced after Stage B (may be more than
	// Spoken).
	Text string
	// Skipped: Stage B dropped the reply ([SKIP] or empty).
	Skipped bool
	// StageB is Stage B's decision (reply_skipped or reply_accepted).
	StageB decision.Decision
}

// Generator streams text generations; *llm.Client implements it.
type Generator interface {
	Stream(ctx context.Context, req llm.GenerateRequest) (*llm.TextStream, error)
}

// Synthesizer streams speech; *llm.Client implements it.
type Synthesizer interface {
	SpeakStream(ctx context.Context, model, voice, text string) (*llm.SpeechStream, error)
}

var (
	_ Generator   = (*llm.Client)(nil)
	_ Synthesizer = (*llm.Client)(nil)
	_ Responder   = (*STTResponder)(nil)
)

// STTResponder is the stt_pipeline answer: streamed generation, cut into
// sentences as it arrives (Sentencer), Stage B on the stream (decision.
// StreamFilter: [SKIP] and directives are never spoken), one streaming TTS
// request per sentence started as soon as the sentence is ready, and the
// audio played in order while later sentences are still generated.
type STTResponder struct {
	Gen       Generator
	TTS       Synthesizer
	Model     string // generation model
	TTSModel  string
	TTSVoice  string
	MaxTokens int // 0: server default
	Logger    *slog.Logger
	Metrics   *Metrics
	Now       func() time.Time
}

// speechChunk is one sentence on its way to the speaker: the TTS goroutine
// sends its audio in pieces on data and closes it; err is set before that.
type speechChunk struct {
	text string
	data chan []byte
	err  error
}

// Respond implements Responder.
func (p *STTResponder) Respond(ctx context.Context, r *Reply) (Result, error) {
	now := p.Now
	if now == nil {
		now = time.Now
	}
	force := r.Decision.Force
	stream, err := p.Gen.Stream(ctx, llm.GenerateRequest{Model: p.Model, Instructions: r.Instructions,
		Messages: r.Messages, MaxOutputTokens: p.MaxTokens})
	if err != nil {
		p.Metrics.failure("generation")
		return Result{}, fmt.Errorf("voice: generate: %w", err)
	}
	defer stream.Close()
	r.Mark(PhaseFirstToken, now())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A cut (barge-in) must not wait for the server: close the stream.
	stopClose := context.AfterFunc(ctx, func() { stream.Close() })
	defer stopClose()
	queue := make(chan *speechChunk, 64)
	var wg sync.WaitGroup
	var genErr error
	var filter decision.StreamFilter
	var text strings.Builder

	// Reader: deltas → Stage B filter → sentences → TTS requests.
	wg.Go(func() {
		defer close(queue)
		var sent Sentencer
		var chunks []string
		speak := func(c string) bool {
			c = stripDirectives(c)
			if c == "" {
				return true
			}
			text.WriteString(c)
			text.WriteByte(' ')
			sc := &speechChunk{text: c, data: make(chan []byte, 512)}
			r.Mark(PhaseFirstSentence, now())
			wg.Go(func() { p.synthesize(ctx, sc, r.Mark, now) })
			select {
			case queue <- sc:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for stream.Next() {
			chunks = sent.Push(chunks[:0], filter.Push(stream.Delta()))
			for _, c := range chunks {
				if !speak(c) {
					return
				}
			}
		}
		if err := stream.Err(); err != nil && ctx.Err() == nil {
			genErr = err
		}
		rest, _ := filter.Finish()
		chunks = sent.Push(chunks[:0], rest)
		chunks = append(chunks, sent.Finish())
		for _, c := range chunks {
			if !speak(c) {
				return
			}
		}
	})

	// Player: this goroutine plays the chunks in order.
	var spoken strings.Builder
	var playErr error
	failStage := ""
	for sc := range queue {
		if playErr != nil || ctx.Err() != nil {
			continue // drain; the TTS goroutines stop on ctx
		}
		start := r.Out.Played()
		var got int
		for b := range sc.data {
			got += len(b)
			if playErr != nil {
				continue
			}
			if err := r.Out.WritePCM(ctx, b); err != nil {
				playErr, failStage = err, "send"
				cancel()
			}
		}
		switch {
		case playErr != nil:
			spoken.WriteString(partial(sc.text, r.Out.Played()-start, got))
		case sc.err != nil:
			playErr, failStage = sc.err, "tts"
			spoken.WriteString(partial(sc.text, r.Out.Played()-start, got))
			cancel()
		default:
			spoken.WriteString(sc.text)
			spoken.WriteByte(' ')
		}
	}
	cancel()
	wg.Wait()

	full := strings.TrimSpace(text.String())
	_, stageB := decision.ReplyDecision(decision.PipelineVoice, full, force)
	if filter.Skipped() {
		stageB.Outcome, stageB.Reason = decision.OutcomeDeny, decision.ReasonLLMSkip
	}
	res := Result{Spoken: strings.TrimSpace(spoken.String()), Text: full, Skipped: filter.Skipped() || full == "", StageB: stageB}
	switch {
	case genErr != nil && res.Spoken == "":
		p.Metrics.failure("generation")
		return res, fmt.Errorf("voice: generate: %w", genErr)
	case playErr != nil && !errors.Is(playErr, context.Canceled):
		p.Metrics.failure(failStage)
		return res, playErr
	}
	return res, nil
}

// synthesize runs one TTS request and pumps its audio into sc.data.
func (p *STTResponder) synthesize(ctx context.Context, sc *speechChunk, mark func(Phase, time.Time), now func() time.Time) {
	defer close(sc.data)
	s, err := p.TTS.SpeakStream(ctx, p.TTSModel, p.TTSVoice, sc.text)
	if err != nil {
		if ctx.Err() == nil {
			sc.err = fmt.Errorf("voice: tts: %w", err)
		}
		return
	}
	defer s.Close()
	stopClose := context.AfterFunc(ctx, func() { s.Close() })
	defer stopClose()
	mark(PhaseFirstTTSByte, now())
	for {
		// Forward whatever has arrived (up to 200 ms of 24 kHz mono): the
		// first bytes must not wait for a full buffer.
		buf := make([]byte, 9600)
		n, err := s.Read(buf)
		if n > 0 {
			select {
			case sc.data <- buf[:n]:
			case <-ctx.Done():
				return
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				sc.err = fmt.Errorf("voice: tts: %w", err)
			}
			return
		}
	}
}

// partial returns the words of a sentence that were played: the share of
// its words equal to the share of its audio that went out (played of the
// got bytes of 24 kHz mono received so far), with a dash marking the cut.
func partial(text string, played time.Duration, got int) string {
	total := time.Duration(got/2) * time.Second / 24000
	if total <= 0 || played <= 0 {
		return ""
	}
	words := strings.Fields(text)
	n := int(float64(len(words)) * float64(played) / float64(total))
	if n > len(words) {
		n = len(words)
	}
	if n == 0 {
		return ""
	}
	return strings.Join(words[:n], " ") + " —"
}

// stripDirectives removes bracketed stage directives ("[laughs]",
// "[[voice:calm]]", "[SKIP]") and markdown emphasis from a chunk to speak.
func stripDirectives(s string) string {
	if !strings.ContainsAny(s, "[*_`") {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth > 0:
		case r == '*' || r == '`' || r == '_':
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
