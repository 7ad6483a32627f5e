package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/metrics"
	"github.com/banterbot/banter/redact"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/text"
	"github.com/banterbot/banter/voice"
)

// missingTokenHelp is printed when DISCORD_TOKEN is not set: one paragraph saying what to set
// and where to get it.
const missingTokenHelp = `DISCORD_TOKEN is not set, so banter cannot log in to Discord. Create an
application at https://discord.com/developers/applications, add a bot to it, copy the bot's token
(Bot → Reset Token), enable the Message Content intent on the same page, and run
"DISCORD_TOKEN=... OPENAI_API_KEY=... make run" (or put both in your environment). banter also
needs OPENAI_API_KEY, or OPENAI_BASE_URL pointing at any OpenAI-compatible server. To try banter
without Discord, run it against the local simulator: see docs/simulator.md.`

const missingOpenAIHelp = `OPENAI_API_KEY is not set and OPENAI_BASE_URL (or llm.baseUrl) still points at
api.openai.com, so banter could not answer anyone. Set OPENAI_API_KEY (https://platform.openai.com/api-keys),
or set OPENAI_BASE_URL to an OpenAI-compatible server (a local one may not need a key).`

// missingKeysHelp names every model slot whose provider lacks its key.
func missingKeysHelp(missing []string) string {
	msg := "these model slots have no API key:\n  " + strings.Join(missing, "\n  ")
	for _, m := range missing {
		if strings.Contains(m, config.EnvOpenAIAPIKey) {
			return msg + "\n" + missingOpenAIHelp
		}
	}
	return msg + "\nSet each named variable in the environment (see providers: in docs/config.md)."
}

// defaultGCPercent is the GOGC banter runs with unless the environment sets GOGC.
const defaultGCPercent = 400

// runFlags are the flags of `banter run`.
type runFlags struct {
	configPath string
	logFormat  string
	logLevel   string
}

func parseRunFlags(e env) (runFlags, error) {
	var f runFlags
	fs := flag.NewFlagSet("banter run", flag.ContinueOnError)
	fs.StringVar(&f.configPath, "config", "", "config file (else $BANTER_CONFIG, else ./banter.yaml if present, else defaults)")
	fs.StringVar(&f.logFormat, "log-format", "", "log format: json or text (overrides log.format)")
	fs.StringVar(&f.logLevel, "log-level", "", "log level: debug, info, warn, error (overrides log.level)")
	if err := parseFlags(fs, e.args, e, "banter [run] [-config FILE] [-log-format json|text] [-log-level LEVEL]"); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return f, nil
}

// newLogger builds the process logger; level is shared so reloads can change it.
func newLogger(w io.Writer, format string, level *slog.LevelVar) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redact.Attr} // no credentials in any URL logged
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func parseLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// runCommand implements `banter run`.
func runCommand(ctx context.Context, e env) error {
	f, err := parseRunFlags(e)
	if err != nil {
		return err
	}
	path := config.Locate(f.configPath, e.getenv)
	cfg, err := config.Load(path, e.getenv)
	if err != nil {
		return &usageError{err.Error()}
	}
	if f.logFormat != "" {
		if f.logFormat != "json" && f.logFormat != "text" {
			return &usageError{fmt.Sprintf("-log-format %q: allowed values are json, text", f.logFormat)}
		}
		cfg.Log.Format = f.logFormat
	}
	if f.logLevel != "" {
		cfg.Log.Level = f.logLevel
	}
	if cfg.Secrets.DiscordToken == "" {
		return &usageError{missingTokenHelp}
	}
	if missing := cfg.MissingKeys(); len(missing) > 0 {
		return &usageError{missingKeysHelp(missing)}
	}

	level := new(slog.LevelVar)
	level.Set(parseLevel(cfg.Log.Level))
	logger := newLogger(e.stderr, cfg.Log.Format, level)
	logger.Info("banter_starting", "version", version(), "config", describePath(path), "bot", cfg.Bot.Name, "libopus", opus.Version())

	if e.getenv("GOGC") == "" {
		// Voice frames go out every 20 ms; with Go's default GOGC=100 garbage collection is the
		// main cause of late frames when many voice sessions run (docs/voice.md, capacity
		// bench). The heap is small, so trade some memory for fewer collections.
		prev := debug.SetGCPercent(defaultGCPercent)
		logger.Info("gc_percent_set", "gogc", defaultGCPercent, "was", prev, "override", "set GOGC")
	}
	a := &app{cfg: cfg, path: path, getenv: e.getenv, logger: logger, level: level}
	return a.run(ctx)
}

func describePath(p string) string {
	if p == "" {
		return "(built-in defaults)"
	}
	return p
}

