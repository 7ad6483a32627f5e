package config

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher holds the running configuration and replaces it when the file changes (Run) or on
// request (Reload, wired to SIGHUP). Tunables (eagerness, windows, models, limits, personas, …)
// take effect at once; settings bound at start (discord, store, metrics, log format, secrets)
// keep their running values and a warning says a restart is needed. An invalid new file keeps
// the running configuration and logs why.
type Watcher struct {
	path    string
	getenv  func(string) string
	logger  *slog.Logger
	current atomic.Pointer[Config]

	mu      sync.Mutex // guards following; also serializes Reload
	subs    []func(old, updated *Config)
	metrics *ReloadMetrics
}

// NewWatcher returns a Watcher serving initial, reloading from path (which may be empty: then
// only the defaults and the environment apply and there is nothing to watch).
func NewWatcher(path string, initial *Config, getenv func(string) string, logger *slog.Logger) *Watcher {
	w := &Watcher{path: path, getenv: getenv, logger: logger}
	w.current.Store(initial)
	return w
}

// Current returns the configuration in force. It must not be modified.
func (w *Watcher) Current() *Config { return w.current.Load() }

// Subscribe registers fn to be called after each successful reload. Callbacks run on the
// goroutine that reloaded, outside the Watcher's lock, in registration order.
func (w *Watcher) Subscribe(fn func(old, updated *Config)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs = append(w.subs, fn)
}

// CountReloads counts every later reload's result in m (banter_config_reloads_total).
func (w *Watcher) CountReloads(m *ReloadMetrics) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.metrics = m
}

// Reload reads the file again. On error the running configuration stays and the error says why.
// Every reload is logged: config_reload_rejected, config_reloaded, or config_reload_unchanged
// (a valid file that says what is already running, such as a rejected edit undone).
func (w *Watcher) Reload() error {
	w.mu.Lock()
	old := w.current.Load()
	next, err := Load(w.path, w.getenv)
	if err != nil {
		w.metrics.observe(ReloadRejected)
		w.mu.Unlock()
		w.logger.Error("config_reload_rejected", "path", w.path, "error", err.Error())
		return err
	}
	if fixed := keepStartupSettings(old, next); len(fixed) > 0 {
		w.logger.Warn("config_reload_needs_restart", "path", w.path, "sections", fixed)
	}
	next.LogWarnings(w.logger)
	if reflect.DeepEqual(old, next) {
		w.metrics.observe(ReloadUnchanged)
		w.mu.Unlock()
		w.logger.Info("config_reload_unchanged", "path", w.path)
		return nil
	}
	w.current.Store(next)
	w.metrics.observe(ReloadApplied)
	subs := append([]func(old, updated *Config){}, w.subs...)
	w.mu.Unlock()
	w.logger.Info("config_reloaded", "path", w.path)
	for _, fn := range subs {
		fn(old, next)
	}
	return nil
}

// keepStartupSettings copies the settings bound at start from old into next and reports which
// of them the new file tried to change.
func keepStartupSettings(old, next *Config) []string {
	var changed []string
	keep(&changed, "discord", old.Discord, &next.Discord)
	keep(&changed, "store", old.Store, &next.Store)
	keep(&changed, "metrics", old.Metrics, &next.Metrics)
	keep(&changed, "log.format", old.Log.Format, &next.Log.Format)
	// The model client is built once at start with these.
	keep(&changed, "llm.baseUrl", old.LLM.BaseURL, &next.LLM.BaseURL)
	keep(&changed, "llm.api", old.LLM.API, &next.LLM.API)
	keep(&changed, "llm.timeoutSeconds", old.LLM.TimeoutSeconds, &next.LLM.TimeoutSeconds)
	keep(&changed, "llm.maxRetries", old.LLM.MaxRetries, &next.LLM.MaxRetries)
	// One client per provider is built at start; which provider a slot uses is bound there too.
	keepProviders(&changed, old, next)
	// The voice service is built once at start for one mode and pacer.
	keep(&changed, "voice.mode", old.Voice.Mode, &next.Voice.Mode)
	keep(&changed, "voice.realtimeReplyStrategy", old.Voice.RealtimeReplyStrategy, &next.Voice.RealtimeReplyStrategy)
	keep(&changed, "voice.sendRealtimePriority", old.Voice.SendRealtimePriority, &next.Voice.SendRealtimePriority)
	keep(&changed, "voice.sendSpinMs", old.Voice.SendSpinMs, &next.Voice.SendSpinMs)
	keep(&changed, "voice.sendClock", old.Voice.SendClock, &next.Voice.SendClock)
	next.Secrets = old.Secrets
	return changed
}

