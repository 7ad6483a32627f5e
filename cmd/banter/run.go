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
	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/memory"
	"github.com/banterbot/banter/metrics"
	"github.com/banterbot/banter/playground"
	"github.com/banterbot/banter/redact"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/guildwatch"
	"github.com/banterbot/banter/text"
	"github.com/banterbot/banter/voice"
)

// playgroundNotice is printed when `banter run` starts the playground because DISCORD_TOKEN is
// not set.
const playgroundNotice = `DISCORD_TOKEN is not set, so banter starts the playground: the bot itself, on a simulated
Discord server, with a web page to talk to it in text and voice. To serve your own server, create
an application at https://discord.com/developers/applications, add a bot, copy its token
(Bot → Reset Token), enable the Message Content intent, and run DISCORD_TOKEN=... make run
(README.md, "From the playground to your server").`

// requireTokenHelp is the error of `banter run -require-token` (or BANTER_REQUIRE_TOKEN, which
// the container image sets) without DISCORD_TOKEN: a deployment has nobody to show a loopback
// playground to, so it stops instead of starting one.
const requireTokenHelp = `DISCORD_TOKEN is not set, so banter cannot log in to Discord (and -require-token or
BANTER_REQUIRE_TOKEN, as in the container image, asks it not to start the playground instead).
Create an application at https://discord.com/developers/applications, add a bot to it, copy the
bot's token (Bot → Reset Token), enable the Message Content intent on the same page, and pass it
as DISCORD_TOKEN, with OPENAI_API_KEY (or OPENAI_BASE_URL pointing at any OpenAI-compatible server).`

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

// envRequireToken names the variable that does what -require-token does (set in the image).
const envRequireToken = "BANTER_REQUIRE_TOKEN"

// envTrue reports whether an environment value turns a switch on (1, true, yes, on).
func envTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// defaultGCPercent is the GOGC banter runs with unless the environment sets GOGC.
const defaultGCPercent = 400

// runFlags are the flags of `banter run`.
type runFlags struct {
	configPath string
	logFormat  string
	logLevel   string
	// requireToken: without DISCORD_TOKEN, fail instead of starting the playground.
	requireToken bool
}

