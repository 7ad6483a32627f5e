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
	"unicode/utf8"

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

// TakeBacker is a Responder that keeps a conversation of its own (voice/realtime's, on the
// provider's side). After a false end (the member went on with the turn its reply answered; the
// session drops the turn and the reply from its timeline and answers the whole as a new turn),
// the session calls TakeBack with that turn, on the session loop once the reply has ended, so
// the Responder drops the turn and its answer from its conversation too, before it answers the
// whole. TakeBack must not block.
type TakeBacker interface {
	TakeBack(t *Turn)
}

// SpokenEventNamer is a Responder that names the log event of a turn it answered aloud
// itself: a realtime turn is no STT pipeline turn, so voice/realtime's Responder logs
// realtime_reply_spoken where the STT pipeline logs stt_pipeline_reply_spoken.
type SpokenEventNamer interface {
	SpokenEvent() string
}

// spokenEvent is the log event of a turn r answered aloud.
func spokenEvent(r Responder) string {
	if n, ok := r.(SpokenEventNamer); ok {
		return n.SpokenEvent()
	}
	return "stt_pipeline_reply_spoken"
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
	// Hold, when not nil, makes this a speculative reply, started before the
	// end of the turn was confirmed: it may generate and synthesise at once,
	// but must not write to Out (nor return) before Hold is closed; if ctx
	// ends first, nothing was played and the reply is discarded. Only a
	// Responder that implements holding gets one (STTResponder does).
	Hold <-chan struct{}
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
	_ audioHolder = (*STTResponder)(nil)
)

// holdsAudio: STTResponder honours Reply.Hold.
func (p *STTResponder) holdsAudio() {}

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

// generated is what the generate stage leaves: the text Stage B let through,
// and whether the stream failed or was skipped.
type generated struct {
	filter decision.StreamFilter
	text   strings.Builder
	err    error // the stream broke (not a cut by ctx)
}

// spoken is what the speak stage leaves: the text played (up to a cut) and
// why it stopped early, if it did.
type spoken struct {
	text  strings.Builder
	err   error
	stage string // of err: "send" or "tts"
}

