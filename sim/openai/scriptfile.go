package openaisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

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

// ParseScript decodes a YAML or JSON script; unknown fields are errors.
func ParseScript(data []byte) (*Script, error) {
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

// Control endpoints (not part of the OpenAI API; for the standalone
// simulator and the sandbox):
//
//	GET    /_sim/requests    recorded requests as JSON
//	GET    /_sim/realtime    recorded realtime client events as JSON
//	POST   /_sim/script      append a script's rules and transcripts (YAML or JSON body)
//	DELETE /_sim/rules       remove all rules and queued transcripts
//	DELETE /_sim/requests    forget recorded requests and events
func (s *Server) controlRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /_sim/requests", func(w http.ResponseWriter, r *http.Request) {
		writeJSONIndent(w, s.Requests())
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
		s.QueueTranscripts(sc.Transcripts...)
		for _, rule := range sc.Rules {
			_ = s.AddRule(rule) // compiled by ParseScript already
		}
		w.WriteHeader(http.StatusNoContent)
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
