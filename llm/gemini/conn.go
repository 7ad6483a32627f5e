package gemini

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
	"google.golang.org/genai"

	llmrt "github.com/banterbot/banter/llm/realtime"
)

// DefaultBaseURL is the Gemini Developer API's root.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Config is one Live connection's endpoint, key, model and setup.
type Config struct {
	// BaseURL is the API root: https://… (dialled as wss), or http://… / ws://… (a simulator,
	// dialled as ws). Empty is DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-goog-api-key (by google.golang.org/genai).
	APIKey string
	// Model is a Live model, with or without "models/".
	Model string
	// Instructions are the system instruction.
	Instructions string
	// Voice is a prebuilt voice name ("Kore"); empty leaves the model's.
	Voice string
	// ManualActivity disables the server's automatic activity detection: the client marks each
	// turn with ActivityStart and ActivityEnd.
	ManualActivity bool
	// Handle resumes the session it was issued for (the conversation is kept by the server).
	Handle string
	// CompressionTriggerTokens turns on context window compression: a sliding window from this
	// many tokens to half of it. 0 turns it on with the server's defaults; -1 leaves it off.
	CompressionTriggerTokens int
	// Tools are function declarations offered to the model.
	Tools []*genai.Tool
	// MaxOutputTokens bounds each model turn (0: the model's own bound).
	MaxOutputTokens int
	// Metrics counts connects, server messages, malformed ones and audio bytes in the
	// banter_realtime_* families (llmrt.NewMetricsFor(reg, "gemini")); nil counts nothing.
	Metrics *llmrt.Metrics
}

// Conn is one Live WebSocket connection through google.golang.org/genai. Sends are safe for
// concurrent use (the SDK's are not: Conn serialises them); Next must be called from one
// goroutine (the read loop). Conn starts no goroutines of its own after Open returns.
type Conn struct {
	sess *genai.Session
	m    *llmrt.Metrics

	writeMu sync.Mutex // serialises the SDK's writes
}

// Open dials the Live endpoint and sends the setup; it returns once setupComplete arrived.
//
// The SDK's Connect takes no context for its dial (gorilla's default dialer, a 45 s handshake
// timeout): when ctx ends first, Open returns ctx's error at once and the dial is abandoned to
// a goroutine that closes its session when the dial returns.
func Open(ctx context.Context, cfg Config) (*Conn, error) {
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: cfg.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: wsBase(cfg.BaseURL), APIVersion: "v1beta"}})
	if err != nil {
		return nil, fmt.Errorf("gemini: open: %w", err)
	}
	type result struct {
		s   *genai.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := client.Live.Connect(context.WithoutCancel(ctx), strings.TrimPrefix(cfg.Model, "models/"), cfg.connectConfig())
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			err := asCloseError(r.err)
			var ce *CloseError
			if errors.As(err, &ce) {
				cfg.Metrics.Connect("refused")
			} else {
				cfg.Metrics.Connect("error")
			}
			return nil, fmt.Errorf("gemini: open: %w", err)
		}
		cfg.Metrics.Connect("ok")
		return &Conn{sess: r.s, m: cfg.Metrics}, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.s != nil {
				_ = r.s.Close()
			}
		}()
		return nil, fmt.Errorf("gemini: open: %w", ctx.Err())
	}
}

// wsBase turns an API root into the base URL the SDK's Live client dials: http becomes ws
// (the SDK dials wss for any scheme but ws and wss), with a trailing slash.
func wsBase(base string) string {
	if base == "" {
		base = DefaultBaseURL
	}
	if rest, ok := strings.CutPrefix(base, "http://"); ok {
		base = "ws://" + rest
	}
	return strings.TrimSuffix(base, "/") + "/"
}

// connectConfig is the setup: audio out with both transcriptions, resumption always on (so a
// goAway or a drop can continue the conversation), compression unless turned off.
func (cfg Config) connectConfig() *genai.LiveConnectConfig {
	c := &genai.LiveConnectConfig{
		ResponseModalities:       []genai.Modality{genai.ModalityAudio},
		InputAudioTranscription:  &genai.AudioTranscriptionConfig{},
		OutputAudioTranscription: &genai.AudioTranscriptionConfig{},
		SessionResumption:        &genai.SessionResumptionConfig{Handle: cfg.Handle},
		Tools:                    cfg.Tools,
		MaxOutputTokens:          int32(min(cfg.MaxOutputTokens, 1<<30)),
	}
	if cfg.Instructions != "" {
		c.SystemInstruction = genai.NewContentFromText(cfg.Instructions, genai.RoleUser)
		c.SystemInstruction.Role = ""
	}
	if cfg.Voice != "" {
		c.SpeechConfig = &genai.SpeechConfig{VoiceConfig: &genai.VoiceConfig{PrebuiltVoiceConfig: &genai.PrebuiltVoiceConfig{VoiceName: cfg.Voice}}}
	}
	if cfg.ManualActivity {
		c.RealtimeInputConfig = &genai.RealtimeInputConfig{AutomaticActivityDetection: &genai.AutomaticActivityDetection{Disabled: true}}
	}
	if n := int64(cfg.CompressionTriggerTokens); n >= 0 {
		c.ContextWindowCompression = &genai.ContextWindowCompressionConfig{SlidingWindow: &genai.SlidingWindow{}}
		if n > 0 {
			target := n / 2
			c.ContextWindowCompression.TriggerTokens = &n
			c.ContextWindowCompression.SlidingWindow.TargetTokens = &target
		}
	}
	return c
}

