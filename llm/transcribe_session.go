package llm

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/llm/realtime"
)

// OpenTranscription opens a realtime transcription session (the Realtime API with
// ?intent=transcription) on the client's provider: the caller commits spans of one stream of
// speech as it goes and gets each one's transcript while it goes on (realtime.Transcriber).
// Providers without the Realtime API refuse the handshake; the caller then uploads
// (Transcribe).
func (c *Client) OpenTranscription(ctx context.Context, opts realtime.TranscriptionOptions) (*realtime.Transcriber, error) {
	var err error
	if opts.Model, err = c.admit(ctx, OpTranscribe, opts.Model); err != nil {
		return nil, err
	}
	d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second, Proxy: http.ProxyFromEnvironment}
	if t, ok := c.opts.HTTPClient.Transport.(*http.Transport); ok {
		d.Proxy = t.Proxy
		if t.TLSClientConfig != nil {
			d.TLSClientConfig = t.TLSClientConfig.Clone()
		}
	}
	// Each completed span is metered, charged to the Account of ctx (the speaker's session).
	acct, onUsage := AccountFrom(ctx), opts.OnUsage
	opts.OnUsage = func(u realtime.TranscriptionUsage) {
		c.opts.Meter.Record(ctx, acct, opts.Model, sessionTranscriptionUsage(u))
		if onUsage != nil {
			onUsage(u)
		}
	}
	tr, err := realtime.OpenTranscriber(ctx, realtime.Config{URL: c.opts.BaseURL, APIKey: c.opts.APIKey, Dialer: d, Logger: c.log}, opts)
	if err != nil {
		return nil, fmt.Errorf("llm: open transcription: %w", err)
	}
	return tr, nil
}

// sessionTranscriptionUsage reads the usage of a transcription session's completed span.
func sessionTranscriptionUsage(u realtime.TranscriptionUsage) Usage {
	if u.Type == "duration" {
		return Usage{AudioSecondsIn: u.Seconds}
	}
	return Usage{InputTokens: u.InputTokens, AudioInputTokens: u.InputTokenDetails.AudioTokens, OutputTokens: u.OutputTokens}
}
