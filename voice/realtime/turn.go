package realtime

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/decision"
	llmrt "github.com/banterbot/banter/llm/realtime"
)

// appendChunk is the samples per input_audio_buffer.append: 100 ms.
const appendChunk = 2400

// minTurnMs is the shortest turn audio forwarded: 100 ms, the least OpenAI commits.
const minTurnMs = 100

// frameBytes is 20 ms of the model's audio (pcm16 24 kHz mono).
const frameBytes = 24000 / 50 * 2

// Turn is one voice turn as the Responder hands it to the Bridge, after
// Stage A (nil: the join greeting).
type Turn struct {
	ID          string
	SpeakerID   string
	SpeakerName string
	// Transcript is the turn's text (from the session's transcription); it
	// goes into the summary a new session starts with.
	Transcript string
	// EndedAt is when the speech ended (for the request latency).
	EndedAt time.Time
	// Decision is Stage A's verdict. Only an allowed decision lets audio
	// reach the model.
	Decision decision.Decision
}

// forward appends audio (24 kHz mono) in 100 ms chunks and commits it: the
// turn becomes a user item of the model's conversation. Call with turnMu.
func (b *Bridge) forward(ctx context.Context, conn *llmrt.Conn, audio []int16) error {
	if b.unfinished {
		if err := b.clear(ctx, conn); err != nil {
			return fmt.Errorf("realtime: forward: %w", err)
		}
	}
	b.unfinished = true
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
	b.unfinished = false
	return nil
}

// clear sends input_audio_buffer.clear on conn, the session's, and counts it (Bridge.clears)
// once written: the server answers each with an input_audio_buffer.cleared, in order. A clear
// not written (ctx ended: Send does not write) or on a session that dropped is not counted.
// Clears are sent under turnMu, one at a time, so collectOrphans knows the number of its own
// before it sends it. Call with turnMu.
func (b *Bridge) clear(ctx context.Context, conn *llmrt.Conn) error {
	if !b.current(conn) {
		return fmt.Errorf("clear: %w", errSessionGone)
	}
	if err := conn.Send(ctx, llmrt.InputAudioClearCommand{}); err != nil {
		return fmt.Errorf("clear: %w", err)
	}
	b.mu.Lock()
	if b.conn == conn {
		b.clears++
	}
	b.mu.Unlock()
	b.unfinished = false
	return nil
}

// speakPrompt makes the realtime model voice given text verbatim.
const speakPrompt = "Read the text below aloud exactly as written, in your usual voice and tone. " +
	"Do not add, drop or change any words, and say nothing else.\n\nText:\n"

// speakCommand is the response.create that has the model voice text.
func speakCommand(t *Turn, text string) llmrt.ResponseCreateCommand {
	return llmrt.ResponseCreateCommand{Instructions: speakPrompt + text, OutputModalities: []string{"audio"},
		Metadata: turnMetadata(t)}
}

// current reports whether conn is the session's connection: it has not dropped since a reply
// got it from ready (a rollover, which replaces it, waits for turnMu).
func (b *Bridge) current(conn *llmrt.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.conn == conn
}

// ready waits until the socket is up and no response is in progress; it
// returns the connection and its generation.
func (b *Bridge) ready(ctx context.Context) (*llmrt.Conn, uint64, error) {
	for {
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
	if b.conn != conn {
		// The session dropped since ready (dropConn has run): nothing would end r.
		b.mu.Unlock()
		return fmt.Errorf("realtime: response create: %w", errSessionGone)
	}
	b.resp, b.last = r, r
	b.mu.Unlock()
	if err := conn.Send(ctx, cmd); err != nil {
		b.mu.Lock()
		if b.resp == r {
			b.resp = nil
			close(r.done)
		}
		b.mu.Unlock()
		return fmt.Errorf("realtime: response create: %w", err)
	}
	b.mu.Lock()
	if b.forwarding == r.turnID {
		b.forwarding = "" // the response takes the forwarded audio's items (response.created)
	}
	b.mu.Unlock()
	logRequested(ctx, b.log, b.m, b.cfg.Strategy, t, r.requestedAt)
	return nil
}

// logRequested counts and logs a reply asked of the model (realtime_reply_requested), with the
// latency from the end of the turn's speech.
func logRequested(ctx context.Context, log *slog.Logger, m *Metrics, s Strategy, t *Turn, requestedAt time.Time) {
	m.replyRequested(s)
	attrs := turnAttrs(s, t)
	if t != nil && !t.EndedAt.IsZero() {
		lat := requestedAt.Sub(t.EndedAt)
		m.requestLatency(lat.Seconds())
		attrs = append(attrs, slog.Float64("latency_ms", float64(lat.Microseconds())/1000))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "realtime_reply_requested", attrs...)
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
