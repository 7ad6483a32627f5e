// Package redact keeps credentials out of everything banter prints or logs: the userinfo of a
// URL (http://user:pass@host) and credential-like query values (key=, token=, secret=, ...).
// URL redacts one URL; Text redacts every URL inside a longer string (an error message); Attr
// is a slog ReplaceAttr that applies Text to every string, error and Stringer a log line holds.
package redact

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces a credential.
const Mask = "REDACTED"

// credentialParams are query parameter names (lowercased, without - and _) whose values are
// credentials; a name containing any of them is redacted too (x-api-key, access_token).
var credentialParams = []string{"key", "token", "secret", "password", "passwd", "pwd", "auth", "signature", "sig", "credential", "session"}

func isCredential(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(name))
	for _, c := range credentialParams {
		if strings.Contains(n, c) {
			return true
		}
	}
	return false
}

// URL returns raw with any userinfo and credential-like query values replaced by Mask. A
// string that does not parse as a URL is returned through Text's pattern matching.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return redactByPattern(raw)
	}
	changed := false
	if u.User != nil {
		u.User = url.User(Mask)
		changed = true
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			name, _, hasValue := strings.Cut(p, "=")
			if unescaped, err := url.QueryUnescape(name); err == nil {
				name = unescaped
			}
			if hasValue && isCredential(name) {
				parts[i] = url.QueryEscape(name) + "=" + Mask
				changed = true
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if !changed {
		return raw
	}
	if len(raw) >= len(u.Scheme) && strings.EqualFold(raw[:len(u.Scheme)], u.Scheme) {
		u.Scheme = raw[:len(u.Scheme)] // Parse lowercases it; keep the text as it was
	}
	return u.String()
}

// urlPattern finds URLs inside free text: a scheme, "://", then up to whitespace or a quote.
var urlPattern = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s"'<>` + "`" + `]+`)

// userinfoPattern and queryPattern catch what url.Parse cannot (a malformed URL).
var (
	userinfoPattern = regexp.MustCompile(`://[^/?#]*@`)
	queryPattern    = regexp.MustCompile(`([?&;])([^=&\s]+)=([^&\s#]*)`)
)

func redactByPattern(s string) string {
	s = userinfoPattern.ReplaceAllString(s, "://"+Mask+"@")
	return queryPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := queryPattern.FindStringSubmatch(m)
		if isCredential(sub[2]) {
			return sub[1] + sub[2] + "=" + Mask
		}
		return m
	})
}

// Text redacts every URL found in s.
func Text(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlPattern.ReplaceAllStringFunc(s, URL)
}

// Attr is a slog.HandlerOptions.ReplaceAttr: strings, errors and fmt.Stringers (rendered to
// strings) pass through Text. Set it on every handler banter logs through.
func Attr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); strings.Contains(s, "://") {
			a.Value = slog.StringValue(Text(s))
		}
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error:
			if s := v.Error(); strings.Contains(s, "://") {
				a.Value = slog.StringValue(Text(s))
			}
		case fmt.Stringer:
			if s := v.String(); strings.Contains(s, "://") {
				a.Value = slog.StringValue(Text(s))
			}
		case []string:
			for i, s := range v {
				if strings.Contains(s, "://") {
					out := append([]string(nil), v...)
					for j := i; j < len(out); j++ {
						out[j] = Text(out[j])
					}
					a.Value = slog.AnyValue(out)
					break
				}
			}
		}
	}
	return a
}
