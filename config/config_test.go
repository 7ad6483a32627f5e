package config

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
)

func noEnv(string) string { return "" }

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaultsAreValid(t *testing.T) {
	cfg, err := Load("", noEnv)
	if err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if cfg.Context.ReplyChainDepth != 40 || cfg.Context.ClusterGapMinutes != 60 || cfg.Context.ClusterLookback != 25 {
		t.Errorf("context defaults = %+v, want depth 40, gap 60, lookback 25", cfg.Context)
	}
	if !cfg.Context.IncludeOwnMessagesInHistory {
		t.Error("includeOwnMessagesInHistory defaults to false, want true")
	}
	if cfg.Metrics.Listen != "127.0.0.1:9090" {
		t.Errorf("metrics.listen = %q", cfg.Metrics.Listen)
	}
	if cfg.Activity.InitiativeReplyShare != 0.65 {
		t.Errorf("initiativeReplyShare = %v, want 0.65", cfg.Activity.InitiativeReplyShare)
	}
	if cfg.Text.ForcedReplyOnSkip != "placeholder" || cfg.Text.ForcedReplyPlaceholder == "" || !cfg.Text.TargetedReplies {
		t.Errorf("text defaults = %+v, want placeholder mode with a text and targeted replies on", cfg.Text)
	}
	if cfg.Activity.PerUserPromptShare != 0.5 {
		t.Errorf("perUserPromptShare = %v, want 0.5", cfg.Activity.PerUserPromptShare)
	}
}

// TestSilentForcedRepliesNeedNoPlaceholder: with forcedReplyOnSkip silent, an empty placeholder
// is allowed (it is never sent).
func TestSilentForcedRepliesNeedNoPlaceholder(t *testing.T) {
	cfg, err := Parse([]byte("text:\n  forcedReplyOnSkip: silent\n  forcedReplyPlaceholder: \"\"\n  targetedReplies: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Text.ForcedReplyOnSkip != "silent" || cfg.Text.TargetedReplies {
		t.Errorf("text = %+v", cfg.Text)
	}
}

func TestExampleFileIsValidAndComplete(t *testing.T) {
	data, err := os.ReadFile("../banter.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data); err != nil {
		t.Fatalf("banter.example.yaml: %v", err)
	}
	// Every key of the schema appears in the example, so operators see them all.
	rendered, err := Default().Redacted()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(rendered), "\n") {
		key, _, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || strings.HasPrefix(key, "#") || strings.HasPrefix(key, "-") || key == "default" {
			continue
		}
		if !strings.Contains(string(data), key+":") {
			t.Errorf("banter.example.yaml does not mention key %q", key)
		}
	}
}

