package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/banterbot/banter/redact"
)

// Redacted renders the effective configuration as YAML, followed by which secrets are set. The
// secrets' values are never printed, nor credentials written into the file's URLs and
// connection strings: every string value holding a URL (llm.baseUrl, discord.apiUrl,
// providers.*.baseUrl, store.dsn as postgres://user:pass@…, or any added later) loses its
// userinfo and credential-like query values, and a key=value connection string its password.
func (c *Config) Redacted() ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(c); err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	redactNode(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	fmt.Fprintf(&buf, "# secrets (from the environment):\n#   %s: %s\n#   %s: %s\n",
		EnvDiscordToken, presence(c.Secrets.DiscordToken), EnvOpenAIAPIKey, presence(c.Secrets.OpenAIAPIKey))
	for _, name := range c.ProviderNames() {
		if p := c.Providers[name]; p.APIKeyEnv != "" {
			fmt.Fprintf(&buf, "#   %s (provider %s): %s\n", p.APIKeyEnv, name, presence(c.Secrets.ProviderKeys[name]))
		}
	}
	return buf.Bytes(), nil
}

// redactNode redacts every string scalar of a rendered configuration in place.
func redactNode(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Value = redactValue(n.Value)
	}
	for _, c := range n.Content {
		redactNode(c)
	}
}

// redactValue hides the credentials a configuration string may hold: those of a URL, and the
// password of a key=value connection string (host=db user=banter password=… dbname=banter).
func redactValue(s string) string {
	if strings.Contains(s, "://") {
		return redact.Text(s)
	}
	if strings.Contains(s, "=") {
		return kvPassword.ReplaceAllString(s, "${1}"+redact.Mask)
	}
	return s
}

// RedactText hides the credentials anywhere in a text such as a config file as written: those
// of every URL in it and the passwords of key=value connection strings.
func RedactText(s string) string {
	return kvPassword.ReplaceAllString(redact.Text(s), "${1}"+redact.Mask)
}

// kvPassword finds the credential values of a libpq key=value connection string: password and
// sslpassword, single-quoted (with backslash escapes) or not.
var kvPassword = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']\S*)`)

func presence(s string) string {
	if s == "" {
		return "not set"
	}
	return "set (redacted)"
}

// String keeps secrets out of logs and %v output.
func (s Secrets) String() string {
	return fmt.Sprintf("{DiscordToken:%s OpenAIAPIKey:%s ProviderKeys:%d set (redacted)}", presence(s.DiscordToken), presence(s.OpenAIAPIKey), len(s.ProviderKeys))
}

// GoString keeps secrets out of %#v output.
func (s Secrets) GoString() string { return s.String() }

// LogValue keeps secrets out of slog output.
func (s Secrets) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON keeps secrets out of JSON output.
func (s Secrets) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }
