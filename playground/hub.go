package playground

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/banterbot/banter/redact"
)

// Event is one log event of the bot as the page sees it: the event name
// (the slog message, e.g. reply_admission, reply_accepted,
// stt_pipeline_reply_spoken, config_reloaded), its level and time, and its
// attributes by name (groups joined with dots).
type Event struct {
	Seq   int64          `json:"seq"`
	Time  time.Time      `json:"time"`
	Level string         `json:"level"`
	Name  string         `json:"event"`
	Attrs map[string]any `json:"attrs"`
}

// hubBacklog is how many recent events a new subscriber gets first.
const hubBacklog = 1000

// Hub collects the bot's log events (it is a slog.Handler the bot's logger
// writes to, next to its log file; see Tee) and fans them out to
// subscribers: the page's decision panel, and the config editor waiting for
// a reload's outcome. Records below Info are not collected.
type Hub struct {
	mu     sync.Mutex // guards following
	seq    int64
	recent []Event
	subs   map[chan Event]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[chan Event]struct{}{}} }

// Handler returns the slog.Handler that feeds the hub.
func (h *Hub) Handler() slog.Handler { return &hubHandler{hub: h} }

// publish numbers e, keeps it in the backlog and offers it to every
// subscriber; a subscriber too slow to keep up loses events (its channel
// is full) rather than stalling the bot's logging.
func (h *Hub) publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.Seq = h.seq
	h.recent = append(h.recent, e)
	if len(h.recent) > hubBacklog {
		h.recent = append(h.recent[:0:0], h.recent[len(h.recent)-hubBacklog:]...)
	}
	for ch := range h.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// Subscribe returns the backlog and a channel of the events that follow,
// until cancel is called.
func (h *Hub) Subscribe() (backlog []Event, events <-chan Event, cancel func()) {
	ch := make(chan Event, 512)
	h.mu.Lock()
	backlog = append([]Event(nil), h.recent...)
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return backlog, ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// hubHandler is the slog side of a Hub: attributes added with WithAttrs and
// groups opened with WithGroup are kept as dotted names.
type hubHandler struct {
	hub    *Hub
	prefix string      // open groups, "a.b."
	attrs  []slog.Attr // from WithAttrs, already prefixed
}

func (hh *hubHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (hh *hubHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := make(map[string]any, r.NumAttrs()+len(hh.attrs))
	for _, a := range hh.attrs {
		addAttr(attrs, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(attrs, hh.prefix, a)
		return true
	})
	hh.hub.publish(Event{Time: r.Time, Level: r.Level.String(), Name: r.Message, Attrs: attrs})
	return nil
}

func (hh *hubHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := &hubHandler{hub: hh.hub, prefix: hh.prefix, attrs: append([]slog.Attr(nil), hh.attrs...)}
	for _, a := range as {
		a.Key = hh.prefix + a.Key
		n.attrs = append(n.attrs, a)
	}
	return n
}

func (hh *hubHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return hh
	}
	return &hubHandler{hub: hh.hub, prefix: hh.prefix + name + ".", attrs: hh.attrs}
}

// addAttr stores a under prefix+key, flattening groups, in a form that
// encodes to JSON (durations as milliseconds, errors and other values as
// text).
func addAttr(m map[string]any, prefix string, a slog.Attr) {
	a = redact.Attr(nil, a) // as the log file: no credential in a URL reaches the page
	v := a.Value.Resolve()
	key := prefix + a.Key
	switch v.Kind() {
	case slog.KindGroup:
		p := prefix
		if a.Key != "" {
			p = key + "."
		}
		for _, g := range v.Group() {
			addAttr(m, p, g)
		}
		return
	case slog.KindDuration:
		m[key] = float64(v.Duration().Microseconds()) / 1000
		return
	case slog.KindTime:
		m[key] = v.Time()
		return
	case slog.KindAny:
		x := v.Any()
		if err, ok := x.(error); ok {
			m[key] = err.Error()
			return
		}
		if _, err := json.Marshal(x); err != nil {
			m[key] = v.String()
			return
		}
		m[key] = x
		return
	}
	m[key] = v.Any()
}

// Tee returns a handler that passes every record to each of hs that is
// enabled for its level: the bot's log file and the playground's hub.
func Tee(hs ...slog.Handler) slog.Handler { return tee(hs) }

type tee []slog.Handler

func (t tee) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range t {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (t tee) Handle(ctx context.Context, r slog.Record) error {
	var first error
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (t tee) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (t tee) WithGroup(name string) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}
