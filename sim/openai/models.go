package openaisim

import (
	"net/http"
	"strings"
)

// isReasoningModel reports whether model is one of OpenAI's reasoning models
// (gpt-5 family, o1, o3, o4-mini...), which chat completions serves with
// max_completion_tokens only: max_tokens is answered 400
// unsupported_parameter.
func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if strings.HasPrefix(m, "gpt-5") {
		return true
	}
	for _, p := range []string{"o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return false
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// handleModels is GET /v1/models.
// https://platform.openai.com/docs/api-reference/models/list
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointModels)
	defer s.record(rec)
	o := s.resolve(&matchInput{endpoint: EndpointModels})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	data := make([]modelObject, 0, len(s.models))
	for _, id := range s.models {
		data = append(data, modelObject{ID: id, Object: "model", Created: 1700000000, OwnedBy: "openaisim"})
	}
	rec.Status = http.StatusOK
	s.record(rec)
	writeBody(w, map[string]any{"object": "list", "data": data}, o.fault)
}

// handleModel is GET /v1/models/{id}.
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointModels)
	defer s.record(rec)
	id := r.PathValue("id")
	rec.Model = id
	o := s.resolve(&matchInput{endpoint: EndpointModels, model: id})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	if !contains(s.models, id) {
		rec.Status = http.StatusNotFound
		s.record(rec)
		writeError(w, http.StatusNotFound, APIError{
			Message: "The model '" + id + "' does not exist or you do not have access to it.",
			Type:    "invalid_request_error", Code: strp("model_not_found"),
		}, 0)
		return
	}
	rec.Status = http.StatusOK
	s.record(rec)
	writeBody(w, modelObject{ID: id, Object: "model", Created: 1700000000, OwnedBy: "openaisim"}, o.fault)
}
