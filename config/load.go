package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Environment variables read by Load.
const (
	EnvConfigPath   = "BANTER_CONFIG"
	EnvDiscordToken = "DISCORD_TOKEN"
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
	// EnvGeminiAPIKey and EnvGoogleAPIKey hold the Gemini API key (the first set wins) for the
	// built-in gemini provider and kind gemini providers without apiKeyEnv, as Google's SDKs
	// read them.
	EnvGeminiAPIKey  = "GEMINI_API_KEY"
	EnvGoogleAPIKey  = "GOOGLE_API_KEY"
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	// EnvMetricsListen overrides metrics.listen (the container image sets 0.0.0.0:9090).
	EnvMetricsListen = "BANTER_METRICS_LISTEN"
	// EnvShardIDs overrides discord.shardIds; EnvProcessIndex overrides discord.processIndex.
	EnvShardIDs     = "BANTER_SHARD_IDS"
	EnvProcessIndex = "BANTER_PROCESS_INDEX"
	// DefaultPath is used when present and nothing else names a file.
	DefaultPath = "banter.yaml"
)

// Locate picks the config file: the flag value, else $BANTER_CONFIG, else ./banter.yaml when it
// exists. An empty result means "built-in defaults".
func Locate(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	if p := getenv(EnvConfigPath); p != "" {
		return p
	}
	if _, err := os.Stat(DefaultPath); err == nil {
		return DefaultPath
	}
	return ""
}

// Load reads the file at path (defaults only when path is empty), applies the environment
// overlay through getenv and validates the result. Errors name the file, the field path, the
// value and what is allowed.
func Load(path string, getenv func(string) string) (*Config, error) {
	cfg := Default()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: read %s: %w", path, err)
		}
		if err := decodeInto(cfg, data); err != nil {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	applyEnv(cfg, getenv)
	if err := cfg.Validate(); err != nil {
		if path != "" {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// Parse decodes YAML over the defaults and validates it, without the environment.
func Parse(data []byte) (*Config, error) {
	cfg := Default()
	if err := decodeInto(cfg, data); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func applyEnv(cfg *Config, getenv func(string) string) {
	if getenv == nil {
		return
	}
	cfg.Secrets.DiscordToken = strings.TrimSpace(getenv(EnvDiscordToken))
	cfg.Secrets.OpenAIAPIKey = strings.TrimSpace(getenv(EnvOpenAIAPIKey))
	if u := strings.TrimSpace(getenv(EnvOpenAIBaseURL)); u != "" {
		cfg.LLM.BaseURL = u
	}
	if l := strings.TrimSpace(getenv(EnvMetricsListen)); l != "" {
		cfg.Metrics.Listen = l
	}
	if ids := strings.TrimSpace(getenv(EnvShardIDs)); ids != "" {
		cfg.Discord.ShardIDs = ids
	}
	if idx := strings.TrimSpace(getenv(EnvProcessIndex)); idx != "" {
		if n, err := strconv.Atoi(idx); err == nil {
			cfg.Discord.ProcessIndex = n
		} else {
			cfg.Discord.ProcessIndex = -1 // reported by validation as out of range
		}
	}
	geminiKey := strings.TrimSpace(getenv(EnvGeminiAPIKey))
	if geminiKey == "" {
		geminiKey = strings.TrimSpace(getenv(EnvGoogleAPIKey))
	}
	setKey := func(name, key string) {
		if key == "" {
			return
		}
		if cfg.Secrets.ProviderKeys == nil {
			cfg.Secrets.ProviderKeys = map[string]string{}
		}
		cfg.Secrets.ProviderKeys[name] = key
	}
	if _, named := cfg.Providers[GeminiProvider]; !named {
		setKey(GeminiProvider, geminiKey)
	}
	for name, p := range cfg.Providers {
		switch {
		case p.APIKeyEnv != "":
			setKey(name, strings.TrimSpace(getenv(p.APIKeyEnv)))
		case p.Kind == KindGemini:
			setKey(name, geminiKey)
		}
	}
}

// decodeInto checks the document against the schema (unknown keys, wrong types), then decodes
// it over cfg.
func decodeInto(cfg *Config, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not valid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	var problems []string
	checkNode(doc.Content[0], reflect.TypeOf(*cfg), "", &problems)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	if err := doc.Content[0].Decode(cfg); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	detectorEndSilence(cfg, doc.Content[0])
	return nil
}

// PitchEndSilenceMs is the end silence the pitch and energy detectors need: they hear a 700 ms
// pause inside a sentence as up to 880 ms (the quiet edges of the words around it), where the
// neural detector hears it as up to 740 ms and the defaults' 800 ms suffice (docs/voice.md,
// "Where a turn ends").
const PitchEndSilenceMs = 900

// detectorEndSilence gives a document that picks the pitch or energy detector their end
// silence: voice.endpointing.silenceMs and completeSilenceMs that the document leaves unset
// are raised from the defaults to PitchEndSilenceMs. Values the document sets are kept (and
// warned about when short: pause_may_end_turn).
func detectorEndSilence(cfg *Config, root *yaml.Node) {
	e := &cfg.Voice.Endpointing
	if e.Detector != "pitch" && e.Detector != "energy" {
		return
	}
	ep := mappingValue(mappingValue(root, "voice"), "endpointing")
	if mappingValue(ep, "silenceMs") == nil {
		e.SilenceMs = max(e.SilenceMs, PitchEndSilenceMs)
	}
	if mappingValue(ep, "completeSilenceMs") == nil && e.CompleteSilenceMs != 0 {
		e.CompleteSilenceMs = max(e.CompleteSilenceMs, PitchEndSilenceMs)
	}
}

// mappingValue returns the value of key in the mapping n (nil when n is not a mapping or has
// no such key, or the value is null), following aliases.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v := n.Content[i+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return nil
			}
			return v
		}
	}
	return nil
}

