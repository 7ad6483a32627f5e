package openaisim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// APIError is OpenAI's error object, as found under "error" in HTTP error
// bodies and realtime `error` events.
//
//	{"error": {"message": "...", "type": "invalid_request_error", "param": null, "code": null}}
type APIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
	// EventID is set in realtime errors caused by a client event.
	EventID string `json:"event_id,omitempty"`
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// errorFor builds the error OpenAI returns for an HTTP status.
func errorFor(status int, msg string) APIError {
	e := APIError{Type: "invalid_request_error"}
	switch {
	case status == http.StatusUnauthorized:
		e.Code = strp("invalid_api_key")
		e.Message = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
	case status == http.StatusNotFound:
		e.Message = "The requested resource does not exist."
	case status == http.StatusTooManyRequests:
		e.Type = "requests"
		e.Code = strp("rate_limit_exceeded")
		e.Message = "Rate limit reached for requests (simulated). Please try again later."
	case status == http.StatusServiceUnavailable:
		e.Type = "server_error"
		e.Message = "The server is overloaded or not ready yet (simulated)."
	case status >= 500:
		e.Type = "server_error"
		e.Message = "The server had an error while processing your request (simulated)."
	default:
		e.Message = fmt.Sprintf("Simulated error %d.", status)
	}
	if msg != "" {
		e.Message = msg
	}
	return e
}

// writeError writes an OpenAI JSON error. retryAfter is sent as retry-after
// (seconds, fractional when under a second) and retry-after-ms when > 0.
func writeError(w http.ResponseWriter, status int, e APIError, retryAfter time.Duration) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.FormatFloat(retryAfter.Seconds(), 'f', -1, 64))
		h.Set("Retry-After-Ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	w.WriteHeader(status)
	b, _ := json.Marshal(struct {
		Error APIError `json:"error"`
	}{e})
	_, _ = w.Write(append(b, '\n'))
}

// badRequest writes a 400 invalid_request_error.
func badRequest(w http.ResponseWriter, param, msg string) {
	writeError(w, http.StatusBadRequest, APIError{
		Message: msg, Type: "invalid_request_error", Param: strp(param),
	}, 0)
}
