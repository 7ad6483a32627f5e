// Package playground is what `banter playground` (and `banter run` without a
// Discord token) starts: banter itself, unchanged, against the embedded
// Discord and OpenAI simulators, and a web page on loopback where anyone can
// talk to it in text and voice, watch every reply decision as it is made,
// and tune it by editing the config file it runs on.
//
// Everything the page does goes through the simulators' control APIs (the
// Discord simulator's, sim/discord/control, and the OpenAI simulator's
// /_sim routes, proxied under /discord/ and /openai/) or the bot's real
// config file, so a script can do the same. The bot's log events reach the
// page through a Hub, a slog.Handler teed next to the bot's log file.
//
// Without OPENAI_API_KEY or OPENAI_BASE_URL the models are the OpenAI
// simulator's demo brain (openaisim.DemoRules), labelled as such on the page.
package playground

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/banterbot/banter/config"
)

// Options configure Run.
type Options struct {
	// Addr is the page's address. Empty: 127.0.0.1:8080, or the next free
	// port after it. An address that was asked for and is taken is an error
	// naming it. Only loopback addresses are accepted.
	Addr string
	// ConfigPath is the config the playground's own config file starts from
	// (empty: the built-in defaults). The playground never edits it.
	ConfigPath string
	// Dir keeps the playground's config file, database and log; empty is a
	// temporary folder removed when Run returns. With a Dir, the config file
	// (and the tuning done on the page) is kept for the next run.
	Dir string
	// Getenv reads the environment (OPENAI_API_KEY and OPENAI_BASE_URL pick
	// real models).
	Getenv func(string) string
	// Out receives what the playground prints: its address and what it started.
	Out io.Writer
	// RunBot runs banter until ctx ends (cmd/banter's app).
	RunBot func(ctx context.Context, bot Bot) error
	// ReadyTimeout bounds the wait for the bot's first login (default 60 s).
	ReadyTimeout time.Duration
}

// Bot is what Run hands to Options.RunBot: the bot's config file and
// environment, and the hooks through which the page follows it.
type Bot struct {
	// ConfigPath is the config file the bot runs on (and reloads).
	ConfigPath string
	// Getenv is the bot's environment: the simulated Discord's token as
	// DISCORD_TOKEN (and a key for the demo brain), the rest from Options.
	Getenv func(string) string
	// LogFile receives the bot's own JSON log.
	LogFile io.Writer
	// Events is a slog.Handler to tee the bot's logger into (see Tee): the
	// page's decision panel and config editor read the events from it.
	Events slog.Handler
	// Watcher is to be called with the bot's config watcher once it exists.
	Watcher func(*config.Watcher)
	// Metrics is to be called with the address the bot's metrics server
	// listens on.
	Metrics func(addr string)
	// Store is to be called with the bot's store once it is open: the
	// memory panel reads the facts from it.
	Store func(MemoryStore)
}