// app is one running banter process: it owns every component and shuts them down in order.
type app struct {
	cfg    *config.Config
	path   string
	getenv func(string) string
	logger *slog.Logger
	level  *slog.LevelVar

	shardsUp  atomic.Pointer[shardReadiness] // which of the process's shards are connected (/readyz)
	decisions *decision.Metrics              // shared by the text and voice engines (registered once)
	sender    *post.Sender                   // every message banter creates, from any pipeline
	closers   []func()                       // run at shutdown, after the pipelines stopped
}

// decisionMetrics returns the decision metrics, registering them on first use.
func (a *app) decisionMetrics(reg prometheus.Registerer) *decision.Metrics {
	if a.decisions == nil {
		a.decisions = decision.NewMetrics(reg)
	}
	return a.decisions
}

func (a *app) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	db, err := store.OpenDriver(ctx, a.cfg.Store.Driver, a.cfg.Store.DSN)
	if err != nil {
		return err
	}
	defer func() {
		if err := db.Close(); err != nil {
			a.logger.Error("store_close_failed", "error", err.Error())
		}
	}()
	// Background goroutines are stopped and waited for on every return, early errors
	// included, and before the store closes under them (deferred calls run last-in first-out).
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	reg := metrics.NewRegistry(version())
	registerLibopusInfo(reg)
	metrics.RegisterReady(reg, a.ready)
	st := store.Instrument(db, reg)
	if a.cfg.Store.RetentionDays > 0 {
		wg.Go(func() { a.pruneLoop(ctx, st) })
	}
	if a.cfg.Metrics.Listen != "" {
		ms, err := metrics.Listen(a.cfg.Metrics.Listen, reg, a.ready, a.logger)
		if err != nil {
			return err
		}
		wg.Go(func() {
			if err := ms.Serve(ctx); err != nil {
				a.logger.Error("metrics_server_failed", "error", err.Error())
			}
		})
		a.logger.Info("metrics_listening", "addr", ms.Addr())
	}

	watcher := config.NewWatcher(a.path, a.cfg, a.getenv, a.logger)
	watcher.Subscribe(func(_, updated *config.Config) { a.level.Set(parseLevel(updated.Log.Level)) })
	wg.Go(func() {
		if err := watcher.Run(ctx); err != nil {
			a.logger.Warn("config_watch_failed", "error", err.Error())
		}
	})
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = watcher.Reload() // logs its own outcome
			}
		}
	})

	shards, err := a.newShards(ctx, db) // the driver itself: shards look for the Postgres identify gate
	if err != nil {
		return err
	}
	// Disconnects, resumes and re-identifies are logged and counted, with the close code.
	monitor := discord.NewGatewayMonitor(a.logger, reg)
	for _, id := range shards.IDs() {
		defer monitor.Attach(shards.Session(id))()
	}
	// REST is not bound to a shard: the pipelines send through any session.
	session := shards.Any()
	a.sender = post.New(session, post.Options{Logger: a.logger, Metrics: post.NewMetrics(reg)})
	models := newModelClients(a.cfg, llm.Options{Logger: a.logger, Metrics: llm.NewMetrics(reg)})
	textSvc, err := a.newText(watcher, session, st, models, reg)
	if err != nil {
		return err
	}
	// The voice service needs the open session (the bot's user id); handlers registered before
	// Open find it through voiceRef once it exists.
	var voiceRef atomic.Pointer[voice.Service]
	var detachers []func()
	for _, id := range shards.IDs() {
		detachers = append(detachers, textSvc.Attach(shards.Session(id)))
	}
	detachText := func() {
		for _, d := range detachers {
			d()
		}
	}
	shards.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		if textSvc.HandleInteraction(ctx, s, ic.Interaction) {
			return
		}
		if v := voiceRef.Load(); v != nil {
			v.HandleInteraction(ctx, s, ic.Interaction)
		}
	})
	shards.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		// !join / !leave (the voice service answers them off the gateway goroutine).
		if v := voiceRef.Load(); v != nil {
			v.HandleMessage(ctx, s, m.Message)
		}
	})
	up := newShardReadiness(shards.IDs())
	a.shardsUp.Store(up)
	shards.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) { up.set(s.ShardID, true) })
	shards.AddHandler(func(s *discordgo.Session, _ *discordgo.Disconnect) { up.set(s.ShardID, false) })
	if err := shards.Open(ctx); err != nil {
		return fmt.Errorf("discord: log in: %w (check DISCORD_TOKEN and discord.apiUrl)", err)
	}
	for _, id := range shards.IDs() {
		up.set(id, true)
		s := shards.Session(id)
		a.logger.Info("discord_connected", "user", s.State.User.Username, "user_id", s.State.User.ID,
			"shard", id, "shards", shards.Count(), "guilds", len(s.State.Guilds))
	}
	var voiceSvc *voice.Service
	if a.cfg.Voice.Enabled {
		if voiceSvc, err = a.newVoice(watcher, shards, models, reg); err != nil {
			shards.Close()
			return err
		}
		voiceRef.Store(voiceSvc)
	}
	if a.cfg.Discord.RegisterSlashCommands {
		cmds := textSvc.Commands()
		if voiceSvc != nil {
			cmds = append(cmds, voiceSvc.Commands()...)
		}
		if _, err := session.ApplicationCommandBulkOverwrite(session.State.User.ID, "", cmds, discordgo.WithContext(ctx)); err != nil {
			a.logger.Warn("slash_commands_not_registered", "error", err.Error())
		}
	}
	if voiceSvc != nil && len(a.cfg.Voice.AutoJoin) > 0 {
		wg.Go(func() {
			if err := voiceSvc.AutoJoin(ctx); err != nil {
				a.logger.Warn("voice_autojoin_failed", "error", err.Error())
			}
		})
	}

	<-ctx.Done()
	a.logger.Info("banter_stopping", "reason", context.Cause(ctx).Error())
	// Stop intake, let in-flight replies finish up to the deadline, then close connections;
	// the store is flushed and closed by the deferred Close.
	detachText()
	deadline := time.Duration(a.cfg.Discord.ShutdownTimeoutSeconds) * time.Second
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), deadline)
	defer cancelShutdown()
	if voiceSvc != nil {
		if err := voiceSvc.Shutdown(shutdownCtx); err != nil {
			a.logger.Warn("voice_shutdown_incomplete", "error", err.Error())
		}
	}
	if err := textSvc.Shutdown(shutdownCtx); err != nil {
		a.logger.Warn("text_shutdown_incomplete", "error", err.Error())
	}
	for _, c := range a.closers {
		c()
	}
	if err := shards.Close(); err != nil {
		a.logger.Warn("discord_close_failed", "error", err.Error())
	}
	a.logger.Info("banter_stopped")
	return nil
}

