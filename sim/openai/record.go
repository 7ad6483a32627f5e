package openaisim

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// Usage is what a simulated answer reported it consumed, in the API's terms: InputTokens
// includes CachedTokens and AudioInputTokens, OutputTokens includes ReasoningTokens and
// AudioOutputTokens; Seconds is audio billed by duration (whisper transcription).
type Usage struct {
	InputTokens, CachedTokens, AudioInputTokens      int
	OutputTokens, ReasoningTokens, AudioOutputTokens int
	Seconds                                          float64
}

// Recorded is one request as the simulator saw it.
type Recorded struct {
	// Seq numbers requests in the order they were recorded (when handling
	// ends), from 1.
	Seq      int
	Endpoint Endpoint
	// RequestID is the x-request-id header sent with the reply
	// ("req_sim000001"); realtime responses and transcriptions carry the
	// handshake's.
	RequestID string
	// Method and Path are the HTTP request line (Path without query).
	Method, Path string
	// Model is the requested model.
	Model string
	// Instructions are the instructions / system and developer messages.
	Instructions string
	// LastUserText is the text of the last user input (for speech: the text
	// to voice; for realtime: the last user text or audio transcript).
	LastUserText string
	// Prompt is the flattened prompt: instructions, then one line per input
	// item ("user: ...", "assistant: ...", "function_call name(args)",
	// "function_call_output call_id: output").
	Prompt string
	// Images are the image inputs of the request's user messages, in order: http(s) URLs or
	// base64 data URLs as sent.
	Images []string
	// Tools are the offered function tools.
	Tools []Tool
	// ToolChoice is the tool_choice as JSON text ("auto", {"type":...}), or "".
	ToolChoice string
	// Stream reports a streaming request.
	Stream bool
	// ReasoningEffort is the reasoning effort the request asked for (responses
	// reasoning.effort, chat reasoning_effort), "" when it sent none.
	ReasoningEffort string
	// AudioDuration is the duration of uploaded or committed audio.
	AudioDuration time.Duration
	// AudioBytes is the size of uploaded audio, or of the synthesized speech sent to the
	// client (all of it unless the client went away: ClientGone).
	AudioBytes int
	// ClientGone reports a speech request whose client went away (closed the stream,
	// cancelled) before the whole answer was sent: before the first byte when Status is 0.
	ClientGone bool
	// Voice and Format are the speech voice and response_format (or the
	// transcription response_format).
	Voice, Format string
	// Language and TranscriptionPrompt are transcription form fields.
	Language, TranscriptionPrompt string
	// Rule is the name of the matched rule ("" for the default reply).
	Rule string
	// Status is the HTTP status answered (101 for realtime upgrades, 0 if
	// the request hung until the client gave up).
	Status int
	// Fault is the fault that was applied, if any.
	Fault Fault
	// Injected is the latency the simulator deliberately added.
	Injected Injected
	// Usage is the usage the answer reported (zero when it reported none).
	Usage Usage
	// Body is the raw request body (JSON endpoints only); a body that is
	// not valid JSON is kept as a JSON string.
	Body json.RawMessage
	// At is when the request arrived; Duration how long handling took.
	At       time.Time
	Duration time.Duration

	recorded bool
}

// InFlight is a request the simulator is handling now: arrived, not yet answered (or given up).
type InFlight struct {
	Endpoint Endpoint
	// Model and Rule are known once the request is parsed and matched ("" before, and Rule
	// "" for the default reply).
	Model, Rule  string
	RequestID    string
	Method, Path string
	Started      time.Time
}

// InFlight returns the requests being handled now, oldest first: REST requests, realtime
// handshakes, realtime responses and transcriptions of committed audio.
func (s *Server) InFlight() []InFlight {
	s.mu.Lock()
	out := make([]InFlight, 0, len(s.inflight))
	for _, f := range s.inflight {
		out = append(out, *f)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b InFlight) int { return a.Started.Compare(b.Started) })
	return out
}