// Respond implements Responder: generate (text → Stage B → sentences, each
// sent to TTS at once) on one goroutine while speak plays the sentences'
// audio in order on this one.
//
// A fault mid-reply ends it cleanly: a generation stream that breaks leaves
// the complete sentences already cut to be spoken and drops its unfinished
// rest; a TTS stream that breaks, or a connection that fails, stops the
// speech at once. Either way Result.Spoken is what was played and the error
// names the stage (voice: generate / voice: tts / voice: send).
func (p *STTResponder) Respond(ctx context.Context, r *Reply) (Result, error) {
	now := p.Now
	if now == nil {
		now = time.Now
	}
	stream, err := p.Gen.Stream(llm.WithSlot(ctx, SlotGeneration), llm.GenerateRequest{Model: p.Model, Instructions: r.Instructions,
		Messages: r.Messages, MaxOutputTokens: p.MaxTokens})
	if err != nil {
		if !awaitHold(ctx, r.Hold) {
			return Result{}, ctx.Err() // a speculative reply discarded before its turn ended
		}
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
	var gen generated
	wg.Go(func() { p.generate(ctx, stream, r, queue, &gen, &wg, now) })
	sp := p.speak(ctx, cancel, r, queue)
	cancel()
	wg.Wait()
	return p.result(&gen, sp, r.Decision.Force)
}

// generate reads the stream: deltas → Stage B filter → sentences → one TTS
// request per sentence, started at once, queued in order for speak. It
// closes queue when done.
func (p *STTResponder) generate(ctx context.Context, stream *llm.TextStream, r *Reply, queue chan<- *speechChunk,
	g *generated, wg *sync.WaitGroup, now func() time.Time) {
	defer close(queue)
	var sent Sentencer
	var chunks []string
	say := func(c string) bool {
		c = stripDirectives(c)
		if c == "" {
			return true
		}
		g.text.WriteString(c)
		g.text.WriteByte(' ')
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
		chunks = sent.Push(chunks[:0], g.filter.Push(stream.Delta()))
		for _, c := range chunks {
			if !say(c) {
				return
			}
		}
	}
	if err := stream.Err(); err != nil && ctx.Err() == nil {
		// The stream broke mid-reply: what is left unfinished was never
		// meant to end there; it is not spoken.
		g.err = err
		return
	}
	rest, _ := g.filter.Finish()
	chunks = sent.Push(chunks[:0], rest)
	chunks = append(chunks, sent.Finish())
	for _, c := range chunks {
		if !say(c) {
			return
		}
	}
}

// speak plays the queued sentences' audio in order through r.Out until the
// queue closes. A send or TTS failure stops it (cancel: the other TTS
// requests and the generation stop too); the sentences queued after are
// drained unplayed.
func (p *STTResponder) speak(ctx context.Context, cancel context.CancelFunc, r *Reply, queue <-chan *speechChunk) *spoken {
	sp := &spoken{}
	if !awaitHold(ctx, r.Hold) {
		sp.err = ctx.Err()
	}
	for sc := range queue {
		if sp.err != nil || ctx.Err() != nil {
			continue // drain; the TTS goroutines stop on ctx
		}
		start := r.Out.Played()
		var got int
		for b := range sc.data {
			got += len(b)
			if sp.err != nil {
				continue
			}
			if err := r.Out.WritePCM(ctx, b); err != nil {
				sp.err, sp.stage = err, "send"
				cancel()
			}
		}
		switch {
		case sp.err != nil:
			sp.text.WriteString(partial(sc.text, r.Out.Played()-start, got, false))
		case sc.err != nil:
			// The sentence's audio ended early: only the share of its words
			// that the played audio can have carried was said.
			sp.err, sp.stage = sc.err, "tts"
			sp.text.WriteString(partial(sc.text, r.Out.Played()-start, got, true))
			cancel()
		default:
			sp.text.WriteString(sc.text)
			sp.text.WriteByte(' ')
		}
	}
	return sp
}

// awaitHold waits until a speculative reply may play (hold closed; a nil hold: at once): the
// generation and speech run on meanwhile. False: ctx ended first, the reply is discarded.
func awaitHold(ctx context.Context, hold <-chan struct{}) bool {
	if hold == nil {
		return true
	}
	select {
	case <-hold:
		return true
	case <-ctx.Done():
		return false
	}
}

// result is how the reply ended: Stage B's verdict on the whole text, what
// was spoken, and the error of a stage that failed.
func (p *STTResponder) result(g *generated, sp *spoken, force bool) (Result, error) {
	full := strings.TrimSpace(g.text.String())
	_, stageB := decision.ReplyDecision(decision.PipelineVoice, full, force)
	if g.filter.Skipped() {
		stageB.Outcome, stageB.Reason = decision.OutcomeDeny, decision.ReasonLLMSkip
	}
	res := Result{Spoken: strings.TrimSpace(sp.text.String()), Text: full, Skipped: g.filter.Skipped() || full == "", StageB: stageB}
	switch {
	case sp.err != nil && !errors.Is(sp.err, context.Canceled):
		p.Metrics.failure(sp.stage)
		return res, sp.err
	case g.err != nil:
		p.Metrics.failure("generation")
		return res, fmt.Errorf("voice: generate: stream broke after %d characters: %w", len(full), g.err)
	}
	return res, nil
}

// The model slots voice charges its calls to (llm.Account), named by their config sections.
const (
	SlotTranscription = "voice.sttPipeline.transcription"
	SlotReplyDecision = "voice.replyDecisionLlm"
	SlotGeneration    = "voice.generationLlm"
	SlotTTS           = "voice.sttPipeline.tts"
)

// synthesize runs one TTS request and pumps its audio into sc.data.
func (p *STTResponder) synthesize(ctx context.Context, sc *speechChunk, mark func(Phase, time.Time), now func() time.Time) {
	defer close(sc.data)
	s, err := p.TTS.SpeakStream(llm.WithSlot(ctx, SlotTTS), p.TTSModel, p.TTSVoice, sc.text)
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

// speechPerRune is about how long speech takes per character at normal speed
// (15 characters a second): the length of a sentence whose audio broke off.
const speechPerRune = 66 * time.Millisecond

// partial returns the words of a sentence that were played: the share of its
// words equal to the share of its audio that went out (played of the got
// bytes of 24 kHz mono received), with a dash marking the cut. When the
// sentence's audio broke off (broken), its full length is unknown: it is
// taken as at least what its text takes to say.
func partial(text string, played time.Duration, got int, broken bool) string {
	total := time.Duration(got/2) * time.Second / 24000
	if broken {
		total = max(total, time.Duration(utf8.RuneCountInString(text))*speechPerRune)
	}
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
