package openaisim

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// DefaultGeminiModels are the Live models a setup may name unless WithGeminiModels is given
// (ai.google.dev model pages, 2026-11).
func DefaultGeminiModels() []string {
	return []string{"gemini-3.8-live", "gemini-3.1-flash-live-preview", "gemini-2.5-flash-native-audio-preview-12-2025"}
}

// WithGeminiAPIKey makes the Gemini Live endpoint demand this key (?key= or x-goog-api-key);
// by default any non-empty key is accepted. A missing or wrong key refuses the handshake with
// 403 PERMISSION_DENIED.
func WithGeminiAPIKey(key string) Option {
	return func(s *Server) error { s.geminiKey = key; return nil }
}

// WithGeminiModels replaces the Live models a setup may name; any other closes the socket with
// 1008 "models/X is not found for API version v1beta …", as the real API does.
func WithGeminiModels(models ...string) Option {
	return func(s *Server) error { s.gmModels = append([]string(nil), models...); return nil }
}

// WithGeminiConnectionLimit sets how long a Live connection lives (default 10 min, as on the
// real API; 0: no limit) and how long before its end the server sends goAway (default 10 s).
// Tests shorten it to see goAway and resumption.
func WithGeminiConnectionLimit(limit, goAwayLead time.Duration) Option {
	return func(s *Server) error {
		if limit < 0 || goAwayLead < 0 {
			return fmt.Errorf("openaisim: negative Gemini connection limit %v or lead %v", limit, goAwayLead)
		}
		s.gmLimit, s.gmGoAwayLead = limit, goAwayLead
		return nil
	}
}

// WithGeminiTextFrames makes the Gemini face send its messages in text frames. By default it
// sends binary frames, as the SDKs' handling of Blob and bytes suggests the real server does;
// a client must read JSON from both.
func WithGeminiTextFrames() Option {
	return func(s *Server) error { s.gmTextFrames = true; return nil }
}

// GeminiURL is the base URL of the Gemini face for a Live client, e.g. "ws://127.0.0.1:PORT"
// (google.golang.org/genai's HTTPOptions.BaseURL, which must name the ws scheme or it dials
// wss; the socket is GeminiURL()+GeminiLivePath). Empty if the server is not listening.
func (s *Server) GeminiURL() string {
	if s.baseURL == "" {
		return ""
	}
	return "ws" + strings.TrimPrefix(strings.TrimSuffix(s.baseURL, "/v1"), "http")
}

// geminiControlRoutes adds the Gemini control endpoints: the live connections, their client
// messages, goAway on demand, and the face's clock moved forward.
func (s *Server) geminiControlRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /_sim/gemini/sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSONIndent(w, s.GeminiSessions())
	})
	m.HandleFunc("GET /_sim/gemini/messages", func(w http.ResponseWriter, r *http.Request) {
		writeJSONIndent(w, s.GeminiMessages())
	})
	m.HandleFunc("POST /_sim/gemini/goaway", func(w http.ResponseWriter, r *http.Request) {
		left := time.Second
		if v := r.URL.Query().Get("time_left"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				badRequest(w, "time_left", "openaisim: time_left must be a duration such as 500ms")
				return
			}
			left = d
		}
		writeJSONIndent(w, map[string]int{"told": s.GeminiGoAway(left)})
	})
	m.HandleFunc("POST /_sim/gemini/advance", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("by"))
		if err == nil {
			err = s.GeminiAdvance(d)
		}
		if err != nil {
			badRequest(w, "by", "openaisim: by must be a duration of 0 or more, such as 16m")
			return
		}
		writeJSONIndent(w, map[string]string{"advanced": d.String()})
	})
}
