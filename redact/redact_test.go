package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://user:pass@host/v1", "http://REDACTED@host/v1"},
		{"https://user@host:8443/x", "https://REDACTED@host:8443/x"},
		{"https://host/v1?api_key=sk-123&model=gpt", "https://host/v1?api_key=REDACTED&model=gpt"},
		{"wss://host/realtime?model=m&token=abc", "wss://host/realtime?model=m&token=REDACTED"},
		{"https://host/x?X-Amz-Signature=abc&q=1", "https://host/x?X-Amz-Signature=REDACTED&q=1"},
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"", ""},
		{"not a url", "not a url"},
		{"http://user:p%zz@host/", "http://REDACTED@host/"}, // does not parse: patterns
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	in := `POST "http://bob:hunter2@llm.local/v1/responses": 500 Internal Server Error; retry https://x/y?secret=s3`
	got := Text(in)
	for _, leak := range []string{"bob", "hunter2", "s3"} {
		if strings.Contains(got, leak) {
			t.Errorf("Text leaks %q: %s", leak, got)
		}
	}
	if !strings.Contains(got, "llm.local/v1/responses") || !strings.Contains(got, "500 Internal Server Error") {
		t.Errorf("Text lost the rest: %s", got)
	}
}

func TestAttrInLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: Attr}))
	log.Error("llm_failed", "url", "http://user:pass@host/v1", "error", errors.New(`Post "http://user:pass@host/v1": refused`),
		"urls", []string{"ok", "http://a:b@h/"})
	if s := buf.String(); strings.Contains(s, "pass") || strings.Contains(s, "user") || strings.Contains(s, "a:b") {
		t.Errorf("log line leaks credentials: %s", s)
	}
}

func FuzzText(f *testing.F) {
	f.Add("http://user:pass@host/v1?token=abc")
	f.Add("x https://h/?a=1&key=2 y")
	f.Add("ftp://@/?=&=")
	f.Add("A://%@")
	f.Add("A://\xd7@#")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		// Whatever parses in the output carries no credential.
		for _, m := range urlPattern.FindAllString(out, -1) {
			u, err := url.Parse(m)
			if err != nil {
				continue
			}
			if u.User != nil && u.User.String() != Mask {
				t.Fatalf("userinfo kept: %q -> %q", s, out)
			}
			for name, vals := range u.Query() {
				for _, v := range vals {
					if isCredential(name) && v != Mask && v != "" {
						t.Fatalf("credential %s=%q kept: %q -> %q", name, v, s, out)
					}
				}
			}
		}
	})
}
