package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/playground"
	"github.com/banterbot/banter/store"
)

// playgroundCommand implements `banter playground`: banter against the embedded Discord and
// OpenAI simulators, with a web page on loopback to talk to it and tune it (package playground).
// `banter run` starts it too when DISCORD_TOKEN is not set.
func playgroundCommand(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("banter playground", flag.ContinueOnError)
	addr := fs.String("addr", "", "loopback address of the page (default 127.0.0.1:8080, or the next free port after it)")
	configPath := fs.String("config", "", "the config to start from (else $BANTER_CONFIG, else ./banter.yaml if present, else defaults); the playground runs on its own copy")
	dir := fs.String("dir", "", "keep the playground's config, database and log in DIR across runs (default: a temporary folder removed at exit)")
	if err := parseFlags(fs, e.args, e, "banter playground [-addr 127.0.0.1:PORT] [-config FILE] [-dir DIR]"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Sprintf("banter playground: unexpected argument %q", fs.Arg(0))}
	}
	return runPlayground(ctx, e, playground.Options{Addr: *addr, ConfigPath: *configPath, Dir: *dir})
}

// runPlayground runs the playground with this process's environment, the bot being banter's
// own app on the config file the playground writes.
func runPlayground(ctx context.Context, e env, o playground.Options) error {
	o.Getenv, o.Out = e.getenv, e.stdout
	o.RunBot = func(ctx context.Context, b playground.Bot) error {
		cfg, err := config.Load(b.ConfigPath, b.Getenv)
		if err != nil {
			return err
		}
		if missing := cfg.MissingKeys(); len(missing) > 0 {
			return &usageError{missingKeysHelp(missing)}
		}
		level := new(slog.LevelVar)
		level.Set(parseLevel(cfg.Log.Level))
		logger := slog.New(playground.Tee(newLogger(b.LogFile, "json", level).Handler(), b.Events))
		logger.Info("banter_starting", "version", version(), "config", b.ConfigPath, "bot", cfg.Bot.Name,
			"libopus", opus.Version(), "playground", true)
		a := &app{cfg: cfg, path: b.ConfigPath, getenv: b.Getenv, logger: logger, level: level,
			onWatcher: b.Watcher, onMetrics: b.Metrics, onStore: func(st store.Store) {
				if b.Store != nil {
					b.Store(st)
				}
			}}
		return a.run(ctx)
	}
	return playground.Run(ctx, o)
}
