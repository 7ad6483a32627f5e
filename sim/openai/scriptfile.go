package openaisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Script is a simulator setup loadable from YAML (or JSON), for the
// standalone simulator (`banter sim openai --script file.yaml`) and the
// /_sim/script control endpoint. Durations are Go duration strings.
//
//	latency: {time_to_first_token: 300ms, per_token: 15ms, tts_first_byte: 200ms}
//	transcripts: ["hey banter, you there?"]
//	rules:
//	  - name: classifier
//	    match: {endpoint: responses, prompt_pattern: "YES or NO"}
//	    reply: {text: "YES"}
//	  - match: {endpoint: responses, tool: send_discord_message}
//	    reply:
//	      tool_calls:
//	        - name: send_discord_message
//	          arguments: '{"mode":"reply","target_message_id":null,"text":"hi!"}'
//	  - match: {endpoint: transcriptions, max_audio: 300ms}
//	    reply: {transcript: "uh"}
//	  - match: {endpoint: speech}
//	    fault: {status: 429, retry_after: 2s}
//	    times: 1
type Script struct {
	Rules       []Rule   `yaml:"rules" json:"rules"`
	Latency     Latency  `yaml:"latency" json:"latency"`
	Models      []string `yaml:"models" json:"models"`
	Transcripts []string `yaml:"transcripts" json:"transcripts"`
	APIKey      string   `yaml:"api_key" json:"api_key"`
}

// scriptKeys are a script's top-level keys.
var scriptKeys = []string{"rules", "latency", "models", "transcripts", "api_key"}

// ParseScript decodes a YAML or JSON script; unknown keys are errors that name them.
func ParseScript(data []byte) (*Script, error) {
	var top map[string]any
	if yaml.Unmarshal(data, &top) == nil {
		for k := range top {
			if !slices.Contains(scriptKeys, k) {
				return nil, fmt.Errorf("openaisim: parse script: unknown key %q (a script's keys are %s)", k, strings.Join(scriptKeys, ", "))
			}
		}
	}
	var sc Script
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil && err != io.EOF {
		return nil, fmt.Errorf("openaisim: parse script: %w", err)
	}
	for _, r := range sc.Rules {
		if _, err := compileRule(r); err != nil {
			return nil, err
		}
	}
	return &sc, nil
}

// WithScript applies a script: its rules, default latency, models, queued
// transcripts and API key (each only when set).
func WithScript(sc *Script) Option {
	return func(s *Server) error {
		if sc == nil {
			return nil
		}
		if !sc.Latency.IsZero() {
			s.latency = sc.Latency
		}
		if len(sc.Models) > 0 {
			s.models = append([]string(nil), sc.Models...)
		}
		if sc.APIKey != "" {
			s.apiKey = sc.APIKey
		}
		s.QueueTranscripts(sc.Transcripts...)
		for _, r := range sc.Rules {
			if err := s.AddRule(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// startupOnly names a key of sc that only a script given at start may set ("" when none):
// a running simulator keeps its models and API key.
func startupOnly(sc *Script) string {
	switch {
	case len(sc.Models) > 0:
		return "models"
	case sc.APIKey != "":
		return "api_key"
	}
	return ""
}

// Control endpoints (not part of the OpenAI API; for the standalone
// simulator and the sandbox):
//
//	GET    /_sim/requests    recorded requests as JSON (with received_at, answered_at)
//	GET    /_sim/inflight    the requests being handled now
//	GET    /_sim/realtime    recorded realtime client events as JSON
//	POST   /_sim/script      append a script's rules and transcripts (YAML or JSON body;
//	                         its latency is the default of its rules; models and api_key: 400)
//	DELETE /_sim/rules       remove all rules and queued transcripts
//	DELETE /_sim/requests    forget recorded requests and events
func (s *Server) controlRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /_sim/requests", func(w http.ResponseWriter, r *http.Request) {
		writeJSONIndent(w, requestViews(s.Requests()))
	})
	m.HandleFunc("GET /_sim/realtime", func(w http.ResponseWriter, r *http.Request) {
		writeJSONIndent(w, s.RealtimeEvents())
	})
	m.HandleFunc("POST /_sim/script", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			badRequest(w, "", "openaisim: read script: "+err.Error())
			return
		}
		sc, err := ParseScript(body)
		if err != nil {
			badRequest(w, "", err.Error())
			return
		}
		if key := startupOnly(sc); key != "" {
			badRequest(w, key, fmt.Sprintf("openaisim: %q is set when the simulator starts (WithScript, banter sim openai -script), not by POST /_sim/script", key))
			return
		}
		s.QueueTranscripts(sc.Transcripts...)
		for _, rule := range sc.Rules {
			if rule.Latency.IsZero() {
				rule.Latency = sc.Latency // the script's latency is its rules' default
			}
			_ = s.AddRule(rule) // compiled by ParseScript already
		}
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /_sim/inflight", func(w http.ResponseWriter, r *http.Request) {
		writeJSONIndent(w, s.InFlight())
	})
	m.HandleFunc("DELETE /_sim/rules", func(w http.ResponseWriter, r *http.Request) {
		s.ResetRules()
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("DELETE /_sim/requests", func(w http.ResponseWriter, r *http.Request) {
		s.ResetRecords()
		w.WriteHeader(http.StatusNoContent)
	})
}

func writeJSONIndent(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeError(w, http.StatusInternalServerError, errorFor(500, err.Error()), 0)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// rfc3339Milli is RFC 3339 with milliseconds, as the control endpoints write times.
const rfc3339Milli = "2006-01-02T15:04:05.000Z07:00"

// requestView is a Recorded as GET /_sim/requests lists it: every field of Recorded, plus when
// the request arrived and when it was answered (left out when it got no answer: Status 0, the
// client gave up first).
type requestView struct {
	Recorded
	ReceivedAt string `json:"received_at"`
	AnsweredAt string `json:"answered_at,omitempty"`
}

func requestViews(recs []Recorded) []requestView {
	out := make([]requestView, len(recs))
	for i, r := range recs {
		out[i] = requestView{Recorded: r, ReceivedAt: r.At.Format(rfc3339Milli)}
		if r.Status != 0 {
			out[i].AnsweredAt = r.At.Add(r.Duration).Format(rfc3339Milli)
		}
	}
	return out
}

// inFlightView is one request of GET /_sim/inflight.
type inFlightView struct {
	Endpoint  string `json:"endpoint"`
	Model     string `json:"model,omitempty"`
	Rule      string `json:"rule,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	StartedAt string `json:"started_at"`
}

// MarshalJSON writes f as GET /_sim/inflight lists it.
func (f InFlight) MarshalJSON() ([]byte, error) {
	return json.Marshal(inFlightView{Endpoint: f.Endpoint.String(), Model: f.Model, Rule: f.Rule, RequestID: f.RequestID,
		Method: f.Method, Path: f.Path, StartedAt: f.Started.Format(rfc3339Milli)})
}
