package realtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/redact"
)

// Config configures Dial.
type Config struct {
	// URL is the API base ("https://api.openai.com/v1", or the simulator's
	// BaseURL) or the realtime endpoint itself ("wss://.../v1/realtime").
	// http(s) becomes ws(s) and "/realtime" is appended when missing.
	URL    string
	APIKey string
	// Model is sent as ?model=.
	Model string
	// Intent, when set, is sent as ?intent= instead of a model (IntentTranscription).
	Intent string
	// Dialer is used for the handshake; nil means a dialer with a 10 s
	// handshake timeout. Set its TLSClientConfig to trust a test CA.
	Dialer *websocket.Dialer
	// Header is added to the handshake request.
	Header http.Header
	// ReadLimit bounds one server message; 0 means 16 MiB.
	ReadLimit int64
	Logger    *slog.Logger
	Metrics   *Metrics
}

// DefaultURL is the OpenAI API base.
const DefaultURL = "https://api.openai.com/v1"

// HandshakeError is a refused WebSocket upgrade (bad key, unknown model,
// rate limit...). Retryable is true for 429 and 5xx.
type HandshakeError struct {
	Status    int
	Message   string
	Retryable bool
}

// Error implements error.
func (e *HandshakeError) Error() string {
	return fmt.Sprintf("realtime: handshake refused: HTTP %d: %s", e.Status, e.Message)
}

// Conn is one Realtime API WebSocket. Commands may be sent from any
// goroutine (writes are serialised); ReadEvent must be called by a single
// goroutine, the session's read loop. Conn starts no goroutines.
//
// Conn does not reconnect: when ReadEvent fails the socket is gone, and the
// owner (voice/realtime) redials with back-off and resends its Session (and
// whatever conversation items it wants the model to remember), since only
// it knows the conversation state.
type Conn struct {
	ws      *websocket.Conn
	log     *slog.Logger
	metrics *Metrics

	wmu  sync.Mutex // guards following
	wbuf []byte

	rbuf []byte // owned by the reader

	closeOnce sync.Once
	closeErr  error
}

// Dial connects to the realtime endpoint. It does not send session.update;
// call UpdateSession next.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	u, err := realtimeURL(cfg.URL, cfg.Model, cfg.Intent)
	if err != nil {
		cfg.Metrics.observeConnect("bad_config")
		return nil, err
	}
	d := cfg.Dialer
	if d == nil {
		d = &websocket.Dialer{HandshakeTimeout: 10 * time.Second, Proxy: http.ProxyFromEnvironment}
	}
	h := http.Header{}
	for k, v := range cfg.Header {
		h[k] = v
	}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	ws, resp, err := d.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil {
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			cfg.Metrics.observeConnect("refused")
			return nil, &HandshakeError{Status: resp.StatusCode, Message: strings.TrimSpace(string(body)),
				Retryable: resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500}
		}
		cfg.Metrics.observeConnect("error")
		return nil, fmt.Errorf("realtime: dial %s: %w", redact.URL(u), err)
	}
	cfg.Metrics.observeConnect("ok")
	limit := cfg.ReadLimit
	if limit <= 0 {
		limit = 16 << 20
	}
	ws.SetReadLimit(limit)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Conn{ws: ws, log: log, metrics: cfg.Metrics}, nil
}

func realtimeURL(base, model, intent string) (string, error) {
	if base == "" {
		base = DefaultURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("realtime: url %q: want http(s)/ws(s)://host/...", base)
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("realtime: url %q: scheme %q", base, u.Scheme)
	}
	if !strings.HasSuffix(u.Path, "/realtime") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/realtime"
	}
	q := u.Query()
	switch {
	case intent != "":
		q.Set("intent", intent)
	case model == "":
		return "", errors.New("realtime: model is empty")
	default:
		q.Set("model", model)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Send writes one command. ctx bounds the write (its deadline, and its
// cancellation, which breaks the socket as a write cannot be abandoned
// half-way).
func (c *Conn) Send(ctx context.Context, cmd Command) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = cmd.AppendJSON(c.wbuf[:0])
	return c.writeLocked(ctx, cmd.Type())
}

// UpdateSession sends session.update with s.
func (c *Conn) UpdateSession(ctx context.Context, s Session) error {
	return c.Send(ctx, SessionUpdateCommand{Session: s})
}

// AppendAudio sends input_audio_buffer.append with pcm (s16le, 24 kHz,
// mono). It does not retain pcm and does not allocate in steady state
// when ctx has no Done channel.
func (c *Conn) AppendAudio(ctx context.Context, pcm []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = InputAudioAppendCommand{Audio: pcm}.AppendJSON(c.wbuf[:0])
	c.metrics.observeAudioSent(len(pcm))
	return c.writeLocked(ctx, "input_audio_buffer.append")
}

func (c *Conn) writeLocked(ctx context.Context, typ string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("realtime: send %s: %w", typ, err)
	}
	deadline, _ := ctx.Deadline()
	if err := c.ws.SetWriteDeadline(deadline); err != nil {
		return fmt.Errorf("realtime: send %s: %w", typ, err)
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = c.ws.SetWriteDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	if err := c.ws.WriteMessage(websocket.TextMessage, c.wbuf); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return fmt.Errorf("realtime: send %s: %w", typ, err)
	}
	return nil
}

// ReadEvent reads the next well-formed server event into ev (see
// Event.Decode for buffer ownership). Malformed events and binary messages
// are counted and skipped. An error means the socket is unusable: closed by
// the server (errors.As a *websocket.CloseError for the code), dropped, or
// ctx ended (which breaks the socket).
func (c *Conn) ReadEvent(ctx context.Context, ev *Event) error {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = c.ws.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	for {
		typ, r, err := c.ws.NextReader()
		if err == nil {
			c.rbuf, err = readAll(r, c.rbuf[:0])
		}
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("%w (%w)", ctx.Err(), err)
			}
			return fmt.Errorf("realtime: read: %w", err)
		}
		if typ != websocket.TextMessage {
			c.metrics.observeMalformed()
			continue
		}
		if err := ev.Decode(c.rbuf); err != nil {
			c.metrics.observeMalformed()
			c.log.Debug("realtime_malformed_event", "err", err, "bytes", len(c.rbuf))
			continue
		}
		c.metrics.observeEvent(ev)
		return nil
	}
}

// readAll reads r to EOF into buf, reusing its capacity.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Close sends a normal close frame (best effort, at most 1 s) and closes
// the socket. It may be called concurrently with Send and ReadEvent (which
// then fail) and does not wait for a blocked Send.
// Closing twice is a no-op returning the first result.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		_ = c.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		if err := c.ws.Close(); err != nil {
			c.closeErr = fmt.Errorf("realtime: close: %w", err)
		}
	})
	return c.closeErr
}
