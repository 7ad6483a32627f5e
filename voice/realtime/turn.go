package realtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	llmrt "github.com/banterbot/banter/llm/realtime"
)

// appendChunk is the samples per input_audio_buffer.append: 100 ms.
const appendChunk = 2400

// minTurnSamples is the shortest audio the API commits: 100 ms.
const minTurnSamples = 2400

// Turn is one voice turn as the session hands it over, after Stage A.
type Turn struct {
	ID          string
	SpeakerID   string
	SpeakerName string
	// Transcript is the turn's text (from the session's transcription); it
	// goes into the summary a new session starts with.
	Transcript string
	// Audio is the utterance as pcm16 24 kHz mono (what audio.Listener
	// delivers with ListenerConfig.Format = pcm.Mono24k()). Native only;
	// it is read during Respond and not retained.
	Audio []int16
	// EndedAt is when the speech ended (for the request latency).
	EndedAt time.Time
	// Decision is Stage A's verdict. Only an allowed decision lets audio
	// reach the model.
	Decision decision.Decision
}

// TextSource is a streamed reply from the brain; *llm.TextStream is one.
type TextSource interface {
	Next() bool
	Delta() string
	Err() error
}

var _ TextSource = (*llm.TextStream)(nil)

// Respond is the native strategy's entry point, called with every turn
// Stage A decided on. An admitted turn's audio is forwarded
// (input_audio_buffer.append in 100 ms chunks, commit) and a response
// requested; the model's audio is played through the Sink. A turn Stage A
// did not admit is logged as realtime_reply_skipped and never reaches the
// model. Respond waits (within ctx) until the previous reply has finished
// playing; it returns once the response is requested, not when it is done
// (see Wait).
func (b *Bridge) Respond(ctx context.Context, t *Turn) error {
	if b.cfg.Strategy != StrategyNative {
		return fmt.Errorf("realtime: respond: strategy is %s, not native", b.cfg.Strategy)
	}
	if !t.Decision.Allowed() {
		b.skipped(ctx, t, t.Decision.Reason.String())
		return nil
	}
	if len(t.Audio) < minTurnSamples {
		b.skipped(ctx, t, "audio_too_short")
		return nil
	}
	b.turnMu.Lock()
	defer b.turnMu.Unlock()
	conn, gen, err := b.ready(ctx)
	if err != nil {
		return fmt.Errorf("realtime: respond: %w", err)
	}
	if err := b.forward(ctx, conn, t.Audio); err != nil {
		return err
	}
	b.hist.add(speakerName(t), t.Transcript, false)
	return b.send(ctx, conn, b.newResponse(t, gen), t, llmrt.ResponseCreateCommand{Metadata: turnMetadata(t)})
}

// forward appends audio (24 kHz mono) in 100 ms chunks and commits it: the
// turn becomes a user item of the model's conversation. Call with turnMu.
func (b *Bridge) forward(ctx context.Context, conn *llmrt.Conn, audio []int16) error {
	for a := audio; len(a) > 0; {
		n := min(len(a), appendChunk)
		b.pcmBuf = pcm.AppendBytes(b.pcmBuf[:0], a[:n])
		if err := conn.AppendAudio(ctx, b.pcmBuf); err != nil {
			return fmt.Errorf("realtime: forward: append audio: %w", err)
		}
		a = a[n:]
	}
	if err := conn.Send(ctx, llmrt.InputAudioCommitCommand{}); err != nil {
		return fmt.Errorf("realtime: forward: commit: %w", err)
	}
	return nil
}

// SpeakReply is the brain strategy's entry point: it reads the brain's
// streamed reply through Stage B (decision.StreamFilter). A [SKIP] (or an
// empty reply) is logged as realtime_reply_skipped and nothing is sent to
// the model; otherwise the cleaned text is spoken with Speak. It returns
// the text spoken ("" when skipped).
func (b *Bridge) SpeakReply(ctx context.Context, t *Turn, src TextSource) (string, error) {
	var f decision.StreamFilter
	var sb strings.Builder
	for src.Next() {
		sb.WriteString(f.Push(src.Delta()))
	}
	if err := src.Err(); err != nil {
		b.skipped(ctx, t, "generation_failed")
		return "", fmt.Errorf("realtime: speak reply: %w", err)
	}
	rest, reason := f.Finish()
	sb.WriteString(rest)
	text := strings.TrimSpace(sb.String())
	if f.Skipped() || text == "" {
		r := reason.String()
		if !f.Skipped() {
			r = "empty_reply"
		}
		b.skipped(ctx, t, r)
		return "", nil
	}
	if t != nil {
		b.hist.add(speakerName(t), t.Transcript, false)
	}
	return text, b.Speak(ctx, t, text)
}

