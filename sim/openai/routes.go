package openaisim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/responses", s.handleResponses)
	m.HandleFunc("POST /v1/chat/completions", s.handleChat)
	m.HandleFunc("POST /v1/audio/transcriptions", s.handleTranscription)
	m.HandleFunc("POST /v1/audio/speech", s.handleSpeech)
	m.HandleFunc("POST /v1/embeddings", s.handleEmbeddings)
	m.HandleFunc("GET /v1/models", s.handleModels)
	m.HandleFunc("GET /v1/models/{id}", s.handleModel)
	m.HandleFunc("GET /v1/realtime", s.handleRealtime)
	m.HandleFunc("GET "+GeminiLivePath, s.handleGeminiLive)
	m.HandleFunc("GET "+strings.Replace(GeminiLivePath, "v1beta", "v1alpha", 1), s.handleGeminiLive)
	s.controlRoutes(m)
	s.geminiControlRoutes(m)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		rec := s.newRecord(r, EndpointUnknown)
		rec.Status = http.StatusNotFound
		s.record(rec)
		writeError(w, http.StatusNotFound, APIError{
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
			Type:    "invalid_request_error",
		}, 0)
	})
	s.mux = m
}

// ServeHTTP makes the simulator an http.Handler (paths start with /v1/).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, errorFor(http.StatusServiceUnavailable, "openaisim: server closed"), 0)
		return
	}
	s.reqWG.Add(1)
	s.mu.Unlock()
	defer s.reqWG.Done()
	defer func() {
		if v := recover(); v != nil && v != errStreamEnded {
			panic(v)
		}
	}()
	if s.apiKey != "" && !strings.HasPrefix(r.URL.Path, "/ws/") { // the Gemini face checks its own key
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.apiKey)) != 1 {
			drain(r.Body)
			rec := s.newRecord(r, EndpointUnknown)
			rec.Status = http.StatusUnauthorized
			s.record(rec)
			writeError(w, http.StatusUnauthorized, errorFor(http.StatusUnauthorized, ""), 0)
			return
		}
	}
	if strings.HasPrefix(r.URL.Path, "//ws/") {
		// js-genai joins its base URL ("ws://host/") and "/ws/…" into "//ws/…"; Google serves it.
		r.URL.Path = r.URL.Path[1:]
	}
	s.conformRequest(r)
	id := s.newID("req")
	w.Header().Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	s.log.Debug("openaisim: request", "method", r.Method, "path", r.URL.Path, "request_id", id)
	s.mux.ServeHTTP(w, r)
}

// requestIDKey carries the x-request-id of a request in its context.
type requestIDKey struct{}

// newRecord starts the record of a request.
func (s *Server) newRecord(r *http.Request, e Endpoint) *Recorded {
	s.mu.Lock()
	s.started++
	s.mu.Unlock()
	id, _ := r.Context().Value(requestIDKey{}).(string)
	rec := &Recorded{Endpoint: e, RequestID: id, Method: r.Method, Path: r.URL.Path, At: s.now()}
	s.track(rec)
	return rec
}

// preFault applies the faults that replace a reply entirely (Timeout,
// Status). It reports whether the request has been answered.
func (s *Server) preFault(w http.ResponseWriter, r *http.Request, o *outcome, rec *Recorded) bool {
	f := o.fault
	rec.Fault = f
	s.track(rec) // now with its model and rule
	if f.Timeout {
		select { // the client gives up, or Close ends it (also when mounted elsewhere)
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
		rec.Status = 0
		return true
	}
	if f.Status != 0 {
		ra := f.RetryAfter
		if ra == 0 && f.Status == http.StatusTooManyRequests {
			ra = time.Second
		}
		if f.Status != http.StatusTooManyRequests && f.Status != http.StatusServiceUnavailable {
			ra = 0
		}
		rec.Status = f.Status
		s.record(rec)
		writeError(w, f.Status, errorFor(f.Status, f.Message), ra)
		return true
	}
	return false
}

// readBody reads a JSON request body of at most limit bytes into rec.Body. A body that cannot
// be read or is larger than limit is rejected (400) with a message saying so, and ok is false.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, rec *Recorded, limit int64) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.reject(w, rec, reqErr("", "openaisim: request body larger than %d bytes", limit))
		} else {
			s.reject(w, rec, reqErr("", "openaisim: read body: %v", err))
		}
		return nil, false
	}
	rec.Body = rawBody(body)
	return body, true
}