func parseRunFlags(e env) (runFlags, error) {
	var f runFlags
	fs := flag.NewFlagSet("banter run", flag.ContinueOnError)
	fs.StringVar(&f.configPath, "config", "", "config file (else $BANTER_CONFIG, else ./banter.yaml if present, else defaults)")
	fs.StringVar(&f.logFormat, "log-format", "", "log format: json or text (overrides log.format)")
	fs.StringVar(&f.logLevel, "log-level", "", "log level: debug, info, warn, error (overrides log.level)")
	fs.BoolVar(&f.requireToken, "require-token", false, "without DISCORD_TOKEN, stop with an error instead of starting the playground (also BANTER_REQUIRE_TOKEN=1)")
	if err := parseFlags(fs, e.args, e, "banter [run] [-config FILE] [-log-format json|text] [-log-level LEVEL] [-require-token]"); err != nil {
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
	if cfg.Secrets.DiscordToken == "" && (f.requireToken || envTrue(e.getenv(envRequireToken))) {
		return &usageError{requireTokenHelp}
	}
	if cfg.Secrets.DiscordToken == "" {
		// Nothing to log in to Discord with: show banter on the embedded simulators instead.
		fmt.Fprintln(e.stdout, playgroundNotice)
		return runPlayground(ctx, e, playground.Options{ConfigPath: f.configPath})
	}
	if missing := cfg.MissingKeys(); len(missing) > 0 {
		return &usageError{missingKeysHelp(missing)}
	}

	level := new(slog.LevelVar)
	level.Set(parseLevel(cfg.Log.Level))
	logger := newLogger(e.stderr, cfg.Log.Format, level)
	logger.Info("banter_starting", "version", version(), "config", describePath(path), "bot", cfg.Bot.Name, "libopus", opus.Version())
	cfg.LogWarnings(logger)

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
	budget    *budget.Guard                  // the daily spending budgets (nil: the store keeps no ledger)
	memory    *memory.Extractor              // long-term memory, shared by text and voice (newText)
	backfill  *memory.Backfill               // embeds what has no embedding of the current model (newText)

	// onWatcher, onMetrics and onStore, when set, are given the config watcher, the metrics
	// server's address and the store once they exist: the playground follows the bot through
	// them.
	onWatcher func(*config.Watcher)
	onMetrics func(addr string)
	onStore   func(store.Store)
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

	db, err := store.OpenDriverWith(ctx, a.cfg.Store.Driver, a.cfg.Store.DSN, store.PostgresOptions{PGVector: a.cfg.Store.PGVector})
	if err != nil {
		return err
	}
	a.logVectorSearch(db)
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
	if a.onStore != nil {
		a.onStore(st)
	}
	watcher, err := a.startBackground(ctx, &wg, reg, st)
	if err != nil {
		return err
	}

	shards, err := a.newShards(ctx, db, discord.NewRESTMetrics(reg)) // the driver itself: shards look for the Postgres identify gate
	if err != nil {
		return a.startFailed(ctx, err)
	}
	// Disconnects, resumes and re-identifies are logged and counted, with the close code.
	monitor := discord.NewGatewayMonitor(a.logger, reg)
	for _, id := range shards.IDs() {
		defer monitor.Attach(shards.Session(id))()
	}
	p, err := a.startPipelines(ctx, &wg, watcher, shards, st, reg)
	if err != nil {
		return a.startFailed(ctx, err)
	}

	<-ctx.Done()
	a.logger.Info("banter_stopping", "reason", context.Cause(ctx).Error())
	a.shutdown(p, shards)
	a.logger.Info("banter_stopped")
	return nil
}

// startFailed is what run returns when starting failed with err: nil when the process was told
// to stop meanwhile (a SIGTERM while logging in is a clean stop, not a failed log-in), else err.
func (a *app) startFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		a.logger.Info("banter_stopped", "reason", context.Cause(ctx).Error(), "while", "starting", "error", err.Error())
		return nil
	}
	return err
}

// startBackground starts what runs beside the pipelines until ctx ends: store pruning, the
// metrics server, the config watcher and SIGHUP reloads. It returns the config watcher.
func (a *app) startBackground(ctx context.Context, wg *sync.WaitGroup, reg *prometheus.Registry, st store.Store) (*config.Watcher, error) {
	if a.cfg.Metrics.Listen != "" {
		ms, err := metrics.Listen(a.cfg.Metrics.Listen, reg, a.ready, a.logger)
		if err != nil {
			return nil, err
		}
		wg.Go(func() {
			if err := ms.Serve(ctx); err != nil {
				a.logger.Error("metrics_server_failed", "error", err.Error())
			}
		})
		a.logger.Info("metrics_listening", "addr", ms.Addr())
		if a.onMetrics != nil {
			a.onMetrics(ms.Addr())
		}
	}

	watcher := config.NewWatcher(a.path, a.cfg, a.getenv, a.logger)
	watcher.CountReloads(config.NewReloadMetrics(reg))
	// Always running: memory.retentionDays is live (a reload may turn it on).
	wg.Go(func() { a.pruneLoop(ctx, st, watcher.Current) })
	watcher.Subscribe(func(_, updated *config.Config) { a.level.Set(parseLevel(updated.Log.Level)) })
	if a.onWatcher != nil {
		a.onWatcher(watcher)
	}
	wg.Go(func() {
		if err := watcher.Run(ctx); err != nil {
			a.logger.Warn("config_watch_failed", "error", err.Error())
		}
	})
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	wg.Go(func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = watcher.Reload() // logs its own outcome
			}
		}
	})
	return watcher, nil
}

// pipelines are the running text and voice services of a process.
type pipelines struct {
	text       *text.Service
	voice      *voice.Service // nil with voice disabled
	detachText func()
}