// speakPrompt makes the realtime model voice given text verbatim.
const speakPrompt = "Read the text below aloud exactly as written, in your usual voice and tone. " +
	"Do not add, drop or change any words, and say nothing else.\n\nText:\n"

// Speak has the realtime model say text (the brain's reply, or a
// greeting): a response whose instructions are the text to voice. t may
// be nil. It waits for the previous reply to finish playing and returns
// once the response is requested.
func (b *Bridge) Speak(ctx context.Context, t *Turn, text string) error {
	text = strings.TrimSpace(decision.StripSentinels(text))
	if text == "" {
		b.skipped(ctx, t, "empty_reply")
		return nil
	}
	b.turnMu.Lock()
	defer b.turnMu.Unlock()
	conn, gen, err := b.ready(ctx)
	if err != nil {
		return fmt.Errorf("realtime: speak: %w", err)
	}
	return b.send(ctx, conn, b.newResponse(t, gen), t, speakCommand(t, text))
}

// speakCommand is the response.create that has the model voice text.
func speakCommand(t *Turn, text string) llmrt.ResponseCreateCommand {
	return llmrt.ResponseCreateCommand{Instructions: speakPrompt + text, OutputModalities: []string{"audio"},
		Metadata: turnMetadata(t)}
}

// Wait waits until no response is in progress and nothing is playing.
func (b *Bridge) Wait(ctx context.Context) error {
	for {
		b.mu.Lock()
		r := b.resp
		b.mu.Unlock()
		if r != nil {
			select {
			case <-r.done:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return b.play.waitIdle(ctx)
	}
}

// Interrupt stops the bot at once (barge-in): queued audio is dropped and
// the frame being sent is cancelled; a response still streaming is
// cancelled (response.cancel, then its response.done is awaited, bounded
// by CancelTimeout); and the assistant item is truncated
// (conversation.item.truncate) to the audio the Sink actually accepted, so
// the model's context matches what listeners heard. It reports whether
// anything was interrupted.
func (b *Bridge) Interrupt(ctx context.Context) (bool, error) {
	s := b.play.stopNow()
	b.mu.Lock()
	r, conn, gen, last := b.resp, b.conn, b.connGen, b.lastItem
	if r != nil {
		r.muted, r.interrupted = true, true
		if s.item == r.item {
			r.played = s.played
		}
	}
	b.mu.Unlock()
	if r == nil && !s.busy {
		return false, nil
	}
	b.m.interrupted()
	var errs []error
	cancelled := false
	if r != nil && conn != nil && r.gen == gen {
		if err := conn.Send(ctx, llmrt.ResponseCancelCommand{}); err != nil {
			errs = append(errs, fmt.Errorf("realtime: interrupt: cancel: %w", err))
		} else {
			cancelled = true
			// Truncate after response.done: the item's audio is final then
			// (and the simulator refuses a truncate racing the cancel).
			wctx, stop := context.WithTimeout(ctx, b.cfg.CancelTimeout)
			select {
			case <-r.done:
			case <-wctx.Done():
			}
			stop()
		}
		b.mu.Lock()
		last = itemRef{id: r.item, gen: r.gen, audioBytes: r.audioBytes, transcript: r.transcript}
		conn, gen = b.conn, b.connGen
		b.mu.Unlock()
	}
	played := uint64(0)
	if s.item == last.id {
		played = s.played
	}
	endMs, receivedMs, truncated := b.truncate(ctx, conn, gen, last, int(played)*20)
	if r == nil && truncated {
		b.hist.amendLast(cutText(last.transcript, endMs, receivedMs))
	}
	b.log.Info("realtime_interrupted", "item_id", last.id, "played_ms", endMs, "received_ms", receivedMs,
		"cancelled", cancelled, "truncated", truncated)
	return true, errors.Join(errs...)
}

// ready waits until the socket is up, no response is in progress and
// nothing is playing; it returns the connection and its generation.
func (b *Bridge) ready(ctx context.Context) (*llmrt.Conn, uint64, error) {
	for {
		if err := b.play.waitIdle(ctx); err != nil {
			return nil, 0, fmt.Errorf("wait for playback: %w", err)
		}
		b.mu.Lock()
		conn, gen, connCh, r := b.conn, b.connGen, b.connCh, b.resp
		b.mu.Unlock()
		switch {
		case r != nil:
			select {
			case <-r.done:
			case <-b.done:
				return nil, 0, ErrClosed
			case <-ctx.Done():
				return nil, 0, fmt.Errorf("wait for response: %w", ctx.Err())
			}
		case conn == nil:
			select {
			case <-connCh:
			case <-b.done:
				return nil, 0, ErrClosed
			case <-ctx.Done():
				return nil, 0, fmt.Errorf("wait for connection: %w", ctx.Err())
			}
		default:
			return conn, gen, nil
		}
	}
}

// newResponse makes the response record of a turn on session gen.
func (b *Bridge) newResponse(t *Turn, gen uint64) *response {
	r := &response{requestedAt: b.now(), gen: gen, done: make(chan struct{})}
	if t != nil {
		r.turnID = t.ID
	}
	return r
}

// send makes r the response in progress, sends cmd (response.create) and
// logs realtime_reply_requested. Call with turnMu.
func (b *Bridge) send(ctx context.Context, conn *llmrt.Conn, r *response, t *Turn, cmd llmrt.ResponseCreateCommand) error {
	b.mu.Lock()
	b.resp = r
	b.mu.Unlock()
	if r.out == nil {
		b.play.expect(r.requestedAt)
	}
	if err := conn.Send(ctx, cmd); err != nil {
		b.mu.Lock()
		if b.resp == r {
			b.resp = nil
			close(r.done)
		}
		b.mu.Unlock()
		return fmt.Errorf("realtime: response create: %w", err)
	}
	b.m.replyRequested(b.cfg.Strategy)
	attrs := turnAttrs(b.cfg.Strategy, t)
	if t != nil && !t.EndedAt.IsZero() {
		lat := r.requestedAt.Sub(t.EndedAt)
		b.m.requestLatency(lat.Seconds())
		attrs = append(attrs, slog.Float64("latency_ms", float64(lat.Microseconds())/1000))
	}
	b.log.LogAttrs(ctx, slog.LevelInfo, "realtime_reply_requested", attrs...)
	return nil
}

// skipped logs and counts a turn that gets no realtime reply.
func (b *Bridge) skipped(ctx context.Context, t *Turn, reason string) {
	b.m.replySkipped(b.cfg.Strategy)
	attrs := append(turnAttrs(b.cfg.Strategy, t), slog.String("skip_reason", reason))
	if t != nil && !t.EndedAt.IsZero() {
		attrs = append(attrs, slog.Float64("latency_ms", float64(b.now().Sub(t.EndedAt).Microseconds())/1000))
	}
	b.log.LogAttrs(ctx, slog.LevelInfo, "realtime_reply_skipped", attrs...)
}

func turnAttrs(s Strategy, t *Turn) []slog.Attr {
	attrs := []slog.Attr{slog.String("strategy", s.String())}
	if t == nil {
		return attrs
	}
	return append(attrs, slog.String("turn_id", t.ID), slog.String("speaker_id", t.SpeakerID),
		slog.String("reason", t.Decision.Reason.String()), slog.String("signal", t.Decision.Signal.String()))
}

func turnMetadata(t *Turn) map[string]string {
	if t == nil || t.ID == "" {
		return nil
	}
	return map[string]string{"turn_id": t.ID}
}

func speakerName(t *Turn) string {
	if t.SpeakerName != "" {
		return t.SpeakerName
	}
	if t.SpeakerID != "" {
		return "user " + t.SpeakerID
	}
	return "someone"
}