// checkNode walks a YAML node against the Go type it will decode into and records unknown keys
// and values of the wrong kind with their field paths.
func checkNode(n *yaml.Node, t reflect.Type, path string, problems *[]string) {
	where := func() string {
		if path == "" {
			return "(top level)"
		}
		return path
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			*problems = append(*problems, fmt.Sprintf("%s (line %d): must be a mapping of keys (allowed keys: %s)", where(), n.Line, strings.Join(yamlKeys(t), ", ")))
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			f, ok := fields[key.Value]
			if !ok {
				hint := ""
				if s := closest(key.Value, yamlKeys(t)); s != "" {
					hint = fmt.Sprintf("; did you mean %q?", s)
				}
				*problems = append(*problems, fmt.Sprintf("%s (line %d): unknown key%s (allowed keys: %s)", join(path, key.Value), key.Line, hint, strings.Join(yamlKeys(t), ", ")))
				continue
			}
			checkNode(val, f.Type, join(path, key.Value), problems)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			*problems = append(*problems, fmt.Sprintf("%s (line %d): must be a mapping of names to entries", where(), n.Line))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkNode(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), problems)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			*problems = append(*problems, fmt.Sprintf("%s (line %d): must be a list", where(), n.Line))
			return
		}
		for i, item := range n.Content {
			checkNode(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), problems)
		}
	default:
		if n.Kind != yaml.ScalarNode {
			*problems = append(*problems, fmt.Sprintf("%s (line %d): must be a single %s value", where(), n.Line, kindName(t)))
			return
		}
		v := reflect.New(t)
		if err := n.Decode(v.Interface()); err != nil {
			*problems = append(*problems, fmt.Sprintf("%s (line %d): %q is not a valid %s", where(), n.Line, n.Value, kindName(t)))
		}
	}
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "whole number"
	case reflect.Float64, reflect.Float32:
		return "number"
	case reflect.Bool:
		return "boolean (true or false)"
	case reflect.String:
		return "string"
	}
	return t.Kind().String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	m := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		m[name] = f
	}
	return m
}

func yamlKeys(t reflect.Type) []string {
	var keys []string
	for k := range yamlFields(t) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// closest returns the allowed key nearest to s by edit distance, when near enough to be a typo.
func closest(s string, allowed []string) string {
	best, bestD := "", 4
	for _, a := range allowed {
		if d := editDistance(strings.ToLower(s), strings.ToLower(a)); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