// startPipelines builds the text and voice services, attaches them to every shard, opens the
// shards and, once connected, registers the slash commands and joins the kept voice sessions
// and voice.autoJoin.
func (a *app) startPipelines(ctx context.Context, wg *sync.WaitGroup, watcher *config.Watcher, shards *discord.Shards, st store.Store, reg prometheus.Registerer) (*pipelines, error) {
	// REST is not bound to a shard: the pipelines send through any session.
	session := shards.Any()
	a.sender = post.New(session, post.Options{Logger: a.logger, Metrics: post.NewMetrics(reg),
		AttemptTimeout: time.Duration(a.cfg.Discord.SendAttemptTimeoutSeconds * float64(time.Second))})
	meter := newMeter(a.cfg, watcher, a.logger, reg)
	base := llm.Options{Logger: a.logger, Metrics: llm.NewMetrics(reg), Meter: meter}
	if a.budget = a.newBudget(watcher, st, meter, reg); a.budget != nil {
		base.Gate = a.budget
		guard := a.budget
		wg.Go(func() { guard.PruneLoop(ctx, time.Hour) }) // budget.keepDays
	}
	models := newModelClients(a.cfg, base, st)
	textSvc, err := a.newText(watcher, session, st, models, reg)
	if err != nil {
		return nil, err
	}
	p := &pipelines{text: textSvc}
	// Always running: embeddings.backfill.enabled is live (a reload may turn it on).
	wg.Go(func() { a.backfill.Run(ctx) })
	// The voice service needs the open session (the bot's user id); handlers registered before
	// Open find it through voiceRef once it exists.
	var voiceRef atomic.Pointer[voice.Service]
	p.detachText = a.attachHandlers(ctx, shards, textSvc, &voiceRef)
	a.watchGuilds(ctx, wg, shards, st, reg)
	if err := shards.Open(ctx); err != nil {
		return nil, fmt.Errorf("discord: log in: %w (check DISCORD_TOKEN and discord.apiUrl)", err)
	}
	for _, id := range shards.IDs() {
		s := shards.Session(id)
		a.logger.Info("discord_connected", "user", s.State.User.Username, "user_id", s.State.User.ID,
			"shard", id, "shards", shards.Count(), "guilds", len(s.State.Guilds))
	}
	if a.cfg.Voice.Enabled {
		if p.voice, err = a.newVoice(watcher, shards, st, textSvc, models, reg); err != nil {
			shards.Close()
			return nil, err
		}
		voiceRef.Store(p.voice)
	}
	a.registerCommands(ctx, shards, p)
	if p.voice != nil {
		wg.Go(func() { a.joinVoice(ctx, shards, p.voice) })
	}
	return p, nil
}

