package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// TextStream is a streaming generation: an iterator over text deltas.
//
//	s, err := c.Stream(ctx, req)
//	if err != nil { ... }
//	defer s.Close()
//	for s.Next() {
//		use(s.Delta())
//	}
//	if err := s.Err(); err != nil { ... }
//
// Stream returns only once the first text delta (or the end of an empty
// answer) has arrived, so failures before any text was produced are retried
// and reported by Stream itself; Err reports failures after that
// (truncation, idle timeout, cancel). Cancelling the ctx given to Stream
// ends the stream. A TextStream is used by one goroutine; Close may be
// called from any goroutine.
type TextStream struct {
	c     *Client
	model string
	start time.Time

	src     deltaSource
	sctx    context.Context // the stream's own ctx, cancelled with a cause
	cancel  context.CancelCauseFunc
	callCtx context.Context // the caller's ctx
	idle    *time.Timer
	closed  atomic.Bool
	att     *attempt // the successful attempt, for body-error tracking

	pending    string
	hasPending bool
	delta      string
	text       strings.Builder
	err        error
	done       bool
	firstToken time.Duration
	attempts   int
	cost       float64

	closeOnce  sync.Once
	recordOnce sync.Once
}

// deltaSource yields the next text delta. ok=false with err=nil means the
// stream ended at its terminal event.
type deltaSource interface {
	next() (delta string, ok bool, err error)
	close() error
	// usage is what the terminal event reported (zero when the stream carries none).
	usage() Usage
}

// Stream starts a streaming generation (no tools). Errors are *APIError.
func (c *Client) Stream(ctx context.Context, req GenerateRequest) (*TextStream, error) {
	if req.Model == "" || req.hasTools() {
		return nil, &APIError{Op: OpStream, Model: req.Model, Kind: ErrorKindBadRequest,
			Err: errors.New("stream needs a model and takes no tools")}
	}
	var err error
	if req.Model, err = c.admit(ctx, OpStream, req.Model); err != nil {
		return nil, err
	}
	s := &TextStream{c: c, model: req.Model, start: c.now(), callCtx: ctx}
	var attempts int
	attempts, err = c.call(ctx, OpStream, req.Model, 0, func(ctx context.Context, a *attempt) error {
		return s.open(ctx, req, a)
	})
	s.attempts = attempts
	if err != nil {
		c.metrics.observeCall(OpStream, req.Model, err, c.now().Sub(s.start))
		return nil, err
	}
	return s, nil
}

// open makes one attempt: request, then read until the first delta.
func (s *TextStream) open(ctx context.Context, req GenerateRequest, a *attempt) error {
	sctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(s.c.opts.FirstByteTimeout, func() { cancel(errTimeout) })
	var src deltaSource
	if s.c.opts.API == APIChatCompletions {
		// stream_options include_usage: the last chunk carries the usage (Options.OmitStreamUsage
		// leaves it out for servers that reject the field).
		params := s.c.chatParams(req)
		if !s.c.opts.OmitStreamUsage {
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		}
		src = &chatSource{st: s.c.chat.Completions.NewStreaming(sctx, params, a.options()...)}
	} else {
		src = &responsesSource{st: s.c.responses.NewStreaming(sctx, s.c.responsesParams(req), a.options()...)}
	}
	delta, ok, err := src.next()
	for ok && delta == "" && err == nil {
		delta, ok, err = src.next()
	}
	if err != nil {
		timer.Stop()
		_ = src.close()
		cancel(nil)
		return streamErr(sctx, err)
	}
	timer.Stop() // re-armed around each read in Next
	s.src, s.sctx, s.cancel, s.idle, s.att = src, sctx, cancel, timer, a
	s.firstToken = s.c.now().Sub(s.start)
	if ok {
		s.pending, s.hasPending = delta, true
		s.c.metrics.observeFirstToken(OpStream, s.model, s.firstToken)
		return nil
	}
	s.finish(nil) // empty answer: a valid, finished stream
	return nil
}

// streamErr maps the SDK's stream failure to a cause classify understands.
func streamErr(sctx context.Context, err error) error {
	if errors.Is(context.Cause(sctx), errTimeout) {
		return fmt.Errorf("%w: %w", errTimeout, err)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return &openai.Error{StatusCode: http.StatusInternalServerError, Message: se.Message}
	}
	var syn *json.SyntaxError
	var ute *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &ute) {
		return fmt.Errorf("%w: stream event: %w", errMalformed, err)
	}
	return err
}

// Next advances to the next text delta; it returns false at the end of the
// stream or on error (see Err).
func (s *TextStream) Next() bool {
	if s.hasPending {
		s.delta, s.hasPending = s.pending, false
		s.pending = ""
		s.text.WriteString(s.delta)
		return true
	}
	if s.done {
		return false
	}
	for {
		s.idle.Reset(s.c.opts.IdleTimeout)
		delta, ok, err := s.src.next()
		s.idle.Stop()
		if err != nil {
			s.finish(err)
			return false
		}
		if !ok {
			s.finish(nil)
			return false
		}
		if delta == "" {
			continue
		}
		s.delta = delta
		s.text.WriteString(delta)
		return true
	}
}

