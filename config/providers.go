package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DefaultProvider names the provider every model slot uses unless it names another: OpenAI, or
// whatever llm.baseUrl / OPENAI_BASE_URL point at, with the key in OPENAI_API_KEY. A providers
// entry of this name replaces it.
const DefaultProvider = "openai"

// GeminiProvider names the built-in Gemini provider voice.geminiRealtime uses unless it names
// another: Google's Gemini API (GeminiBaseURL), the key in GEMINI_API_KEY or GOOGLE_API_KEY. A
// providers entry of this name replaces it.
const GeminiProvider = "gemini"

// GeminiBaseURL is the Gemini Developer API's root, the base URL of kind gemini providers
// that set none.
const GeminiBaseURL = "https://generativelanguage.googleapis.com"

// Provider kinds: what API an endpoint speaks.
const (
	// KindOpenAI is an OpenAI-compatible endpoint (the default): every model slot.
	KindOpenAI = "openai"
	// KindGemini is Google's Gemini API: only voice.geminiRealtime (the Live API).
	KindGemini = "gemini"
)

// Provider is one endpoint that model slots can name (providers.NAME).
type Provider struct {
	// Kind is "openai" (the default: an OpenAI-compatible API) or "gemini" (Google's Gemini
	// API, for voice.geminiRealtime).
	Kind string `yaml:"kind"`
	// BaseURL is the API root: for kind openai including /v1, e.g. http://127.0.0.1:8000/v1; for
	// kind gemini the host root (default https://generativelanguage.googleapis.com).
	BaseURL string `yaml:"baseUrl"`
	// API is "responses" or "chat_completions" (for servers that only offer chat completions);
	// kind openai only.
	API string `yaml:"api"`
	// APIKeyEnv names the environment variable holding the key; empty sends no key (a local
	// server), except for kind gemini, which then reads GEMINI_API_KEY, else GOOGLE_API_KEY.
	// The key itself never lives in the file.
	APIKeyEnv string `yaml:"apiKeyEnv"`
	// TimeoutSeconds bounds one request; 0 takes llm.timeoutSeconds.
	TimeoutSeconds int `yaml:"timeoutSeconds"`
	// MaxRetries for 429 and 5xx answers; 0 takes llm.maxRetries, -1 means a single attempt.
	MaxRetries int `yaml:"maxRetries"`
	// RequestsPerMinute is this provider's request budget, shared by every process on one
	// Postgres store (0: none).
	RequestsPerMinute int `yaml:"requestsPerMinute"`
	// OmitStreamUsage sends streamed chat completions without stream_options (for servers
	// that reject it): their usage is then unknown and not counted.
	OmitStreamUsage bool `yaml:"omitStreamUsage"`
}

// MaxRequestsPerMinute bounds a provider's request budget (llm.requestsPerMinute,
// providers.NAME.requestsPerMinute): above OpenAI's highest tier limits.
const MaxRequestsPerMinute = 1000000

// ResolvedProvider is a provider with its key and inherited settings filled in.
type ResolvedProvider struct {
	Name       string
	Kind       string // KindOpenAI or KindGemini
	BaseURL    string
	API        string
	APIKey     string
	APIKeyEnv  string // where the key came from, for messages; empty when none is needed
	Timeout    time.Duration
	MaxRetries int
	// RequestsPerMinute is the provider's request budget, 0 for none.
	RequestsPerMinute int
	// OmitStreamUsage: streamed chat completions are sent without stream_options.
	OmitStreamUsage bool
}

// Slot is one model slot: where in the config it lives, the provider it names ("" for the
// default) and its model.
type Slot struct {
	Path     string // config path of the slot, e.g. "voice.generationLlm"
	Provider string
	Model    string
}

