package config

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary documents to the config loader (an operator's
// file, or one a ConfigMap swap half-wrote): it must return a config or an
// error, never panic; a config it accepts is valid, and its redacted
// rendering parses back to a valid config with no secret in it.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("../banter.example.yaml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"", "{}", "[]", "null", "~", "discord: 3", "llm:\n  model: [a, b]\n",
		"llm:\n  modle: gpt\n", "a: &x [*x]\n", "a: &a [1]\nb: *a\n",
		"persona:\n  names: [\"Bant\", \"\"]\n", "text:\n  channels: {1: 2}\n",
		"voice:\n  sendSpinMs: -1\n", "voice:\n  sendSpinMs: 99999999999999999999\n",
		"metrics:\n  listen: \":99999\"\n", "\t\x00: \xff\n", "--- \n--- \n", "!!binary aGk=",
		"llm: !!map {model: 1}\n", strings.Repeat("[", 200), strings.Repeat("a:\n  ", 100) + "b: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that does not validate: %v", err)
		}
		cfg.Secrets.DiscordToken = "tok-fuzz-secret"
		cfg.Secrets.OpenAIAPIKey = "key-fuzz-secret"
		out, err := cfg.Redacted()
		if err != nil {
			t.Fatalf("render accepted config: %v", err)
		}
		if strings.Contains(string(out), "fuzz-secret") {
			t.Fatalf("secret rendered:\n%s", out)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("rendered config does not parse back: %v\n%s", err, out)
		}
	})
}