// attachHandlers routes every shard's events to the pipelines and tracks which shards are
// connected (/readyz). It returns what stops the text intake.
func (a *app) attachHandlers(ctx context.Context, shards *discord.Shards, textSvc *text.Service, voiceRef *atomic.Pointer[voice.Service]) (detachText func()) {
	var detachers []func()
	for _, id := range shards.IDs() {
		detachers = append(detachers, textSvc.Attach(shards.Session(id)))
	}
	shards.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		if textSvc.HandleInteraction(ctx, s, ic.Interaction) {
			return
		}
		if a.budget != nil && a.budget.HandleInteraction(ctx, s, ic.Interaction) {
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
	shards.AddHandler(func(s *discordgo.Session, _ *discordgo.Resumed) { up.set(s.ShardID, true) })
	shards.AddHandler(func(s *discordgo.Session, _ *discordgo.Disconnect) { up.set(s.ShardID, false) })
	return func() {
		for _, d := range detachers {
			d()
		}
	}
}

// watchGuilds records the servers banter is removed from (GUILD_DELETE, READY) and purges
// their data after store.forgetRemovedGuildAfterDays, at start and then hourly, as pruneLoop
// prunes: each process the guilds of its own shards (store/guildwatch).
func (a *app) watchGuilds(ctx context.Context, wg *sync.WaitGroup, shards *discord.Shards, st store.Store, reg prometheus.Registerer) {
	w := guildwatch.New(guildwatch.Options{Store: st, Logger: a.logger, Metrics: guildwatch.NewMetrics(reg),
		AfterDays: a.cfg.Store.ForgetRemovedGuildAfterDays, Owns: shards.Owns})
	for _, id := range shards.IDs() {
		w.Attach(ctx, shards.Session(id)) // the sessions close at shutdown
	}
	wg.Go(func() { w.Run(ctx) })
}

// registerCommands registers the global slash commands (discord.registerSlashCommands). They
// belong to the application, not to a shard, so only the process that runs shard 0 registers
// them: several processes overwriting the same list at once would each spend the route's
// budget for nothing.
func (a *app) registerCommands(ctx context.Context, shards *discord.Shards, p *pipelines) {
	if !a.cfg.Discord.RegisterSlashCommands || shards.Session(0) == nil {
		return
	}
	cmds := p.text.Commands()
	if p.voice != nil {
		cmds = append(cmds, p.voice.Commands()...)
	}
	if a.budget != nil {
		cmds = append(cmds, a.budget.Commands()...)
	}
	session := shards.Session(0)
	if _, err := session.ApplicationCommandBulkOverwrite(session.State.User.ID, "", cmds, discordgo.WithContext(ctx)); err != nil {
		a.logger.Warn("slash_commands_not_registered", "error", err.Error())
	}
}

// joinVoice joins, in the guilds this process's shards own, the voice sessions kept from the
// previous process (/join, !join) and the voice.autoJoin channels of the guilds left without a
// session, each guild on its own (voice.Service.JoinAtStart); another process joins the
// others (its shard receives their voice events).
func (a *app) joinVoice(ctx context.Context, shards *discord.Shards, v *voice.Service) {
	v.JoinAtStart(ctx, shards.Owns)
}

// shutdown stops intake, lets in-flight replies finish up to discord.shutdownTimeoutSeconds,
// then closes the connections; the store is flushed and closed by run's deferred Close.
func (a *app) shutdown(p *pipelines, shards *discord.Shards) {
	p.detachText()
	deadline := time.Duration(a.cfg.Discord.ShutdownTimeoutSeconds) * time.Second
	shutdownCtx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if p.voice != nil {
		if err := p.voice.Shutdown(shutdownCtx); err != nil {
			a.logger.Warn("voice_shutdown_incomplete", "error", err.Error())
		}
	}
	if err := p.text.Shutdown(shutdownCtx); err != nil {
		a.logger.Warn("text_shutdown_incomplete", "error", err.Error())
	}
	for _, c := range a.closers {
		c()
	}
	if err := shards.Close(); err != nil {
		a.logger.Warn("discord_close_failed", "error", err.Error())
	}
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
	extractor, embedder, err := a.newMemory(w, st, models, reg)
	if err != nil {
		return nil, err
	}
	a.memory = extractor
	// The classifier is always wired: the policy's Enabled (live) decides whether it is asked,
	// so switching llm.directAddressClassifier on by reload works without a restart.
	opts := decision.EngineOptions{Logger: a.logger, Metrics: decisions,
		Classifier: decision.ClassifierFunc(classifier.ClassifyWith(func() string {
			return w.Current().LLM.DirectAddressClassifier.ReasoningEffort
		}))}
	return text.New(text.Options{
		Config:         w.Current,
		Discord:        session,
		Store:          st,
		Model:          reply,
		FollowupModel:  followup,
		WebSearchModel: search,
		VisionModel:    vision,
		Memory:         extractor,
		Embedder:       embedder,
		Engine:         decision.NewTextEngine(text.Policy(cfg), opts),
		Decisions:      &decision.Recorder{Logger: a.logger, Metrics: decisions},
		Logger:         a.logger,
		Metrics:        text.NewMetrics(reg),
		Sender:         a.sender,
		Budget:         a.textBudget(),
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
func (a *app) pruneLoop(ctx context.Context, st store.Store, current func() *config.Config) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		now := time.Now()
		if a.cfg.Store.RetentionDays > 0 {
			cutoff := now.AddDate(0, 0, -a.cfg.Store.RetentionDays)
			if n, err := st.Prune(ctx, cutoff, now); err != nil {
				a.logger.Warn("store_prune_failed", "error", err.Error())
			} else if n > 0 {
				a.logger.Info("store_pruned", "messages", n)
			}
		}
		a.pruneFacts(ctx, st, current().Memory.RetentionDays, now)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