// Slots lists every model slot in a fixed order.
func (c *Config) Slots() []Slot {
	return []Slot{
		{"llm", c.LLM.Provider, c.LLM.Model},
		{"llm.directAddressClassifier", c.LLM.DirectAddressClassifier.Provider, c.LLM.DirectAddressClassifier.Model},
		{"replyFollowupLlm", c.ReplyFollowupLLM.Provider, c.ReplyFollowupLLM.Model},
		{"voice.replyDecisionLlm", c.Voice.ReplyDecisionLLM.Provider, c.Voice.ReplyDecisionLLM.Model},
		{"voice.generationLlm", c.Voice.GenerationLLM.Provider, c.Voice.GenerationLLM.Model},
		{"voice.sttPipeline.transcription", c.Voice.STTPipeline.TranscriptionProvider, c.Voice.STTPipeline.TranscriptionModel},
		{"voice.sttPipeline.tts", c.Voice.STTPipeline.TTSProvider, c.Voice.STTPipeline.TTSModel},
		{"voice.openaiRealtime", c.Voice.OpenAIRealtime.Provider, c.Voice.OpenAIRealtime.Model},
		{"voice.geminiRealtime", orDefault(c.Voice.GeminiRealtime.Provider, GeminiProvider), c.Voice.GeminiRealtime.Model},
		{"lookups.webSearch", c.Lookups.WebSearch.Provider, orDefault(c.Lookups.WebSearch.Model, c.LLM.Model)},
		{"lookups.image", c.Lookups.Image.Provider, orDefault(c.Lookups.Image.Model, c.LLM.Model)},
		{"memoryLlm", c.MemoryLLM.Provider, c.MemoryLLM.Model},
		{"embeddings", c.Embeddings.Provider, c.Embeddings.Model},
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// providerName maps a slot's provider ("" inherits llm.provider, which defaults to openai).
func (c *Config) providerName(slot string) string {
	if slot != "" {
		return slot
	}
	if c.LLM.Provider != "" {
		return c.LLM.Provider
	}
	return DefaultProvider
}

// Provider resolves the provider a slot names ("" for the slot's default) with its key from
// the environment. It fails only for a name that is not defined, which Validate reports first.
func (c *Config) Provider(slot string) (ResolvedProvider, error) {
	name := c.providerName(slot)
	p, ok := c.Providers[name]
	if !ok && name == GeminiProvider {
		return ResolvedProvider{Name: name, Kind: KindGemini, BaseURL: GeminiBaseURL,
			APIKey: c.Secrets.ProviderKeys[name], APIKeyEnv: EnvGeminiAPIKey + " or " + EnvGoogleAPIKey,
			Timeout: time.Duration(c.LLM.TimeoutSeconds) * time.Second, MaxRetries: c.LLM.MaxRetries}, nil
	}
	if !ok {
		if name != DefaultProvider {
			return ResolvedProvider{}, fmt.Errorf("config: provider %q is not defined in providers (defined: %s)", name, strings.Join(c.ProviderNames(), ", "))
		}
		return ResolvedProvider{
			Name: name, Kind: KindOpenAI, BaseURL: c.LLM.BaseURL, API: c.LLM.API,
			APIKey: c.Secrets.OpenAIAPIKey, APIKeyEnv: EnvOpenAIAPIKey,
			Timeout:    time.Duration(c.LLM.TimeoutSeconds) * time.Second,
			MaxRetries: c.LLM.MaxRetries, RequestsPerMinute: c.LLM.RequestsPerMinute,
		}, nil
	}
	r := ResolvedProvider{Name: name, Kind: orDefault(p.Kind, KindOpenAI), BaseURL: p.BaseURL, API: p.API, APIKeyEnv: p.APIKeyEnv,
		APIKey: c.Secrets.ProviderKeys[name], Timeout: time.Duration(p.TimeoutSeconds) * time.Second, MaxRetries: p.MaxRetries,
		RequestsPerMinute: p.RequestsPerMinute, OmitStreamUsage: p.OmitStreamUsage}
	if r.API == "" && r.Kind == KindOpenAI {
		r.API = "responses"
	}
	if r.Kind == KindGemini {
		r.BaseURL = orDefault(r.BaseURL, GeminiBaseURL)
		if r.APIKeyEnv == "" {
			r.APIKeyEnv = EnvGeminiAPIKey + " or " + EnvGoogleAPIKey
		}
	}
	if r.Timeout == 0 {
		r.Timeout = time.Duration(c.LLM.TimeoutSeconds) * time.Second
	}
	switch {
	case r.MaxRetries == 0:
		r.MaxRetries = c.LLM.MaxRetries
	case r.MaxRetries < 0:
		r.MaxRetries = 0
	}
	return r, nil
}

// ProviderNames lists the providers slots may name: the default and every providers entry.
func (c *Config) ProviderNames() []string {
	names := slices.Sorted(maps.Keys(c.Providers))
	if _, ok := c.Providers[GeminiProvider]; !ok {
		names = append([]string{GeminiProvider}, names...)
	}
	if _, ok := c.Providers[DefaultProvider]; !ok {
		names = append([]string{DefaultProvider}, names...)
	}
	return names
}

// MissingKeys lists, per slot in use, a provider that needs a key its environment variable does
// not hold: "voice.generationLlm: provider gemini: GEMINI_API_KEY is not set". A default
// provider pointed at another server (llm.baseUrl or OPENAI_BASE_URL) needs no key.
func (c *Config) MissingKeys() []string {
	var out []string
	for _, s := range c.SlotsInUse() {
		p, err := c.Provider(s.Provider)
		if err != nil || p.APIKey != "" || p.APIKeyEnv == "" {
			continue
		}
		if _, named := c.Providers[DefaultProvider]; p.Name == DefaultProvider && !named && !isOpenAI(p.BaseURL) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: provider %s: %s is not set", s.Path, p.Name, p.APIKeyEnv))
	}
	return out
}

// SlotsInUse is Slots without the ones the configuration switches off.
func (c *Config) SlotsInUse() []Slot {
	var out []Slot
	for _, s := range c.Slots() {
		switch {
		case s.Path == "llm.directAddressClassifier" && !c.LLM.DirectAddressClassifier.Enabled,
			s.Path == "replyFollowupLlm" && !c.ReplyFollowupLLM.Enabled,
			strings.HasPrefix(s.Path, "lookups.") && !c.ReplyFollowupLLM.Enabled,
			s.Path == "lookups.webSearch" && !c.Lookups.WebSearch.Enabled,
			s.Path == "lookups.image" && (!c.Lookups.Image.Enabled || !c.Images.Enabled),
			strings.HasPrefix(s.Path, "voice.") && !c.Voice.Enabled,
			s.Path == "voice.replyDecisionLlm" && !c.Voice.ReplyDecisionLLM.Enabled,
			s.Path == "voice.openaiRealtime" && (c.Voice.Mode != "realtime" || c.Voice.Realtime.Provider == KindGemini),
			s.Path == "voice.geminiRealtime" && (c.Voice.Mode != "realtime" || c.Voice.Realtime.Provider != KindGemini),
			strings.HasPrefix(s.Path, "voice.sttPipeline") && c.Voice.Mode != "stt_pipeline",
			s.Path == "embeddings" && !c.Embeddings.Enabled:
			continue
		}
		out = append(out, s)
	}
	return out
}

// isOpenAI reports whether a base URL is OpenAI's own API (empty means it too).
func isOpenAI(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return baseURL == "" || (err == nil && u.Hostname() == "api.openai.com")
}

var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validateProviders checks the providers map and every slot's provider name.
func (v *validator) validateProviders(c *Config) {
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		p, path := c.Providers[name], "providers."+name
		if strings.TrimSpace(name) == "" {
			v.addf("providers: a provider has an empty name")
		}
		if p.Kind != "" {
			v.enum(path+".kind", p.Kind, providerKinds)
		}
		switch {
		case p.BaseURL != "":
			v.url(path+".baseUrl", p.BaseURL)
		case p.Kind != KindGemini:
			v.addf("%s.baseUrl: required (the API root including /v1, e.g. http://127.0.0.1:8000/v1)", path)
		}
		switch {
		case p.API != "" && p.Kind == KindGemini:
			v.addf("%s.api: only for kind openai (a gemini provider speaks the Gemini Live API)", path)
		case p.API != "":
			v.enum(path+".api", p.API, llmAPIs)
		}
		if p.APIKeyEnv != "" && !envVarName.MatchString(p.APIKeyEnv) {
			v.addf("%s.apiKeyEnv: %q is not an environment variable name (the key itself belongs in the environment, e.g. GEMINI_API_KEY)", path, p.APIKeyEnv)
		}
		v.intRange(path+".timeoutSeconds", p.TimeoutSeconds, 0, 600)
		v.intRange(path+".maxRetries", p.MaxRetries, -1, 10)
		v.intRange(path+".requestsPerMinute", p.RequestsPerMinute, 0, MaxRequestsPerMinute)
	}
	defined := c.ProviderNames()
	for _, s := range c.Slots() {
		if s.Provider != "" && !slices.Contains(defined, s.Provider) {
			v.addf("%s: provider %q is not defined in providers (defined: %s)", providerKeyPath(s.Path), s.Provider, strings.Join(defined, ", "))
			continue
		}
		p, err := c.Provider(s.Provider)
		switch {
		case err != nil:
		case s.Path == "voice.geminiRealtime" && p.Kind != KindGemini && c.Voice.Realtime.Provider == KindGemini:
			v.addf("%s: provider %q is kind %s; voice.realtime.provider gemini needs a provider of kind gemini", providerKeyPath(s.Path), p.Name, p.Kind)
		case s.Path != "voice.geminiRealtime" && p.Kind == KindGemini:
			v.addf("%s: provider %q is kind gemini, which serves only voice.geminiRealtime (this slot needs an OpenAI-compatible provider)", providerKeyPath(s.Path), p.Name)
		}
	}
}

// providerKeyPath is the YAML path of a slot's provider key.
func providerKeyPath(slot string) string {
	switch slot {
	case "voice.sttPipeline.transcription":
		return "voice.sttPipeline.transcriptionProvider"
	case "voice.sttPipeline.tts":
		return "voice.sttPipeline.ttsProvider"
	}
	return slot + ".provider"
}