// track lists rec among the requests in flight, or updates its model and rule.
func (s *Server) track(rec *Recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec.recorded {
		return
	}
	if s.inflight == nil {
		s.inflight = map[*Recorded]*InFlight{}
	}
	s.inflight[rec] = &InFlight{Endpoint: rec.Endpoint, Model: rec.Model, Rule: rec.Rule, RequestID: rec.RequestID,
		Method: rec.Method, Path: rec.Path, Started: rec.At}
}

// untrack ends rec's time in flight (record does it too).
func (s *Server) untrack(rec *Recorded) {
	s.mu.Lock()
	delete(s.inflight, rec)
	s.mu.Unlock()
}

// Tool is one offered function tool.
type Tool struct {
	Type        string
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Injected is latency the simulator added to one request, per phase.
type Injected struct {
	FirstToken   time.Duration
	Tokens       time.Duration
	TTSFirstByte time.Duration
	AudioChunks  time.Duration
}

// Total is the sum of all phases.
func (i Injected) Total() time.Duration {
	return i.FirstToken + i.Tokens + i.TTSFirstByte + i.AudioChunks
}

// RealtimeEvent is one client event received on a realtime socket.
type RealtimeEvent struct {
	// Session is the realtime session id ("sess_sim000001").
	Session string
	// Transcription: the session is a transcription session (?intent=transcription), not a
	// conversation with a model.
	Transcription bool
	// Type is the event's "type" ("" if it did not parse).
	Type string
	// EventID is the client's event_id, if any.
	EventID string
	// Raw is the event exactly as received.
	Raw json.RawMessage
	At  time.Time
}

// Requests returns a copy of every request recorded so far, in the order
// their handling ended.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// RequestsFor returns the recorded requests of one endpoint.
func (s *Server) RequestsFor(e Endpoint) []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Recorded
	for _, r := range s.requests {
		if r.Endpoint == e {
			out = append(out, r)
		}
	}
	return out
}

// RealtimeEvents returns a copy of every realtime client event received.
func (s *Server) RealtimeEvents() []RealtimeEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RealtimeEvent(nil), s.rtEvents...)
}

// InjectedTotal is the latency injected into all recorded requests so far.
func (s *Server) InjectedTotal() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d time.Duration
	for _, r := range s.requests {
		d += r.Injected.Total()
	}
	return d
}

// WaitRequests waits until at least n requests are recorded (requests are
// recorded when their handling ends) and returns them.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Recorded, error) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		if r := s.Requests(); len(r) >= n {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return s.Requests(), ctx.Err()
		case <-t.C:
		}
	}
}

// WaitRequestsStarted waits until at least n requests have arrived (recorded
// or still being handled, e.g. hanging in a Timeout fault) and returns how
// many have.
func (s *Server) WaitRequestsStarted(ctx context.Context, n int) (int, error) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		got := s.started
		s.mu.Unlock()
		if got >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-t.C:
		}
	}
}

// ResetRecords forgets recorded requests and realtime events.
func (s *Server) ResetRecords() {
	s.mu.Lock()
	s.requests = nil
	s.rtEvents = nil
	s.mu.Unlock()
}

// record publishes r once. Handlers call it just before writing the final
// bytes of a reply, so a client that has read the whole reply always finds
// its request recorded; a deferred call covers aborted replies.
func (s *Server) record(r *Recorded) {
	if r.recorded {
		return
	}
	r.recorded = true
	r.Duration = s.now().Sub(r.At)
	s.mu.Lock()
	delete(s.inflight, r)
	r.Seq = len(s.requests) + 1
	s.requests = append(s.requests, *r)
	s.mu.Unlock()
}

func (s *Server) recordEvent(e RealtimeEvent) {
	s.mu.Lock()
	s.rtEvents = append(s.rtEvents, e)
	s.mu.Unlock()
}

// rawBody keeps a request body for the record, always as valid JSON.
func rawBody(b []byte) json.RawMessage {
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	q, _ := json.Marshal(string(b))
	return q
}
