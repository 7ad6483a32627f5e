package openaisim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// TestReasoningEffort: the effort a model accepts is echoed and recorded; one outside the
// enum, any effort for a model without reasoning, and one the model does not take are
// refused with the API's 400s (param, code and message), on both APIs.
func TestReasoningEffort(t *testing.T) {
	s := serve(t)
	type apiError struct {
		Message, Type, Param string
		Code                 *string
	}
	post := func(path, body string) (int, map[string]any, apiError) {
		t.Helper()
		resp, err := http.Post(s.BaseURL()+path, "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var ok map[string]any
		var e struct{ Error apiError }
		_ = json.Unmarshal(raw, &ok)
		_ = json.Unmarshal(raw, &e)
		return resp.StatusCode, ok, e.Error
	}
	responses := func(model, effort string) string {
		return `{"model":"` + model + `","input":"hi","reasoning":{"effort":"` + effort + `"}}`
	}
	chat := func(model, effort string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"` + effort + `"}`
	}
	for _, api := range []struct {
		path, param string
		body        func(model, effort string) string
	}{{"/responses", "reasoning.effort", responses}, {"/chat/completions", "reasoning_effort", chat}} {
		t.Run(api.path, func(t *testing.T) {
			status, body, _ := post(api.path, api.body("gpt-5-nano", "minimal"))
			if status != http.StatusOK {
				t.Fatalf("gpt-5-nano minimal: status %d", status)
			}
			if r, _ := body["reasoning"].(map[string]any); api.param == "reasoning.effort" && r["effort"] != "minimal" {
				t.Errorf("response reasoning %v, want effort minimal", body["reasoning"])
			}
			if got := s.Requests()[len(s.Requests())-1].ReasoningEffort; got != "minimal" {
				t.Errorf("recorded effort %q", got)
			}
			for _, c := range []struct{ model, effort, code, msg string }{
				{"gpt-5-nano", "tiny", "invalid_value",
					"Invalid value: 'tiny'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'."},
				{"gpt-5-nano", "none", "unsupported_value",
					"Unsupported value: 'none' is not supported with the 'gpt-5-nano' model. Supported values are: 'minimal', 'low', 'medium', and 'high'."},
				{"gpt-5.1", "minimal", "unsupported_value",
					"Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'."},
				{"o4-mini", "minimal", "unsupported_value",
					"Unsupported value: 'minimal' is not supported with the 'o4-mini' model. Supported values are: 'low', 'medium', and 'high'."},
				{"gpt-4o-mini", "low", "unsupported_parameter",
					"Unsupported parameter: '" + api.param + "' is not supported with this model."},
			} {
				status, _, e := post(api.path, api.body(c.model, c.effort))
				if status != http.StatusBadRequest || e.Param != api.param || e.Code == nil || *e.Code != c.code ||
					e.Message != c.msg || e.Type != "invalid_request_error" {
					t.Errorf("%s %s: status %d, error %+v (code %v); want 400 %s %q", c.model, c.effort, status, e, e.Code, c.code, c.msg)
				}
			}
		})
	}
}