// keepProviders restores the providers map and every slot's provider name when they changed.
func keepProviders(changed *[]string, old, next *Config) {
	if !reflect.DeepEqual(old.Providers, next.Providers) {
		*changed = append(*changed, "providers")
		next.Providers = old.Providers
	}
	keep(changed, "llm.provider", old.LLM.Provider, &next.LLM.Provider)
	keep(changed, "llm.directAddressClassifier.provider", old.LLM.DirectAddressClassifier.Provider, &next.LLM.DirectAddressClassifier.Provider)
	keep(changed, "replyFollowupLlm.provider", old.ReplyFollowupLLM.Provider, &next.ReplyFollowupLLM.Provider)
	keep(changed, "voice.replyDecisionLlm.provider", old.Voice.ReplyDecisionLLM.Provider, &next.Voice.ReplyDecisionLLM.Provider)
	keep(changed, "voice.generationLlm.provider", old.Voice.GenerationLLM.Provider, &next.Voice.GenerationLLM.Provider)
	keep(changed, "voice.sttPipeline.transcriptionProvider", old.Voice.STTPipeline.TranscriptionProvider, &next.Voice.STTPipeline.TranscriptionProvider)
	keep(changed, "voice.sttPipeline.ttsProvider", old.Voice.STTPipeline.TTSProvider, &next.Voice.STTPipeline.TTSProvider)
	keep(changed, "voice.openaiRealtime.provider", old.Voice.OpenAIRealtime.Provider, &next.Voice.OpenAIRealtime.Provider)
	keep(changed, "lookups.webSearch.provider", old.Lookups.WebSearch.Provider, &next.Lookups.WebSearch.Provider)
	keep(changed, "lookups.image.provider", old.Lookups.Image.Provider, &next.Lookups.Image.Provider)
	keep(changed, "embeddings.provider", old.Embeddings.Provider, &next.Embeddings.Provider)
	keep(changed, "memoryLlm.provider", old.MemoryLLM.Provider, &next.MemoryLLM.Provider)
}

// keep restores *next to old when they differ and records name in changed.
func keep[T comparable](changed *[]string, name string, old T, next *T) {
	if old != *next {
		*changed = append(*changed, name)
		*next = old
	}
}

// Run watches the file for changes until ctx is done, reloading after writes settle. It
// watches the directory so that editors which replace the file (rename over it) are seen.
func (w *Watcher) Run(ctx context.Context) error {
	if w.path == "" {
		<-ctx.Done()
		return nil
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config: watch: %w", err)
	}
	defer fw.Close()
	abs, err := filepath.Abs(w.path)
	if err != nil {
		return fmt.Errorf("config: watch %s: %w", w.path, err)
	}
	if err := fw.Add(filepath.Dir(abs)); err != nil {
		return fmt.Errorf("config: watch %s: %w", w.path, err)
	}
	const settle = 150 * time.Millisecond
	var timer *time.Timer
	var fire <-chan time.Time
	// A config mounted through symlinks (a Kubernetes ConfigMap: banter.yaml -> ..data/banter.yaml,
	// ..data -> a timestamped folder) changes by swapping the ..data link: the file's own name
	// sees no event, but what it resolves to changes.
	target, _ := filepath.EvalSymlinks(abs)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if !ev.Has(fsnotify.Write | fsnotify.Create | fsnotify.Rename) {
				continue
			}
			if filepath.Clean(ev.Name) != abs {
				now, _ := filepath.EvalSymlinks(abs)
				if now == target {
					continue
				}
				target = now
			}
			if timer == nil {
				timer = time.NewTimer(settle)
			} else {
				timer.Reset(settle)
			}
			fire = timer.C
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.logger.Warn("config_watch_error", "error", err.Error())
		case <-fire:
			fire = nil
			_ = w.Reload() // logged inside
		}
	}
}