// Run starts the playground and serves until ctx ends or the bot stops.
func Run(ctx context.Context, o Options) error {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	seed := config.Locate(o.ConfigPath, o.Getenv)
	seedCfg, err := config.Load(seed, o.Getenv)
	if err != nil {
		return &ConfigError{err}
	}
	ln, err := listenPage(o.Addr, defaultPort)
	if err != nil {
		return err
	}
	defer ln.Close()
	dir, cleanup, err := stateDir(o.Dir)
	if err != nil {
		return err
	}
	defer cleanup()
	demo := seedCfg.Secrets.OpenAIAPIKey == "" && seedCfg.LLM.BaseURL == config.Default().LLM.BaseURL
	w, err := startWorld(seedCfg.Bot.Name, demo)
	if err != nil {
		return err
	}
	defer w.close()
	w.geminiDemo = w.osim != nil && o.Getenv(config.EnvGeminiAPIKey) == "" && o.Getenv(config.EnvGoogleAPIKey) == ""

	file := configFile{path: filepath.Join(dir, "playground.yaml")}
	if err := w.writeConfig(file, seed, dir); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "banter.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("playground: log file: %w", err)
	}
	defer logFile.Close()

	s := newServer(w, file, NewHub(), w.botEnv(o.Getenv), demo, seedCfg)
	s.info.LogPath = logPath
	botCtx, stopBot := context.WithCancel(ctx)
	defer stopBot()
	botDone := make(chan error, 1)
	go func() {
		botDone <- o.RunBot(botCtx, Bot{ConfigPath: file.path, Getenv: s.botEnv, LogFile: logFile,
			Events: s.hub.Handler(), Watcher: s.setWatcher, Metrics: s.setMetrics, Store: s.setStore})
	}()
	if err := w.waitBot(ctx, o.ReadyTimeout, botDone); err != nil {
		stopBot()
		return fmt.Errorf("playground: %w (the bot's log: %s)", err, logPath)
	}

	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		<-serveDone
	}()
	s.info.URL = "http://" + ln.Addr().String()
	printStarted(o.Out, s.info, file.path)

	select {
	case <-ctx.Done():
		stopBot()
		return <-botDone
	case err := <-botDone:
		if err == nil {
			err = errors.New("the bot stopped")
		}
		return fmt.Errorf("playground: %w (the bot's log: %s)", err, logPath)
	}
}

// ConfigError is a bad config given to the playground (exit status 2).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ExitCode makes a ConfigError a usage error for cmd/banter.
func (e *ConfigError) ExitCode() int { return 2 }

// stateDir returns the folder for the playground's files and how to clean it up.
func stateDir(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, fmt.Errorf("playground: -dir: %w", err)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", nil, fmt.Errorf("playground: -dir: %w", err)
		}
		return abs, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "banter-playground-")
	if err != nil {
		return "", nil, fmt.Errorf("playground: %w", err)
	}
	return tmp, func() { _ = os.RemoveAll(tmp) }, nil
}

// defaultPort is where the page listens when no address is asked for.
const defaultPort = 8080

// portTries is how many ports after the default are tried.
const portTries = 50

// listenPage listens on addr; with addr empty, on 127.0.0.1:first or the
// next free port. Only loopback addresses are accepted: the page drives a
// whole simulated server and edits the bot's config.
func listenPage(addr string, first int) (net.Listener, error) {
	if addr == "" {
		var last error
		for p := first; p < first+portTries; p++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err == nil {
				return ln, nil
			}
			last = err
		}
		return nil, fmt.Errorf("playground: no free port in 127.0.0.1:%d-%d (%v); choose one with -addr", first, first+portTries-1, last)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("playground: -addr %q: %w (want host:port, e.g. 127.0.0.1:8080)", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("playground: -addr %q is not a loopback address (the page is for this machine only: use 127.0.0.1)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("playground: -addr %s: port %s is in use (choose another, or leave -addr out to take the next free port)", addr, port)
		}
		return nil, fmt.Errorf("playground: -addr %s: %w", addr, err)
	}
	return ln, nil
}

// printStarted says what Run started.
func printStarted(out io.Writer, info Info, cfgPath string) {
	if out == nil {
		return
	}
	models := "the demo brain (no OPENAI_API_KEY: short canned replies; set OPENAI_API_KEY for real models)"
	if !info.Demo {
		models = info.Model + " at " + info.ModelURL
	}
	fmt.Fprintf(out, `banter playground: open %s
  what runs    banter itself, unchanged, on a simulated Discord server %q (#general, a thread, a voice room)
  models       %s
  config       %s (the page's controls edit it; so can you: the bot reloads it live)
  bot log      %s
  metrics      %s/metrics
  control API  %s (scripts can do what the page does: docs/simulator.md)
  real server  set DISCORD_TOKEN (README: "From the playground to your server")
press Ctrl+C to stop
`, info.URL, info.GuildName, models, cfgPath, info.LogPath, info.URL, info.ControlURL)
}
