package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
)

// Speech audio format delivered by Speak: signed 16-bit little-endian PCM,
// 24 kHz, mono (OpenAI's response_format "pcm").
const (
	SpeechSampleRate = 24000
	SpeechChannels   = 1
)

var errSpeechClosed = errors.New("llm: read from a closed speech stream")

// speechPrimeBytes is how much Speak reads before returning (one read).
const speechPrimeBytes = 4096

// SpeechStream is the streamed audio of Speak. It implements io.ReadCloser;
// Read errors after the first byte are *APIError (truncation, idle
// timeout). A SpeechStream is read by one goroutine; Close may be called
// from any goroutine and stops the download.
type SpeechStream struct {
	c       *Client
	model   string
	start   time.Time
	body    io.ReadCloser
	sctx    context.Context
	cancel  context.CancelCauseFunc
	callCtx context.Context
	idle    *time.Timer

	primed    []byte
	firstByte time.Duration
	attempts  int
	chars     int

	mu       sync.Mutex // guards following
	bytes    int64      // written by Read, read by finish (Close may run on another goroutine)
	done     bool
	closed   bool
	finalErr error
	cost     float64
}

// Speak synthesises text with /v1/audio/speech (response_format pcm) and
// returns the audio (s16le, 24 kHz, mono) as it streams in. It returns once
// the first audio bytes arrived, so failures before any audio are retried
// and reported here. The ReadCloser is a *SpeechStream (type-assert it for
// FirstByte); Close it to stop the download.
func (c *Client) Speak(ctx context.Context, model, voice, text string) (io.ReadCloser, error) {
	s, err := c.SpeakStream(ctx, model, voice, text)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// SpeakStream is Speak returning the concrete *SpeechStream.
func (c *Client) SpeakStream(ctx context.Context, model, voice, text string) (*SpeechStream, error) {
	if model == "" || voice == "" || text == "" {
		return nil, &APIError{Op: OpSpeak, Model: model, Kind: ErrorKindBadRequest,
			Err: errors.New("speak needs a model, a voice and text")}
	}
	model, err := c.admit(ctx, OpSpeak, model)
	if err != nil {
		return nil, err
	}
	s := &SpeechStream{c: c, model: model, start: c.now(), callCtx: ctx, chars: utf8.RuneCountInString(text)}
	var attempts int
	attempts, err = c.call(ctx, OpSpeak, model, 0, func(ctx context.Context, a *attempt) error {
		return s.open(ctx, voice, text, a)
	})
	s.attempts = attempts
	if err != nil {
		c.metrics.observeCall(OpSpeak, model, err, c.now().Sub(s.start))
		return nil, err
	}
	return s, nil
}

func (s *SpeechStream) open(ctx context.Context, voice, text string, a *attempt) error {
	sctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(s.c.opts.FirstByteTimeout, func() { cancel(errTimeout) })
	fail := func(err error) error {
		timer.Stop()
		cancel(nil)
		if errors.Is(context.Cause(sctx), errTimeout) {
			return fmt.Errorf("%w: %w", errTimeout, err)
		}
		return err
	}
	res, err := s.c.audio.Speech.New(sctx, openai.AudioSpeechNewParams{
		Model:          model(s.model),
		Input:          text,
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: param.NewOpt(voice)},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatPCM,
	}, a.options()...)
	if err != nil {
		return fail(err)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" || mt == "text/html" {
		_ = res.Body.Close()
		return fail(fmt.Errorf("%w: speech content-type %q, want audio", errMalformed, mt))
	}
	buf := make([]byte, speechPrimeBytes)
	n, err := io.ReadAtLeast(res.Body, buf, 1)
	if err != nil {
		_ = res.Body.Close()
		// The provider took the request and answered with audio: its text is billed even
		// though no audio was read (cancelled before the first byte, or an empty body).
		s.c.opts.Meter.Record(s.callCtx, AccountFrom(s.callCtx), s.model, Usage{Characters: s.chars})
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("speech: %w (empty body)", errTruncated)
		}
		return fail(err)
	}
	timer.Stop()
	s.body, s.sctx, s.cancel, s.idle = res.Body, sctx, cancel, timer
	s.primed = buf[:n]
	s.bytes = int64(n)
	s.firstByte = s.c.now().Sub(s.start)
	s.c.metrics.observeFirstByte(OpSpeak, s.model, s.firstByte)
	return nil
}

func model(m string) openai.SpeechModel { return m }

// Read implements io.Reader over the PCM bytes.
func (s *SpeechStream) Read(p []byte) (int, error) {
	s.mu.Lock()
	done, closed, ferr := s.done, s.closed, s.finalErr
	s.mu.Unlock()
	switch {
	case closed:
		return 0, errSpeechClosed
	case len(s.primed) > 0:
		n := copy(p, s.primed)
		s.primed = s.primed[n:]
		return n, nil
	case done && ferr != nil:
		return 0, ferr
	case done:
		return 0, io.EOF
	}
	s.idle.Reset(s.c.opts.IdleTimeout)
	n, err := s.body.Read(p)
	s.idle.Stop()
	// A Close on another goroutine (a barge-in's context.AfterFunc) reads bytes in finish.
	s.mu.Lock()
	s.bytes += int64(n)
	s.mu.Unlock()
	if err == io.EOF {
		s.finish(nil)
		return n, io.EOF
	}
	if err != nil {
		return n, s.finish(err)
	}
	return n, nil
}

// FirstByte returns the time from the Speak call to the first audio byte,
// retries included.
func (s *SpeechStream) FirstByte() time.Duration { return s.firstByte }

// Cost returns what the speech cost in US dollars at the Meter's prices, once the stream
// ended (EOF, error or Close); 0 before.
func (s *SpeechStream) Cost() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cost
}

// Attempts returns how many HTTP attempts Speak made.
func (s *SpeechStream) Attempts() int { return s.attempts }

// Close stops the download and releases the connection. Safe to call more
// than once.
func (s *SpeechStream) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel(context.Canceled)
	s.finish(nil)
	return nil
}

// finish records the outcome once and returns the error Read should report.
func (s *SpeechStream) finish(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.finalErr
	}
	s.done = true
	s.idle.Stop()
	_ = s.body.Close()
	if err != nil {
		if errors.Is(context.Cause(s.sctx), errTimeout) {
			err = fmt.Errorf("%w: idle for %s: %w", errTimeout, s.c.opts.IdleTimeout, err)
		}
		e := classify(s.callCtx, OpSpeak, s.model, http.StatusOK, nil, err, err)
		if s.closed {
			e.Kind, e.Retryable = ErrorKindCanceled, false
		}
		e.Attempts = s.attempts
		s.finalErr = e
	}
	s.cancel(context.Canceled)
	// The text was sent whole; the audio is what was received (a barge-in cuts it short).
	s.cost = s.c.opts.Meter.Record(s.callCtx, AccountFrom(s.callCtx), s.model, Usage{Characters: s.chars,
		AudioSecondsOut: float64(s.bytes) / (SpeechSampleRate * SpeechChannels * 2)})
	// A Close before EOF (barge-in) is recorded as ok: nothing failed.
	s.c.metrics.observeCall(OpSpeak, s.model, s.finalErr, s.c.now().Sub(s.start))
	return s.finalErr
}
