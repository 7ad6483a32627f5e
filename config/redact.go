package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"

	"go.yaml.in/yaml/v3"
)

// Redacted renders the effective configuration as YAML, followed by which secrets are set. The
// secrets' values are never printed.
func (c *Config) Redacted() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
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
