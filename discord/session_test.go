package discord

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNewSessionRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts SessionOptions
		want string
	}{
		{"empty token", SessionOptions{Token: "  "}, "empty token"},
		{"not http", SessionOptions{Token: "t", APIURL: "ftp://example.com"}, "not http(s)"},
		{"no host", SessionOptions{Token: "t", APIURL: "http://"}, "not http(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSession(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewSession(%+v) = %v, want an error containing %q", tt.opts, err, tt.want)
			}
		})
	}
}

// TestNewSessionSendsRESTToAPIURL: discordgo's discord.com URLs reach the configured host with
// path and query unchanged, authorised with the "Bot " token.
func TestNewSessionSendsRESTToAPIURL(t *testing.T) {
	type seen struct{ path, query, auth string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	for _, token := range []string{"abc", "Bot abc"} {
		s, err := NewSession(SessionOptions{Token: token, APIURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if s.Identify.Intents != Intents {
			t.Errorf("intents = %v, want %v", s.Identify.Intents, Intents)
		}
		if _, err := s.ChannelMessages("123", 5, "", "", ""); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.path != "/api/v9/channels/123/messages" || r.query != "limit=5" || r.auth != "Bot abc" {
			t.Errorf("token %q: request %+v, want /api/v9/channels/123/messages?limit=5 with Bot abc", token, r)
		}
	}
}