// reject answers a request error with a 400 (after recording it).
func (s *Server) reject(w http.ResponseWriter, rec *Recorded, err error) {
	rec.Status = http.StatusBadRequest
	s.record(rec)
	re, ok := asRequestError(err)
	if !ok {
		re = &requestError{msg: err.Error()}
	}
	writeError(w, http.StatusBadRequest, APIError{
		Message: re.msg, Type: "invalid_request_error", Param: strp(re.param), Code: strp(re.code),
	}, 0)
}

// writeBody writes a complete non-streamed JSON body, corrupted by
// MalformedJSON or cut by TruncateAfterEvents.
func writeBody(w http.ResponseWriter, v any, f Fault) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, errorFor(500, "openaisim: encode: "+err.Error()), 0)
		return
	}
	if f.MalformedJSON {
		b = append([]byte(`{"id": "malformed", "output": [`), b[:len(b)/2]...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	if f.TruncateAfterEvents > 0 {
		_, _ = w.Write(b[:len(b)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler) // net/http closes the connection mid-body
	}
	_, _ = w.Write(b)
}

// sseWriter writes text/event-stream events and applies stream faults.
type sseWriter struct {
	w         http.ResponseWriter
	fl        http.Flusher
	named     bool // write "event: <type>" lines (responses API) or only data (chat)
	fault     Fault
	n         int
	malformed bool   // a malformed event was already written
	stall     func() // blocks until the request is over
	// onError writes the endpoint's in-stream error events
	// (StreamErrorAfterEvents); nil writes {"error":{...}}.
	onError func(APIError)
}

// errStreamEnded unwinds a handler after an in-stream error; ServeHTTP
// recovers it so the body ends cleanly.
var errStreamEnded = &struct{ name string }{"openaisim: stream ended with an error event"}

func (s *Server) newSSE(w http.ResponseWriter, r *http.Request, named bool, f Fault) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	sw := &sseWriter{w: w, fl: fl, named: named, fault: f, stall: func() {
		select { // until the client gives up or the server closes
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
	}}
	sw.flush()
	return sw
}

func (sw *sseWriter) flush() {
	if sw.fl != nil {
		sw.fl.Flush()
	}
}

// event writes one event. delta marks content deltas, the events that
// MalformedJSON corrupts (the first one only).
func (sw *sseWriter) event(typ string, v any, delta bool) {
	if sw.fault.TruncateAfterEvents > 0 && sw.n >= sw.fault.TruncateAfterEvents {
		sw.flush()
		panic(http.ErrAbortHandler)
	}
	if sw.fault.StallAfterEvents > 0 && sw.n >= sw.fault.StallAfterEvents {
		sw.flush()
		sw.stall()
		panic(http.ErrAbortHandler)
	}
	if sw.fault.StreamErrorAfterEvents > 0 && sw.n >= sw.fault.StreamErrorAfterEvents {
		sw.fault.StreamErrorAfterEvents = 0
		e := errorFor(http.StatusInternalServerError, sw.fault.Message)
		e.Code = strp("server_error")
		if sw.onError != nil {
			sw.onError(e)
		} else {
			sw.event("", map[string]any{"error": e}, false)
		}
		sw.flush()
		panic(errStreamEnded)
	}
	sw.n++
	var b []byte
	if delta && sw.fault.MalformedJSON && !sw.malformed {
		sw.malformed = true
		b = []byte(`{"type":"` + typ + `","delta":"unterminated`)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			b = []byte(`{"type":"error","message":"openaisim: encode failed"}`)
		}
	}
	var out []byte
	if sw.named {
		out = append(out, "event: "...)
		out = append(out, typ...)
		out = append(out, '\n')
	}
	out = append(out, "data: "...)
	out = append(out, b...)
	out = append(out, "\n\n"...)
	_, _ = sw.w.Write(out)
	sw.flush()
}

// done writes the chat completions terminator.
func (sw *sseWriter) done() {
	if (sw.fault.TruncateAfterEvents > 0 && sw.n >= sw.fault.TruncateAfterEvents) ||
		(sw.fault.StallAfterEvents > 0 && sw.n >= sw.fault.StallAfterEvents) {
		sw.event("", nil, false) // applies the fault
	}
	_, _ = sw.w.Write([]byte("data: [DONE]\n\n"))
	sw.flush()
}
