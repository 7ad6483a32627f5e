package openaisim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestOversizedBodyIsRejected: a body past the endpoint's limit gets a 400 that says so, and
// the request is recorded with that status (not a confusing JSON syntax error).
func TestOversizedBodyIsRejected(t *testing.T) {
	s := serve(t)
	tests := []struct {
		path  string
		limit int
	}{
		{"/v1/responses", 16 << 20},
		{"/v1/chat/completions", 16 << 20},
		{"/v1/audio/speech", 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			body := append([]byte(`{"model":"gpt-5-mini","input":"`), bytes.Repeat([]byte("a"), tt.limit)...)
			body = append(body, `"}`...)
			resp, err := http.Post(s.BaseURL()+strings.TrimPrefix(tt.path, "/v1"), "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			_ = json.Unmarshal(raw, &e)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, "larger than") {
				t.Errorf("status %d, body %s; want 400 saying the body is too large", resp.StatusCode, raw)
			}
		})
	}
	for _, r := range s.Requests() {
		if r.Status != http.StatusBadRequest {
			t.Errorf("request to %s recorded with status %d, want 400", r.Path, r.Status)
		}
	}
}