// Delta returns the current text delta. It is valid until Next is called.
func (s *TextStream) Delta() string { return s.delta }

// Text returns all text delivered by Next so far.
func (s *TextStream) Text() string { return s.text.String() }

// Err returns the error that ended the stream early (an *APIError), or nil.
func (s *TextStream) Err() error { return s.err }

// FirstToken returns the time from the Stream call to the first text delta
// (or to the end of an empty answer), retries included.
func (s *TextStream) FirstToken() time.Duration { return s.firstToken }

// Attempts returns how many HTTP attempts Stream made.
func (s *TextStream) Attempts() int { return s.attempts }

// Close releases the stream; it is safe to call more than once and
// concurrently with Next (which then ends with a canceled error).
//
// A Close before the end (barge-in) is recorded as outcome ok: nothing
// failed. Close tears the HTTP request down by cancelling its context, so
// the connection is released even if Next is never called again.
func (s *TextStream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.cancel != nil {
			s.cancel(context.Canceled)
		}
		s.record(nil)
	})
	return nil
}

// record observes the call's outcome once (from finish or Close).
func (s *TextStream) record(err error) {
	s.recordOnce.Do(func() {
		s.c.metrics.observeCall(OpStream, s.model, err, s.c.now().Sub(s.start))
	})
}

func (s *TextStream) finish(err error) {
	if s.done {
		return
	}
	s.done = true
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.src != nil {
		_ = s.src.close()
	}
	if err != nil {
		err = streamErr(s.sctx, err)
		if errors.Is(err, errTimeout) {
			err = fmt.Errorf("%w: idle for %s", err, s.c.opts.IdleTimeout)
		}
		e := classify(s.callCtx, OpStream, s.model, http.StatusOK, nil, err, s.att.readErr())
		if s.closed.Load() {
			e.Kind, e.Retryable = ErrorKindCanceled, false
		}
		e.Attempts = s.attempts
		s.err = e
	}
	if s.cancel != nil {
		s.cancel(context.Canceled)
	}
	if s.err == nil && s.src != nil {
		s.cost = s.c.opts.Meter.Record(s.callCtx, AccountFrom(s.callCtx), s.model, s.src.usage())
	}
	s.record(s.err)
}

// Cost returns what the finished stream cost in US dollars (0 before its end or without a
// Meter).
func (s *TextStream) Cost() float64 { return s.cost }

// responsesSource reads Responses API stream events.
type responsesSource struct {
	st   *ssestream.Stream[responses.ResponseStreamEventUnion]
	used Usage
}

func (r *responsesSource) next() (string, bool, error) {
	for r.st.Next() {
		ev := r.st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			return ev.Delta, true, nil
		case "response.completed", "response.incomplete":
			r.used = responsesUsage(ev.Response.Usage)
			return "", false, nil
		case "response.failed":
			return "", false, &openai.Error{StatusCode: http.StatusInternalServerError,
				Code: string(ev.Response.Error.Code), Message: ev.Response.Error.Message}
		case "error":
			return "", false, &openai.Error{StatusCode: http.StatusInternalServerError, Code: ev.Code, Message: ev.Message}
		}
	}
	if err := r.st.Err(); err != nil {
		return "", false, err
	}
	return "", false, errTruncated
}

func (r *responsesSource) close() error { return r.st.Close() }

func (r *responsesSource) usage() Usage { return r.used }

// chatSource reads chat completion chunks. The end is [DONE] or EOF after a
// chunk with finish_reason; EOF without finish_reason is a truncation.
type chatSource struct {
	st       *ssestream.Stream[openai.ChatCompletionChunk]
	finished bool
	used     Usage
}

func (c *chatSource) next() (string, bool, error) {
	for c.st.Next() {
		ch := c.st.Current()
		if ch.JSON.Usage.Valid() && ch.Usage.TotalTokens > 0 {
			c.used = chatUsage(ch.Usage) // the usage chunk, after the last choice (include_usage)
		}
		if len(ch.Choices) == 0 {
			continue // usage-only chunk
		}
		choice := ch.Choices[0]
		if choice.FinishReason != "" {
			c.finished = true
		}
		if choice.Delta.Content != "" {
			return choice.Delta.Content, true, nil
		}
	}
	if err := c.st.Err(); err != nil {
		return "", false, err
	}
	if !c.finished {
		return "", false, errTruncated
	}
	return "", false, nil
}

func (c *chatSource) close() error { return c.st.Close() }

// usage is the usage chunk's (zero with Options.OmitStreamUsage: none was asked for).
func (c *chatSource) usage() Usage { return c.used }
