package gemini

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Transcriber transcribes speech with the Live API's input transcription (inputTranscription),
// the words Gemini itself heard: what a voice session decides on when the Gemini Live API
// speaks for it. The Live API has no transcription-only session, so each utterance is one
// activity (activityStart, the audio, activityEnd) on a connection of its own whose model is
// told to stay silent and may answer at most one token (MaxOutputTokens): the transcription is
// the product, the model's turn a cost. Connections are kept between utterances (at most
// maxIdle idle; one per concurrent utterance), each handed out only once the model's turn of
// its last utterance has ended, so no stale message is read as the next one's.
type Transcriber struct {
	cfg Config

	mu     sync.Mutex // guards following
	idle   []*Conn
	closed bool
	wg     sync.WaitGroup // drains: connections finishing their model turn
}

// transcribePrompt keeps the transcription connection's model quiet.
const transcribePrompt = "You only listen. Never answer, comment or speak: stay silent."

// maxIdle bounds the idle transcription connections kept.
const maxIdle = 4

// drainTimeout bounds the wait for the model's turn after a transcription.
const drainTimeout = 10 * time.Second

// NewTranscriber returns a Transcriber dialling cfg's endpoint, key and model; the rest of cfg
// is set for transcription (manual activity, a silent model, compression on).
func NewTranscriber(cfg Config) *Transcriber {
	cfg.Instructions, cfg.ManualActivity, cfg.MaxOutputTokens = transcribePrompt, true, 1
	cfg.Handle, cfg.Voice, cfg.Tools, cfg.CompressionTriggerTokens = "", "", nil, 0
	return &Transcriber{cfg: cfg}
}

// Model returns the Live model the Transcriber dials.
func (t *Transcriber) Model() string { return t.cfg.Model }

// ErrTranscriberClosed is returned by Transcribe after Close.
var ErrTranscriberClosed = errors.New("gemini: transcriber closed")

// Transcribe returns what Gemini heard in pcm16 mono audio at rate (16000 is the API's own). A
// connection that fails before the audio was sent is replaced once.
func (t *Transcriber) Transcribe(ctx context.Context, pcm []byte, rate int) (string, error) {
	return t.TranscribeMetered(ctx, pcm, rate, nil)
}

// TranscribeMetered is Transcribe that also reports the usage (usageMetadata) of the model's
// turn the audio started to used, when it is not nil: each message that carries some, which
// may come after it returned (the connection drains the turn in the background).
func (t *Transcriber) TranscribeMetered(ctx context.Context, pcm []byte, rate int, used func(Usage)) (string, error) {
	for attempt := 0; ; attempt++ {
		c, reused, err := t.take(ctx)
		if err != nil {
			return "", err
		}
		text, sent, err := t.transcribe(ctx, c, pcm, rate, used)
		if err == nil {
			return text, nil
		}
		_ = c.Close()
		if sent || !reused || attempt > 0 || ctx.Err() != nil {
			return "", fmt.Errorf("gemini: transcribe: %w", err)
		}
	}
}

// take returns an idle connection, else dials one.
func (t *Transcriber) take(ctx context.Context) (*Conn, bool, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, false, ErrTranscriberClosed
	}
	if n := len(t.idle); n > 0 {
		c := t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		return c, true, nil
	}
	t.mu.Unlock()
	c, err := Open(ctx, t.cfg)
	if err != nil {
		return nil, false, fmt.Errorf("gemini: transcribe: %w", err)
	}
	return c, false, nil
}

// transcribe sends one activity and reads its input transcription: the pieces until one
// marked finished, or the model's turnComplete. sent reports whether the audio went out. On
// success the connection drains the model's turn in the background and goes back to idle.
func (t *Transcriber) transcribe(ctx context.Context, c *Conn, pcm []byte, rate int, used func(Usage)) (text string, sent bool, err error) {
	if err := c.ActivityStart(); err != nil {
		return "", false, err
	}
	for a := pcm; len(a) > 0; {
		n := min(len(a), rate/10*2) // 100 ms chunks
		if err := c.SendAudio(a[:n], rate); err != nil {
			return "", false, err
		}
		a = a[n:]
	}
	if err := c.ActivityEnd(); err != nil {
		return "", false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	var b strings.Builder
	going := false // goAway: the connection ends soon, it is not kept
	for {
		ev, err := c.Next()
		if IsMalformed(err) {
			continue
		}
		if err != nil {
			stop()
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return "", true, err
		}
		b.WriteString(ev.InputTranscript)
		if ev.Usage != nil && used != nil {
			used(*ev.Usage)
		}
		going = going || ev.Kind == EventGoAway
		if !ev.InputFinished && !ev.TurnComplete {
			continue
		}
		switch {
		case !stop() || going: // ctx ended meanwhile (c is closed), or c ends soon
			_ = c.Close()
		case ev.TurnComplete:
			t.release(c)
		default:
			t.drain(c, used)
		}
		return strings.TrimSpace(b.String()), true, nil
	}
}

// drain reads c until the model's turn ends (reporting its usage to used, when not nil), then
// makes it idle (or closes it).
func (t *Transcriber) drain(c *Conn, used func(Usage)) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		_ = c.Close()
		return
	}
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		timer := time.AfterFunc(drainTimeout, func() { _ = c.Close() })
		defer timer.Stop()
		for {
			ev, err := c.Next()
			if IsMalformed(err) {
				continue
			}
			if err != nil || ev.Kind == EventGoAway {
				_ = c.Close()
				return
			}
			if ev.Usage != nil && used != nil {
				used(*ev.Usage)
			}
			if ev.TurnComplete {
				break
			}
		}
		if timer.Stop() {
			t.release(c)
		}
	}()
}

// release makes c idle, or closes it when enough are idle or the Transcriber is closed.
func (t *Transcriber) release(c *Conn) {
	t.mu.Lock()
	if !t.closed && len(t.idle) < maxIdle {
		t.idle = append(t.idle, c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// Close closes the idle connections and waits for the draining ones.
func (t *Transcriber) Close() error {
	t.mu.Lock()
	t.closed = true
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		_ = c.Close()
	}
	t.wg.Wait()
	return nil
}