// newText builds the text pipeline: Stage A engine and the service.
func (a *app) newText(w *config.Watcher, session *discordgo.Session, st store.Store, models *modelClients, reg prometheus.Registerer) (*text.Service, error) {
	cfg := w.Current()
	decisions := a.decisionMetrics(reg)
	reply, err := models.For(cfg.LLM.Provider)
	if err != nil {
		return nil, fmt.Errorf("llm.provider: %w", err)
	}
	followup, err := models.For(cfg.ReplyFollowupLLM.Provider)
	if err != nil {
		return nil, fmt.Errorf("replyFollowupLlm.provider: %w", err)
	}
	classifier, err := models.For(cfg.LLM.DirectAddressClassifier.Provider)
	if err != nil {
		return nil, fmt.Errorf("llm.directAddressClassifier.provider: %w", err)
	}
	search, err := models.For(cfg.Lookups.WebSearch.Provider)
	if err != nil {
		return nil, fmt.Errorf("lookups.webSearch.provider: %w", err)
	}
	vision, err := models.For(cfg.Lookups.Image.Provider)
	if err != nil {
		return nil, fmt.Errorf("lookups.image.provider: %w", err)
	}
	// The classifier is always wired: the policy's Enabled (live) decides whether it is asked,
	// so switching llm.directAddressClassifier on by reload works without a restart.
	opts := decision.EngineOptions{Logger: a.logger, Metrics: decisions, Classifier: decision.ClassifierFunc(classifier.Classify)}
	return text.New(text.Options{
		Config:         w.Current,
		Discord:        session,
		Store:          st,
		Model:          reply,
		FollowupModel:  followup,
		WebSearchModel: search,
		VisionModel:    vision,
		Engine:         decision.NewTextEngine(text.Policy(cfg), opts),
		Decisions:      &decision.Recorder{Logger: a.logger, Metrics: decisions},
		Logger:         a.logger,
		Metrics:        text.NewMetrics(reg),
		Sender:         a.sender,
	})
}

func (a *app) ready() error {
	up := a.shardsUp.Load()
	if up == nil {
		return errors.New("not connected to the Discord gateway")
	}
	return up.ready()
}

// pruneLoop deletes messages past store.retentionDays once an hour.
func (a *app) pruneLoop(ctx context.Context, st store.Store) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		now := time.Now()
		cutoff := now.AddDate(0, 0, -a.cfg.Store.RetentionDays)
		if n, err := st.Prune(ctx, cutoff, now); err != nil {
			a.logger.Warn("store_prune_failed", "error", err.Error())
		} else if n > 0 {
			a.logger.Info("store_pruned", "messages", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
