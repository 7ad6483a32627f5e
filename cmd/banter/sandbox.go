package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/redact"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/control"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// sandboxCommand implements `banter sandbox [-config FILE]`: the real bot against a local
// Discord simulator, with a terminal chat in #general. The model is the real one when
// OPENAI_API_KEY or OPENAI_BASE_URL is set, else the OpenAI simulator's demo brain.
//
// Type a line to post it as "sam" (sandboxMember); "/as NAME text" posts as someone else; "/quit" ends.
func sandboxCommand(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("banter sandbox", flag.ContinueOnError)
	configPath := fs.String("config", "", "config file (else $BANTER_CONFIG, else ./banter.yaml if present, else defaults)")
	logPath := fs.String("log", "", "write the bot's JSON logs to this file (default: a temp file)")
	ctlAddr := fs.String("control-addr", "127.0.0.1:0", "loopback address of the simulator's control API (docs/simulator.md)")
	if err := parseFlags(fs, e.args, e, "banter sandbox [-config FILE] [-log FILE] [-control-addr HOST:PORT]"); err != nil {
		return err
	}
	cfg, err := config.Load(config.Locate(*configPath, e.getenv), e.getenv)
	if err != nil {
		return &usageError{err.Error()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	w, err := newSandboxWorld(cfg, *ctlAddr)
	if err != nil {
		return err
	}
	defer w.close()
	dir, err := os.MkdirTemp("", "banter-sandbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.Store.DSN = filepath.Join(dir, "banter.db")
	model, stopModel, err := sandboxModel(cfg)
	if err != nil {
		return err
	}
	defer stopModel()
	if *logPath == "" {
		*logPath = filepath.Join(dir, "banter.log")
	}
	logFile, err := os.Create(*logPath)
	if err != nil {
		return fmt.Errorf("sandbox: log file: %w", err)
	}
	defer logFile.Close()
	level := new(slog.LevelVar)
	level.Set(parseLevel(cfg.Log.Level))
	a := &app{cfg: cfg, getenv: e.getenv, logger: newLogger(logFile, "json", level), level: level}
	botDone := make(chan error, 1)
	go func() { botDone <- a.run(ctx) }()

	waitCtx, stop := context.WithTimeout(ctx, 15*time.Second)
	err = w.dsim.Await(waitCtx, func() bool { return w.dsim.Connected(w.dsim.BotID()) })
	stop()
	if err != nil {
		cancel()
		return fmt.Errorf("sandbox: the bot did not log in: %v (logs: %s): %w", <-botDone, *logPath, err)
	}
	fmt.Fprintf(e.stdout, "banter sandbox: you are %s in #general with %s; model: %s\n", sandboxMember, cfg.Bot.Name, model)
	fmt.Fprintf(e.stdout, "type to talk, \"/as NAME text\" to speak as someone else, /quit to leave (logs: %s)\n", *logPath)
	fmt.Fprintf(e.stdout, "control API: http://%s (docs/simulator.md)\n", w.ctlLn.Addr())

	printerDone := make(chan struct{})
	go func() { defer close(printerDone); w.printBot(ctx, e, cfg.Bot.Name) }()
	w.chat(ctx, cancel, e)
	// Give in-flight replies a moment to print before shutting down.
	time.Sleep(500 * time.Millisecond)
	cancel()
	<-printerDone
	return <-botDone
}

// sandboxMember is the member the terminal speaks as: a name, as the playground's "sam", so
// the bot's replies read naturally ("Good question, sam") instead of naming "you".
const sandboxMember = "sam"

// sandboxWorld is the sandbox's simulated Discord (with voice), its control API and people.
type sandboxWorld struct {
	vs      *voicesim.Server
	dsim    *discordsim.Server
	ctl     *control.Controller
	ctlLn   net.Listener
	ctlSrv  *http.Server
	guild   discordsim.GuildID
	general discordsim.ChannelID
	users   map[string]discordsim.UserID
}

// newSandboxWorld starts the simulators, a guild with #general and sandboxMember, and the control API
// on ctlAddr, and points cfg's Discord at them.
func newSandboxWorld(cfg *config.Config, ctlAddr string) (*sandboxWorld, error) {
	vs, err := voicesim.New(voicesim.Options{DAVE: true})
	if err != nil {
		return nil, err
	}
	dsim := discordsim.New(discordsim.WithVoiceSim(vs), discordsim.WithBotName(cfg.Bot.Name))
	if err := dsim.Start("127.0.0.1:0"); err != nil {
		vs.Close()
		return nil, err
	}
	w := &sandboxWorld{vs: vs, dsim: dsim, users: map[string]discordsim.UserID{}}
	w.guild = dsim.CreateGuild("Sandbox")
	w.general = dsim.CreateTextChannel(w.guild, "general")
	w.ctl = control.New(dsim, w.guild)
	w.user(sandboxMember)
	w.ctlLn, err = control.Listen(ctlAddr)
	if err != nil {
		w.ctl.Close()
		dsim.Close()
		vs.Close()
		return nil, &usageError{fmt.Sprintf("banter sandbox: -control-addr: %v", err)}
	}
	w.ctlSrv = &http.Server{Handler: w.ctl.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.ctlSrv.Serve(w.ctlLn) }()

	cfg.Discord.APIURL = dsim.APIBaseURL()
	cfg.Discord.VoiceCAFile = vs.CAFile()
	cfg.Secrets.DiscordToken = dsim.Token()
	cfg.Metrics.Listen = ""
	return w, nil
}

func (w *sandboxWorld) close() {
	w.ctlSrv.Close()
	w.ctl.Close()
	w.dsim.Close()
	w.vs.Close()
}

// user returns the member called name, creating them on first use.
func (w *sandboxWorld) user(name string) discordsim.UserID {
	if id, ok := w.users[name]; ok {
		return id
	}
	id := w.dsim.CreateUser(name)
	_ = w.dsim.AddMember(w.guild, id)
	w.users[name] = id
	w.ctl.Name(name, id)
	return id
}

// sandboxModel points cfg at the OpenAI simulator unless a real model is configured, and says
// which model answers.
func sandboxModel(cfg *config.Config) (model string, stop func(), err error) {
	if cfg.Secrets.OpenAIAPIKey != "" || cfg.LLM.BaseURL != config.Default().LLM.BaseURL {
		return cfg.LLM.Model + " at " + redact.URL(cfg.LLM.BaseURL), func() {}, nil
	}
	osim, err := openaisim.Start("127.0.0.1:0", openaisim.WithRules(openaisim.DemoRules()...))
	if err != nil {
		return "", nil, err
	}
	cfg.LLM.BaseURL = osim.BaseURL()
	cfg.Secrets.OpenAIAPIKey = "sk-sandbox"
	return "the OpenAI simulator's demo brain (short canned replies; set OPENAI_API_KEY for a real model)", func() { osim.Close() }, nil
}

// printBot prints what others (the bot) post in #general, as it arrives, until ctx ends.
func (w *sandboxWorld) printBot(ctx context.Context, e env, botName string) {
	printed := map[discordsim.MessageID]bool{}
	for {
		for _, m := range w.dsim.Messages(w.general) {
			if printed[m.ID] || m.Origin == discordsim.OriginScript {
				continue
			}
			printed[m.ID] = true
			fmt.Fprintf(e.stdout, "%s: %s\n", botName, m.Content)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// chat posts each line typed on stdin to #general until /quit, the end of input or ctx ends.
func (w *sandboxWorld) chat(ctx context.Context, cancel context.CancelFunc, e env) {
	lines := bufio.NewScanner(e.stdin)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		switch {
		case line == "":
			continue
		case line == "/quit":
			cancel()
		case strings.HasPrefix(line, "/as "):
			name, text, _ := strings.Cut(strings.TrimPrefix(line, "/as "), " ")
			if _, err := w.dsim.Post(ctx, w.user(name), w.general, text); err != nil {
				fmt.Fprintln(e.stderr, "sandbox:", err)
			}
		default:
			if _, err := w.dsim.Post(ctx, w.user(sandboxMember), w.general, line); err != nil {
				fmt.Fprintln(e.stderr, "sandbox:", err)
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
}
