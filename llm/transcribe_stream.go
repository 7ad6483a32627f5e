package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
)

// transcribeStream is Transcribe with stream: true: it reads transcript.text.delta events
// (each handed to onDelta) up to transcript.text.done, whose text is the transcript. The
// first delta must come within FirstByteTimeout and each later event within IdleTimeout;
// failures before the first delta are retried like any call, later ones are not (the deltas
// were handed out).
func (c *Client) transcribeStream(ctx context.Context, model string, params func() openai.AudioTranscriptionNewParams,
	onDelta func(string), out Transcript, start time.Time) (Transcript, error) {
	var text strings.Builder
	var late error                                        // a failure after the first delta: not retried
	used := Usage{AudioSecondsIn: out.Duration.Seconds()} // when the done event reports none
	attempts, err := c.call(ctx, OpTranscribe, model, 0, func(ctx context.Context, a *attempt) error {
		text.Reset()
		sctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		timer := time.AfterFunc(c.opts.FirstByteTimeout, func() { cancel(errTimeout) })
		defer timer.Stop()
		st := c.audio.Transcriptions.NewStreaming(sctx, params(), a.options()...)
		defer st.Close()
		first := true
		for st.Next() {
			timer.Reset(c.opts.IdleTimeout)
			ev := st.Current()
			switch ev.Type {
			case "transcript.text.delta":
				if first {
					first = false
					c.metrics.observeFirstToken(OpTranscribe, model, c.now().Sub(start))
				}
				text.WriteString(ev.Delta)
				if onDelta != nil {
					onDelta(ev.Delta)
				}
			case "transcript.text.done":
				if ev.JSON.Text.Valid() {
					text.Reset()
					text.WriteString(ev.Text)
				}
				if ev.JSON.Usage.Valid() {
					used = Usage{InputTokens: int(ev.Usage.InputTokens), OutputTokens: int(ev.Usage.OutputTokens),
						AudioInputTokens: int(ev.Usage.InputTokenDetails.AudioTokens)}
				}
				return nil
			}
		}
		err := st.Err()
		if err == nil {
			err = errTruncated
		}
		err = streamErr(sctx, err)
		if !first {
			late = classify(ctx, OpTranscribe, model, http.StatusOK, nil, err, a.readErr())
			return nil
		}
		return err
	})
	if err == nil && late != nil {
		err = late
	}
	out.Latency = c.now().Sub(start)
	c.metrics.observeCall(OpTranscribe, model, err, out.Latency)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) {
			ae.Attempts = attempts
		}
		return Transcript{}, err
	}
	out.Text, out.Attempts = strings.TrimSpace(text.String()), attempts
	out.Usage = used
	out.Cost = c.opts.Meter.Record(ctx, AccountFrom(ctx), model, used)
	return out, nil
}
