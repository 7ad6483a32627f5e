package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const twoProviders = `
providers:
  local:
    baseUrl: http://127.0.0.1:8000/v1
    api: chat_completions
  gemini:
    baseUrl: https://generativelanguage.googleapis.com/v1beta/openai
    api: chat_completions
    apiKeyEnv: GEMINI_API_KEY
    timeoutSeconds: 20
    maxRetries: -1
llm:
  model: gpt-5-mini
  directAddressClassifier:
    enabled: true
    provider: local
    model: qwen3-4b
voice:
  replyDecisionLlm:
    provider: local
    model: qwen3-4b
  generationLlm:
    provider: gemini
    model: gemini-2.5-flash
`

func loadYAML(t *testing.T, yaml string, vars map[string]string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "banter.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path, env(vars))
}

func TestProvidersResolvePerSlot(t *testing.T) {
	cfg, err := loadYAML(t, twoProviders, map[string]string{EnvOpenAIAPIKey: "sk-openai", "GEMINI_API_KEY": "g-key"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ResolvedProvider{
		"llm":                             {Name: "openai", Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1", API: "responses", APIKey: "sk-openai", APIKeyEnv: EnvOpenAIAPIKey, Timeout: 60 * time.Second, MaxRetries: 2},
		"llm.directAddressClassifier":     {Name: "local", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:8000/v1", API: "chat_completions", Timeout: 60 * time.Second, MaxRetries: 2},
		"voice.replyDecisionLlm":          {Name: "local", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:8000/v1", API: "chat_completions", Timeout: 60 * time.Second, MaxRetries: 2},
		"voice.generationLlm":             {Name: "gemini", Kind: KindOpenAI, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", API: "chat_completions", APIKey: "g-key", APIKeyEnv: "GEMINI_API_KEY", Timeout: 20 * time.Second, MaxRetries: 0},
		"voice.sttPipeline.transcription": {Name: "openai", Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1", API: "responses", APIKey: "sk-openai", APIKeyEnv: EnvOpenAIAPIKey, Timeout: 60 * time.Second, MaxRetries: 2},
	}
	for _, s := range cfg.Slots() {
		w, ok := want[s.Path]
		if !ok {
			continue
		}
		got, err := cfg.Provider(s.Provider)
		if err != nil || got != w {
			t.Errorf("%s: provider = %+v, %v\nwant %+v", s.Path, got, err, w)
		}
	}
	if got := cfg.MissingKeys(); len(got) != 0 {
		t.Errorf("missing keys with every key set: %v", got)
	}
}

// TestProviderSlotInheritsLLMProvider: a slot without provider: follows llm.provider.
func TestProviderSlotInheritsLLMProvider(t *testing.T) {
	cfg, err := loadYAML(t, twoProviders+"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.LLM.Provider = "local"
	p, err := cfg.Provider(cfg.Voice.STTPipeline.TTSProvider)
	if err != nil || p.Name != "local" {
		t.Errorf("tts follows llm.provider: %+v, %v", p, err)
	}
}

func TestProviderValidation(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown provider in a slot", "voice:\n  generationLlm:\n    provider: locl\n",
			`voice.generationLlm.provider: provider "locl" is not defined in providers (defined: openai, gemini)`},
		{"unknown transcription provider", "voice:\n  sttPipeline:\n    transcriptionProvider: whisper\n",
			`voice.sttPipeline.transcriptionProvider: provider "whisper" is not defined`},
		{"provider without baseUrl", "providers:\n  local:\n    api: chat_completions\n", "providers.local.baseUrl: required"},
		{"bad api", "providers:\n  local:\n    baseUrl: http://127.0.0.1:8000/v1\n    api: completions\n",
			`providers.local.api: "completions" is not allowed (allowed values: responses, chat_completions)`},
		{"key in the file", "providers:\n  x:\n    baseUrl: http://127.0.0.1:8000/v1\n    apiKeyEnv: sk-abc123-def\n",
			`providers.x.apiKeyEnv: "sk-abc123-def" is not an environment variable name`},
		{"unknown provider key", "providers:\n  x:\n    baseurl: http://h/v1\n", `providers.x.baseurl (line 3): unknown key`},
		{"bad kind", "providers:\n  x:\n    kind: anthropic\n    baseUrl: http://h/v1\n", `providers.x.kind: "anthropic" is not allowed (allowed values: openai, gemini)`},
		{"api on a gemini provider", "providers:\n  g:\n    kind: gemini\n    api: responses\n", "providers.g.api: only for kind openai"},
		{"gemini provider in a text slot", "providers:\n  g:\n    kind: gemini\nllm:\n  provider: g\n",
			`llm.provider: provider "g" is kind gemini, which serves only voice.geminiRealtime`},
		{"bad realtime provider", "voice:\n  realtime:\n    provider: azure\n", `voice.realtime.provider: "azure" is not allowed (allowed values: openai, gemini)`},
		{"openai provider for gemini realtime", "voice:\n  mode: realtime\n  realtime:\n    provider: gemini\n  geminiRealtime:\n    provider: openai\n",
			`voice.geminiRealtime.provider: provider "openai" is kind openai; voice.realtime.provider gemini needs a provider of kind gemini`},
		{"openai realtime provider set for gemini", "voice:\n  mode: realtime\n  realtime:\n    provider: gemini\n  openaiRealtime:\n    provider: openai\n",
			"voice.openaiRealtime.provider: set while voice.realtime.provider is gemini"},
		{"no gemini model", "voice:\n  geminiRealtime:\n    model: \"\"\n", "voice.geminiRealtime.model: must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, tt.yaml, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestMissingKeysNameTheSlot: config check says which slot lacks which key.
func TestMissingKeysNameTheSlot(t *testing.T) {
	cfg, err := loadYAML(t, twoProviders, map[string]string{EnvOpenAIAPIKey: "sk-openai"})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.MissingKeys()
	want := []string{"voice.generationLlm: provider gemini: GEMINI_API_KEY is not set"}
	if !slices.Equal(got, want) {
		t.Errorf("missing keys = %q, want %q", got, want)
	}
	// Without OPENAI_API_KEY every slot on the default provider is named; a default provider
	// pointed at another server (a simulator, a proxy) needs none.
	cfg, _ = loadYAML(t, twoProviders, map[string]string{"GEMINI_API_KEY": "g"})
	if got := cfg.MissingKeys(); len(got) == 0 || !strings.HasPrefix(got[0], "llm: provider openai: OPENAI_API_KEY is not set") {
		t.Errorf("missing OpenAI key: %q", got)
	}
	cfg, _ = loadYAML(t, twoProviders, map[string]string{"GEMINI_API_KEY": "g", EnvOpenAIBaseURL: "http://127.0.0.1:1/v1"})
	if got := cfg.MissingKeys(); len(got) != 0 {
		t.Errorf("with OPENAI_BASE_URL: %q", got)
	}
}

func TestProviderKeysNeverRendered(t *testing.T) {
	cfg, err := loadYAML(t, twoProviders, map[string]string{"GEMINI_API_KEY": "g-secret-key"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(out), fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg.Secrets)} {
		if strings.Contains(s, "g-secret-key") {
			t.Fatalf("key rendered:\n%s", s)
		}
	}
	if !strings.Contains(string(out), "GEMINI_API_KEY (provider gemini): set (redacted)") {
		t.Errorf("config check does not say the key is set:\n%s", out)
	}
}

// TestReloadKeepsProviders: the clients are built at start, so provider changes wait for a restart.
func TestReloadKeepsProviders(t *testing.T) {
	old, err := loadYAML(t, twoProviders, nil)
	if err != nil {
		t.Fatal(err)
	}
	next, _ := loadYAML(t, strings.Replace(twoProviders, "provider: gemini", "provider: local", 1), nil)
	next.Voice.GenerationLLM.Model = "changed-model"
	changed := keepStartupSettings(old, next)
	if !slices.Contains(changed, "voice.generationLlm.provider") || next.Voice.GenerationLLM.Provider != "gemini" {
		t.Errorf("provider change applied live: changed=%v provider=%q", changed, next.Voice.GenerationLLM.Provider)
	}
	if next.Voice.GenerationLLM.Model != "changed-model" {
		t.Error("a model change is live and must be kept")
	}
}

// TestProviderRecipesInDocsAreValid: every YAML recipe in docs/config.md's providers section
// parses and validates, so the documented configurations stay true.
func TestProviderRecipesInDocsAreValid(t *testing.T) {
	doc, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## providers")
	if !ok {
		t.Fatal("docs/config.md has no providers section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := strings.Split(section, "```yaml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("found %d recipes, want at least 2", len(blocks))
	}
	for i, b := range blocks {
		body, _, _ := strings.Cut(b, "```")
		if _, err := Parse([]byte(dedent(body))); err != nil {
			t.Errorf("recipe %d does not validate: %v\n%s", i+1, err, body)
		}
	}
}

// dedent removes the indentation of a Markdown list item's code block.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	for i, l := range lines {
		if len(l) >= indent {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}

// TestDeployConfigsAreValid: the configurations shipped under deploy/ validate.
func TestDeployConfigsAreValid(t *testing.T) {
	compose, err := os.ReadFile("../deploy/compose/banter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k8s, err := os.ReadFile("../deploy/kubernetes/banter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, embedded, ok := strings.Cut(string(k8s), "  banter.yaml: |\n")
	if !ok {
		t.Fatal("no banter.yaml in the Kubernetes ConfigMap")
	}
	embedded, _, _ = strings.Cut(embedded, "\n---")
	for name, doc := range map[string]string{"compose": string(compose), "kubernetes": dedent(embedded)} {
		cfg, err := Parse([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if cfg.Store.Driver != "postgres" || cfg.Discord.ProcessCount != 3 || cfg.Discord.Shards != "4" {
			t.Errorf("%s: store %s, %d processes, %s shards", name, cfg.Store.Driver, cfg.Discord.ProcessCount, cfg.Discord.Shards)
		}
	}
}

// TestGeminiProviderKey: the built-in gemini provider and kind gemini providers without
// apiKeyEnv read GEMINI_API_KEY, else GOOGLE_API_KEY; the base URL defaults to Google's and can
// be overridden.
func TestGeminiProviderKey(t *testing.T) {
	const realtime = "voice:\n  mode: realtime\n  realtime:\n    provider: gemini\n"
	tests := []struct {
		name, yaml   string
		env          map[string]string
		key, baseURL string
	}{
		{"built-in, GEMINI_API_KEY", realtime, map[string]string{EnvGeminiAPIKey: "g1", EnvGoogleAPIKey: "g2"}, "g1", GeminiBaseURL},
		{"built-in, GOOGLE_API_KEY", realtime, map[string]string{EnvGoogleAPIKey: "g2"}, "g2", GeminiBaseURL},
		{"entry, base URL overridden", realtime + "  geminiRealtime:\n    provider: sim\nproviders:\n  sim:\n    kind: gemini\n    baseUrl: http://127.0.0.1:9/\n",
			map[string]string{EnvGeminiAPIKey: "g1"}, "g1", "http://127.0.0.1:9/"},
		{"entry with its own env", realtime + "  geminiRealtime:\n    provider: sim\nproviders:\n  sim:\n    kind: gemini\n    apiKeyEnv: SIM_KEY\n",
			map[string]string{EnvGeminiAPIKey: "g1", "SIM_KEY": "s"}, "s", GeminiBaseURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadYAML(t, tt.yaml, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			p, err := cfg.Provider(cfg.Slots()[8].Provider) // voice.geminiRealtime
			if err != nil || p.Kind != KindGemini || p.APIKey != tt.key || p.BaseURL != tt.baseURL {
				t.Errorf("provider %+v, %v; want key %q at %s", p, err, tt.key, tt.baseURL)
			}
		})
	}
	cfg, err := loadYAML(t, realtime, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.MissingKeys(); !slices.Contains(got, "voice.geminiRealtime: provider gemini: GEMINI_API_KEY or GOOGLE_API_KEY is not set") {
		t.Errorf("missing keys %q", got)
	}
}
