package discordsim

import (
	"net/http"
	"testing"
)

// TestEnforceNonce: a create repeated with the same nonce and enforce_nonce answers the first
// message instead of posting again; without enforce_nonce, or with another nonce, it posts.
// FailNextAfterCommit creates the message and loses the answer.
func TestEnforceNonce(t *testing.T) {
	w := newWorld(t)
	auth := "Bot " + w.sim.Token()
	base := "/api/v10/channels/" + string(w.text) + "/messages"
	create := func(content string, nonce any, enforce bool) (int, wireMessage) {
		t.Helper()
		var m wireMessage
		resp := rest(t, w.sim, "POST", base, auth, map[string]any{"content": content, "nonce": nonce, "enforce_nonce": enforce}, &m)
		return resp.StatusCode, m
	}
	w.sim.FailNextAfterCommit(RouteMessageCreate, 1, http.StatusServiceUnavailable)
	if st, _ := create("hello", "n-1", true); st != http.StatusServiceUnavailable {
		t.Fatalf("faulted create: status %d, want 503", st)
	}
	st, first := create("hello", "n-1", true)
	if st != 200 || first.Content != "hello" {
		t.Fatalf("retry: %d %+v", st, first)
	}
	tests := []struct {
		name    string
		nonce   any
		enforce bool
		same    bool
	}{
		{"same nonce enforced", "n-1", true, true},
		{"same nonce not enforced", "n-1", false, false},
		{"other nonce", "n-2", true, false},
		{"integer nonce", 12345, true, false},
		{"same integer nonce", 12345, true, true},
	}
	for _, tt := range tests {
		st, m := create("hello", tt.nonce, tt.enforce)
		if st != 200 {
			t.Fatalf("%s: status %d", tt.name, st)
		}
		if got := m.ID == first.ID; got != tt.same {
			t.Errorf("%s: returned the earlier message = %v, want %v", tt.name, got, tt.same)
		}
		if tt.name == "integer nonce" {
			first = m
		}
	}
	if n := len(w.sim.Sent()); n != 4 {
		t.Errorf("%d messages created, want 4 (hello once per distinct nonce or unenforced create)", n)
	}
}