func TestValidationMessages(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every fragment must appear in the error
	}{
		{"unknown key with suggestion", "bot:\n  nmae: x\n",
			[]string{"bot.nmae (line 2): unknown key", `did you mean "name"?`, "allowed keys: aliases, answerToNickname, commandPrefix, name, persona, personas"}},
		{"bad answerToNickname", "bot:\n  answerToNickname: sometimes\n",
			[]string{`bot.answerToNickname (line 2): "sometimes" is not a valid boolean (true or false)`}},
		{"unknown top-level section", "voic:\n  mode: realtime\n",
			[]string{"voic (line 1): unknown key", `did you mean "voice"?`}},
		{"bad enum", "voice:\n  mode: sst\n",
			[]string{`voice.mode: "sst" is not allowed (allowed values: stt_pipeline, realtime)`}},
		{"negative price", "prices:\n  my-model:\n    output: -1\n",
			[]string{"prices.my-model.output: -1 is not a price (want US dollars >= 0)"}},
		{"unknown price field", "prices:\n  my-model:\n    outptu: 1\n",
			[]string{"prices.my-model.outptu (line 3): unknown key"}},
		{"meaning weight out of range", "embeddings:\n  meaningWeight: 1.5\n",
			[]string{"embeddings.meaningWeight: 1.5 is out of range (want 0 to 1"}},
		{"embeddings dimensions", "embeddings:\n  dimensions: -3\n",
			[]string{"embeddings.dimensions: -3 is out of range (allowed 0 to 4096)"}},
		{"backfill batch size", "embeddings:\n  backfill:\n    batchSize: 0\n",
			[]string{"embeddings.backfill.batchSize: 0 is out of range (allowed 1 to 2048)"}},
		{"backfill rate", "embeddings:\n  backfill:\n    batchesPerMinute: 601\n",
			[]string{"embeddings.backfill.batchesPerMinute: 601 is out of range (allowed 1 to 600)"}},
		{"embeddings without a model", "embeddings:\n  enabled: true\n  model: \"\"\n",
			[]string{"embeddings.model"}},
		{"bad pgvector mode", "store:\n  pgvector: maybe\n",
			[]string{`store.pgvector: "maybe" is not allowed (allowed values: auto, off)`}},
		{"embeddings provider undefined", "embeddings:\n  provider: nowhere\n",
			[]string{`embeddings.provider: provider "nowhere" is not defined in providers`}},
		{"bad send clock", "voice:\n  sendClock: yes\n",
			[]string{`voice.sendClock: "yes" is not allowed (allowed values: off, own, shared)`}},
		{"out of range eagerness", "activity:\n  replyLevelInitiative: 150\n",
			[]string{"activity.replyLevelInitiative: 150 is out of range (allowed 0 to 100)"}},
		{"wrong type", "context:\n  replyChainDepth: lots\n",
			[]string{`context.replyChainDepth (line 2): "lots" is not a valid whole number`}},
		{"list expected", "safety:\n  banWords: nope\n",
			[]string{"safety.banWords (line 2): must be a list"}},
		{"bad snowflake", "permissions:\n  allowedChannelIds: [general]\n",
			[]string{`permissions.allowedChannelIds[0]: "general" is not a Discord id`}},
		{"reserve above cap", "activity:\n  maxPromptsPerHour: 10\n  explicitReservePromptsPerHour: 20\n",
			[]string{"activity.explicitReservePromptsPerHour: 20 is out of range (allowed 0 to 10)"}},
		{"unknown persona", "bot:\n  persona: pirate\n",
			[]string{`bot.persona: "pirate" is not one of bot.personas (defined: default)`}},
		{"unknown speech detector", "voice:\n  endpointing:\n    detector: silero\n",
			[]string{`voice.endpointing.detector: "silero"`, "neural, pitch, energy"}},
		{"several problems at once", "voice:\n  bargeIn:\n    policy: sometimes\nlog:\n  format: xml\n",
			[]string{`voice.bargeIn.policy: "sometimes"`, "reply_target, anyone, none", `log.format: "xml"`}},
		{"not yaml", "bot: [unclosed\n", []string{"not valid YAML"}},
		{"catch-up age out of range", "text:\n  catchUpMaxAgeMinutes: 0\n",
			[]string{"text.catchUpMaxAgeMinutes: 0 is out of range (allowed 1 to 10080)"}},
		{"bad store driver", "store:\n  driver: mysql\n", []string{`store.driver: "mysql" is not allowed (allowed values: sqlite, postgres)`}},
		{"postgres with a file path", "store:\n  driver: postgres\n  dsn: ./data/banter.db\n", []string{"store.dsn: with store.driver postgres", "postgres://"}},
		{"bad metrics address", "metrics:\n  listen: nine-zero\n", []string{`metrics.listen: "nine-zero" is not host:port`}},
		{"bad forced reply mode", "text:\n  forcedReplyOnSkip: shrug\n",
			[]string{`text.forcedReplyOnSkip: "shrug" is not allowed (allowed values: placeholder, silent)`}},
		{"placeholder mode without a text", "text:\n  forcedReplyPlaceholder: \"  \"\n",
			[]string{"text.forcedReplyPlaceholder: must not be empty"}},
		{"per-user share of nothing", "activity:\n  perUserPromptShare: 0\n",
			[]string{"activity.perUserPromptShare: 0 is out of range (allowed 0.01 to 1)"}},
		{"bad reasoning effort", "voice:\n  replyDecisionLlm:\n    reasoningEffort: tiny\n",
			[]string{`voice.replyDecisionLlm.reasoningEffort: "tiny" is not allowed (allowed values: lowest, default, none, minimal, low, medium, high, xhigh, max)`}},
		{"bad classifier reasoning effort", "llm:\n  directAddressClassifier:\n    reasoningEffort: \"\"\n",
			[]string{`llm.directAddressClassifier.reasoningEffort: "" is not allowed`}},
		{"pause too short", "voice:\n  speculation:\n    pauseMs: 20\n",
			[]string{"voice.speculation.pauseMs: 20 is out of range (allowed 100 to 5000)"}},
		{"adaptive end out of range", "voice:\n  endpointing:\n    completeSilenceMs: 50\n    trailingSilenceMs: 9000\n",
			[]string{"voice.endpointing.completeSilenceMs: 50 is out of range (allowed 100 to 5000)",
				"voice.endpointing.trailingSilenceMs: 9000 is out of range (allowed 100 to 5000)"}},
		{"false-end window out of range", "voice:\n  endpointing:\n    falseEndMs: 20000\n",
			[]string{"voice.endpointing.falseEndMs: 20000 is out of range (allowed 100 to 10000)"}},
		{"bad image mode", "images:\n  mode: base64\n",
			[]string{`images.mode: "base64" is not allowed (allowed values: inline, url)`}},
		{"image host with a scheme", "images:\n  extraHosts: [\"http://127.0.0.1:9\"]\n",
			[]string{`images.extraHosts[0]: "http://127.0.0.1:9" is not a host or host:port`}},
		{"bad memory scope", "lookups:\n  memory:\n    scope: everywhere\n",
			[]string{`lookups.memory.scope: "everywhere" is not allowed (allowed values: channel, guild)`}},
		{"web search on a chat completions provider",
			"providers:\n  local: {baseUrl: \"http://127.0.0.1:8000/v1\", api: chat_completions}\nllm: {provider: local}\n" +
				"replyFollowupLlm: {enabled: true}\nlookups:\n  webSearch: {enabled: true}\n",
			[]string{"lookups.webSearch.enabled: provider local speaks chat_completions, which has no hosted web search"}},
		{"lookup provider undefined", "lookups:\n  image: {provider: nowhere}\n",
			[]string{`lookups.image.provider: provider "nowhere" is not defined in providers`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "banter.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, noEnv)
			if err == nil {
				t.Fatal("Load accepted an invalid file")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestOverlayKeepsDefaultsForUnsetKeys(t *testing.T) {
	cfg, err := Parse([]byte("bot:\n  name: pip\n  aliases: [pipster]\n  personas:\n    pirate:\n      prompt: arr\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bot.Name != "pip" || cfg.Bot.Aliases[0] != "pipster" || !cfg.Bot.AnswerToNickname {
		t.Errorf("bot = %+v", cfg.Bot)
	}
	off, err := Parse([]byte("bot:\n  answerToNickname: false\n"))
	if err != nil || off.Bot.AnswerToNickname {
		t.Errorf("answerToNickname: false: %v, %v", off.Bot.AnswerToNickname, err)
	}
	if _, ok := cfg.Bot.Personas["default"]; !ok {
		t.Error("adding a persona dropped the default persona")
	}
	if cfg.Bot.Personas["pirate"].Prompt != "arr" {
		t.Error("pirate persona not loaded")
	}
	if cfg.Context.ReplyChainDepth != 40 {
		t.Errorf("unset key lost its default: replyChainDepth = %d", cfg.Context.ReplyChainDepth)
	}
}

func TestEnvOverlay(t *testing.T) {
	cfg, err := Load("", env(map[string]string{
		EnvDiscordToken:  " tok ",
		EnvOpenAIAPIKey:  "sk-test",
		EnvOpenAIBaseURL: "http://127.0.0.1:9999/v1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Secrets.DiscordToken != "tok" || cfg.Secrets.OpenAIAPIKey != "sk-test" {
		t.Errorf("secrets not read from the environment: %#v", cfg.Secrets)
	}
	if cfg.LLM.BaseURL != "http://127.0.0.1:9999/v1" {
		t.Errorf("OPENAI_BASE_URL not applied: %q", cfg.LLM.BaseURL)
	}
	if _, err := Load("", env(map[string]string{EnvOpenAIBaseURL: "not a url"})); err == nil ||
		!strings.Contains(err.Error(), "llm.baseUrl") {
		t.Errorf("bad OPENAI_BASE_URL: err = %v, want one naming llm.baseUrl", err)
	}
	cfg, err = Load("", env(map[string]string{EnvMetricsListen: " 0.0.0.0:9090 "}))
	if err != nil || cfg.Metrics.Listen != "0.0.0.0:9090" {
		t.Errorf("BANTER_METRICS_LISTEN not applied: %q, %v", cfg.Metrics.Listen, err)
	}
	if _, err := Load("", env(map[string]string{EnvMetricsListen: "9090"})); err == nil ||
		!strings.Contains(err.Error(), "metrics.listen") {
		t.Errorf("bad BANTER_METRICS_LISTEN: err = %v, want one naming metrics.listen", err)
	}
}

func TestSecretsNeverRendered(t *testing.T) {
	cfg, err := Load("", env(map[string]string{EnvDiscordToken: "super-secret-token", EnvOpenAIAPIKey: "sk-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "secrets", cfg.Secrets, "cfg", cfg)
	for _, s := range []string{string(out), logs.String()} {
		if strings.Contains(s, "super-secret-token") || strings.Contains(s, "sk-secret") {
			t.Fatalf("secret leaked:\n%s", s)
		}
	}
	if !strings.Contains(string(out), "DISCORD_TOKEN: set (redacted)") {
		t.Errorf("redacted output does not say the token is set:\n%s", out)
	}
}

func TestLocate(t *testing.T) {
	if got := Locate("a.yaml", env(map[string]string{EnvConfigPath: "b.yaml"})); got != "a.yaml" {
		t.Errorf("flag should win, got %q", got)
	}
	if got := Locate("", env(map[string]string{EnvConfigPath: "b.yaml"})); got != "b.yaml" {
		t.Errorf("BANTER_CONFIG should be used, got %q", got)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if got := Locate("", noEnv); got != "" {
		t.Errorf("no file: got %q, want defaults", got)
	}
	if err := os.WriteFile(DefaultPath, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Locate("", noEnv); got != DefaultPath {
		t.Errorf("./banter.yaml present: got %q", got)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // the way editors save
		t.Fatal(err)
	}
}

func TestReloadOnFileChange(t *testing.T) {
	path, w, logs := watchFile(t, "activity:\n  replyLevelInitiative: 10\n")
	changes := make(chan *Config, 4)
	w.Subscribe(func(_, updated *Config) { changes <- updated })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// fsnotify needs the watch in place before the write; retry the write until seen.
	var got *Config
	deadline := time.After(10 * time.Second)
	for got == nil {
		writeFile(t, path, "activity:\n  replyLevelInitiative: 80\nmetrics:\n  listen: 127.0.0.1:1\n")
		select {
		case got = <-changes:
		case <-time.After(300 * time.Millisecond):
		case <-deadline:
			t.Fatal("valid change was not picked up")
		}
	}
	if got.Activity.ReplyLevelInitiative != 80 || w.Current().Activity.ReplyLevelInitiative != 80 {
		t.Errorf("eagerness not reloaded: %d", got.Activity.ReplyLevelInitiative)
	}
	if got.Metrics.Listen != "127.0.0.1:9090" {
		t.Errorf("metrics.listen changed live to %q; it needs a restart", got.Metrics.Listen)
	}
	if !strings.Contains(logs.String(), "config_reload_needs_restart") {
		t.Errorf("no restart warning logged: %s", logs.String())
	}

	// An invalid file keeps the running configuration and logs why.
	writeFile(t, path, "activity:\n  replyLevelInitiative: 500\n")
	deadline = time.After(10 * time.Second)
	for !strings.Contains(logs.String(), "config_reload_rejected") {
		select {
		case <-changes:
			t.Fatal("invalid config was applied")
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("invalid change was not reported")
		}
	}
	if w.Current().Activity.ReplyLevelInitiative != 80 {
		t.Errorf("running config replaced by an invalid one")
	}
	if !strings.Contains(logs.String(), "activity.replyLevelInitiative: 500 is out of range") {
		t.Errorf("rejection does not say why: %s", logs.String())
	}
}

func TestReloadExplicit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "banter.yaml")
	writeFile(t, path, "voice:\n  replyEagerness: 5\n")
	cfg, err := Load(path, env(map[string]string{EnvDiscordToken: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(path, cfg, env(map[string]string{EnvDiscordToken: "t"}), slog.New(slog.NewTextHandler(io.Discard, nil)))
	writeFile(t, path, "voice:\n  replyEagerness: 60\n")
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if w.Current().Voice.ReplyEagerness != 60 || w.Current().Secrets.DiscordToken != "t" {
		t.Errorf("after SIGHUP-style reload: eagerness %d, token kept %v", w.Current().Voice.ReplyEagerness, w.Current().Secrets.DiscordToken == "t")
	}
	writeFile(t, path, "voice: [")
	if err := w.Reload(); err == nil {
		t.Error("broken YAML accepted on reload")
	}
	if w.Current().Voice.ReplyEagerness != 60 {
		t.Error("broken reload replaced the running config")
	}
}

// TestReloadKeepsStartupSettings: each setting bound at start keeps its running value on reload
// and is named in the restart warning, while a live setting in the same file applies.
func TestReloadKeepsStartupSettings(t *testing.T) {
	tests := []struct {
		name, yaml, section string
		kept                func(*Config) bool
	}{
		{"store", "store:\n  dsn: /tmp/other.db\n", "store", func(c *Config) bool { return c.Store.DSN == "./data/banter.db" }},
		{"metrics", "metrics:\n  listen: 127.0.0.1:1\n", "metrics", func(c *Config) bool { return c.Metrics.Listen == "127.0.0.1:9090" }},
		{"discord", "discord:\n  shutdownTimeoutSeconds: 99\n", "discord", func(c *Config) bool { return c.Discord.ShutdownTimeoutSeconds == 15 }},
		{"log format", "log:\n  format: text\n", "log.format", func(c *Config) bool { return c.Log.Format == "json" }},
		{"llm base", "llm:\n  baseUrl: http://127.0.0.1:1/v1\n", "llm.baseUrl", func(c *Config) bool { return c.LLM.BaseURL == "https://api.openai.com/v1" }},
		{"llm api", "llm:\n  api: chat_completions\n", "llm.api", func(c *Config) bool { return c.LLM.API == "responses" }},
		{"llm timeout", "llm:\n  timeoutSeconds: 5\n", "llm.timeoutSeconds", func(c *Config) bool { return c.LLM.TimeoutSeconds == 60 }},
		{"llm retries", "llm:\n  maxRetries: 7\n", "llm.maxRetries", func(c *Config) bool { return c.LLM.MaxRetries == 2 }},
		{"voice mode", "voice:\n  mode: realtime\n", "voice.mode", func(c *Config) bool { return c.Voice.Mode == "stt_pipeline" }},
		{"realtime strategy", "voice:\n  realtimeReplyStrategy: native\n", "voice.realtimeReplyStrategy", func(c *Config) bool { return c.Voice.RealtimeReplyStrategy == "brain" }},
		{"send priority", "voice:\n  sendRealtimePriority: 10\n", "voice.sendRealtimePriority", func(c *Config) bool { return c.Voice.SendRealtimePriority == 0 }},
		{"send spin", "voice:\n  sendSpinMs: -1\n", "voice.sendSpinMs", func(c *Config) bool { return c.Voice.SendSpinMs == 0 }},
		{"send clock", "voice:\n  sendClock: shared\n", "voice.sendClock", func(c *Config) bool { return c.Voice.SendClock == "own" }},
		{"embeddings provider", "embeddings:\n  provider: openai\n", "embeddings.provider", func(c *Config) bool { return c.Embeddings.Provider == "" }},
		{"memory provider", "memoryLlm:\n  provider: openai\n", "memoryLlm.provider", func(c *Config) bool { return c.MemoryLLM.Provider == "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, w, logs := watchFile(t, "")
			writeFile(t, path, tt.yaml+"activity:\n  replyLevelInitiative: 61\n")
			if err := w.Reload(); err != nil {
				t.Fatal(err)
			}
			if !tt.kept(w.Current()) {
				t.Errorf("%s changed live; it needs a restart", tt.section)
			}
			if w.Current().Activity.ReplyLevelInitiative != 61 {
				t.Error("the live setting in the same file was not applied")
			}
			if !strings.Contains(logs.String(), "config_reload_needs_restart") || !strings.Contains(logs.String(), `"`+tt.section+`"`) {
				t.Errorf("restart warning does not name %s: %s", tt.section, logs.String())
			}
		})
	}
}

// TestReloadOnSymlinkSwap: a config mounted the way Kubernetes mounts a ConfigMap (the file is a
// symlink through ..data, which is swapped atomically) is reloaded when ..data changes.
func TestReloadOnSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	mkVersion := func(name, yaml string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "banter.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mkVersion("..v1", "voice:\n  replyEagerness: 10\n")
	if err := os.Symlink("..v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "banter.yaml")
	if err := os.Symlink(filepath.Join("..data", "banter.yaml"), path); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(path, cfg, noEnv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	changes := make(chan *Config, 4)
	w.Subscribe(func(_, updated *Config) { changes <- updated })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	deadline := time.After(10 * time.Second)
	for i := 2; ; i++ {
		// The swap as Kubernetes does it: a new folder, a temporary link, renamed over ..data.
		v := fmt.Sprintf("..v%d", i)
		mkVersion(v, "voice:\n  replyEagerness: 70\n")
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(v, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-changes:
			if got.Voice.ReplyEagerness != 70 {
				t.Fatalf("reloaded eagerness %d, want 70", got.Voice.ReplyEagerness)
			}
			return
		case <-time.After(400 * time.Millisecond): // the watch may not have been in place yet
		case <-deadline:
			t.Fatal("symlink swap not picked up")
		}
	}
}

// TestRedactedHidesEveryCredential: `banter config check` renders the configuration through
// Redacted; no credential written into any URL or connection string of the file survives it
// (providers' base URLs, store.dsn as a URL or as key=value pairs, llm.baseUrl, discord.apiUrl),
// while what an operator needs to recognise them (scheme, host, path, other parameters) stays.
func TestRedactedHidesEveryCredential(t *testing.T) {
	tests := []struct {
		name, yaml string
		secrets    []string // none may appear
		kept       []string // every one must appear
	}{
		{"provider base URL", "providers:\n  local:\n    baseUrl: http://prov-user:prov-pass@llm.internal:8080/v1?api_key=prov-key&x=1\n    api: chat_completions\n",
			[]string{"prov-user", "prov-pass", "prov-key"}, []string{"llm.internal:8080/v1", "x=1"}},
		{"postgres URL", "store:\n  driver: postgres\n  dsn: postgres://pg-user:pg-pass@db.internal:5432/banter?sslmode=require&password=pg-query-pass\n",
			[]string{"pg-user", "pg-pass", "pg-query-pass"}, []string{"db.internal:5432/banter", "sslmode=require"}},
		{"postgres key=value", "store:\n  driver: postgres\n  dsn: host=db.internal user=banter password=kv-pass sslpassword='kv ssl pass' dbname=banter\n",
			[]string{"kv-pass", "kv ssl pass"}, []string{"host=db.internal", "dbname=banter", "user=banter"}},
		{"llm and discord URLs", "llm:\n  baseUrl: https://llm-user:llm-pass@api.example.com/v1\ndiscord:\n  apiUrl: https://d-user:d-pass@discord.example.com\n",
			[]string{"llm-user", "llm-pass", "d-user", "d-pass"}, []string{"api.example.com/v1", "discord.example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "banter.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			out, err := cfg.Redacted()
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.secrets {
				if strings.Contains(string(out), s) {
					t.Errorf("rendered %q:\n%s", s, out)
				}
			}
			for _, s := range append(tt.kept, "REDACTED") {
				if !strings.Contains(string(out), s) {
					t.Errorf("lost %q:\n%s", s, out)
				}
			}
		})
	}
}

// TestEmbeddingsReloadLive: embeddings.enabled, its model and meaningWeight apply on reload
// without a restart warning.
func TestEmbeddingsReloadLive(t *testing.T) {
	path, w, logs := watchFile(t, "")
	writeFile(t, path, "embeddings:\n  enabled: true\n  model: text-embedding-3-large\n  meaningWeight: 0.8\n")
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if e := w.Current().Embeddings; !e.Enabled || e.Model != "text-embedding-3-large" || e.MeaningWeight != 0.8 {
		t.Errorf("embeddings after reload = %+v", e)
	}
	if strings.Contains(logs.String(), "config_reload_needs_restart") {
		t.Errorf("a live change asked for a restart: %s", logs.String())
	}
}

// watchFile writes content to a new config file, loads it and watches it; the watcher's logs go
// to the returned buffer.
func watchFile(t *testing.T, content string) (string, *Watcher, *logbuf.Buffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "banter.yaml")
	writeFile(t, path, content)
	cfg, err := Load(path, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	return path, NewWatcher(path, cfg, noEnv, slog.New(slog.NewJSONHandler(logs, nil))), logs
}