// SendAudio sends pcm16 mono audio at rate (16000 is the API's own) as realtimeInput.audio.
// It does not keep pcm.
func (c *Conn) SendAudio(pcm []byte, rate int) error {
	c.m.AudioSent(len(pcm))
	return c.write(func() error {
		return c.sess.SendRealtimeInput(genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: fmt.Sprintf("audio/pcm;rate=%d", rate), Data: pcm}})
	}, "audio")
}

// ActivityStart marks the start of a member's turn (ManualActivity); it interrupts the model.
func (c *Conn) ActivityStart() error {
	return c.write(func() error {
		return c.sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityStart: &genai.ActivityStart{}})
	}, "activityStart")
}

// ActivityEnd marks the end of a member's turn (ManualActivity); the model answers it.
func (c *Conn) ActivityEnd() error {
	return c.write(func() error {
		return c.sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityEnd: &genai.ActivityEnd{}})
	}, "activityEnd")
}

// AudioStreamEnd tells the server's activity detection that the audio paused (automatic
// activity detection only): the turn so far ends.
func (c *Conn) AudioStreamEnd() error {
	return c.write(func() error { return c.sess.SendRealtimeInput(genai.LiveRealtimeInput{AudioStreamEnd: true}) }, "audioStreamEnd")
}

// SendText adds a user text turn (clientContent, turnComplete): the model answers it, and it
// interrupts the model's turn in progress.
func (c *Conn) SendText(text string) error {
	return c.write(func() error {
		return c.sess.SendClientContent(genai.LiveClientContentInput{Turns: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}, TurnComplete: genai.Ptr(true)})
	}, "clientContent")
}

// SendContext adds a user text turn without asking for an answer (clientContent,
// turnComplete false): it joins the conversation the model answers next. The Live API has no
// per-response instructions; this is how a turn's own context reaches the model.
func (c *Conn) SendContext(text string) error {
	return c.write(func() error {
		return c.sess.SendClientContent(genai.LiveClientContentInput{Turns: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}, TurnComplete: genai.Ptr(false)})
	}, "clientContent")
}

// ToolResult answers one function call.
type ToolResult struct {
	ID, Name string
	Response map[string]any
}

// SendToolResponse answers function calls by id.
func (c *Conn) SendToolResponse(results ...ToolResult) error {
	frs := make([]*genai.FunctionResponse, 0, len(results))
	for _, r := range results {
		frs = append(frs, &genai.FunctionResponse{ID: r.ID, Name: r.Name, Response: r.Response})
	}
	return c.write(func() error { return c.sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: frs}) }, "toolResponse")
}

func (c *Conn) write(f func() error, what string) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := f(); err != nil {
		return fmt.Errorf("gemini: send %s: %w", what, err)
	}
	return nil
}

// errMalformed marks a server message that could not be read; the connection is still up.
var errMalformed = errors.New("gemini: malformed server message")

// IsMalformed reports whether Next failed on one unreadable message (skip it and go on)
// rather than on the connection.
func IsMalformed(err error) bool { return errors.Is(err, errMalformed) }

// Next reads the next server message. A closed connection is a *CloseError (use
// errors.As); a message that cannot be read is IsMalformed and the connection stays usable.
func (c *Conn) Next() (Event, error) {
	m, err := c.sess.Receive()
	if err != nil {
		if msg := err.Error(); strings.HasPrefix(msg, "invalid message format") || strings.HasPrefix(msg, "received error in response") {
			c.m.Malformed()
			return Event{}, fmt.Errorf("%w: %w", errMalformed, err)
		}
		return Event{}, fmt.Errorf("gemini: read: %w", asCloseError(err))
	}
	ev, err := FromMessage(m)
	if err != nil {
		c.m.Malformed()
		return Event{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if c.m != nil {
		c.m.Event(ev.Kind.String())
		for _, a := range ev.Audio {
			c.m.AudioReceived(len(a))
		}
	}
	return ev, nil
}

// Close closes the socket; a Next in progress returns.
func (c *Conn) Close() error {
	if err := c.sess.Close(); err != nil {
		return fmt.Errorf("gemini: close: %w", err)
	}
	return nil
}

// asCloseError turns the WebSocket's close into a *CloseError (other errors pass through).
func asCloseError(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return &CloseError{Code: ce.Code, Reason: ce.Text}
	}
	return err
}
