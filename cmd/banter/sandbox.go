package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/control"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// sandboxCommand implements `banter sandbox [-config FILE]`: the real bot against a local
// Discord simulator, with a terminal chat in #general. The model is the real one when
// OPENAI_API_KEY or OPENAI_BASE_URL is set, else the OpenAI simulator (which echoes).
//
// Type a line to post it as "you"; "/as NAME text" posts as someone else; "/quit" ends.
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

	vs, err := voicesim.New(voicesim.Options{DAVE: true})
	if err != nil {
		return err
	}
	defer vs.Close()
	dsim := discordsim.New(discordsim.WithVoiceSim(vs), discordsim.WithBotName(cfg.Bot.Name))
	if err := dsim.Start("127.0.0.1:0"); err != nil {
		return err
	}
	defer dsim.Close()
	guild := dsim.CreateGuild("Sandbox")
	general := dsim.CreateTextChannel(guild, "general")
	users := map[string]discordsim.UserID{}
	ctl := control.New(dsim, guild)
	defer ctl.Close()
	user := func(name string) discordsim.UserID {
		if id, ok := users[name]; ok {
			return id
		}
		id := dsim.CreateUser(name)
		_ = dsim.AddMember(guild, id)
		users[name] = id
		ctl.Name(name, id)
		return id
	}
	user("you")
	ctlLn, err := control.Listen(*ctlAddr)
	if err != nil {
		return &usageError{fmt.Sprintf("banter sandbox: -control-addr: %v", err)}
	}
	ctlSrv := &http.Server{Handler: ctl.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ctlSrv.Serve(ctlLn) }()
	defer ctlSrv.Close()

	cfg.Discord.APIURL = dsim.APIBaseURL()
	cfg.Discord.VoiceCAFile = vs.CAFile()
	cfg.Secrets.DiscordToken = dsim.Token()
	cfg.Metrics.Listen = ""
	dir, err := os.MkdirTemp("", "banter-sandbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.Store.DSN = filepath.Join(dir, "banter.db")
	model := "the OpenAI simulator (echoes you; set OPENAI_API_KEY for a real model)"
	if cfg.Secrets.OpenAIAPIKey == "" && cfg.LLM.BaseURL == config.Default().LLM.BaseURL {
		osim, err := openaisim.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer osim.Close()
		cfg.LLM.BaseURL = osim.BaseURL()
		cfg.Secrets.OpenAIAPIKey = "sk-sandbox"
	} else {
		model = cfg.LLM.Model + " at " + cfg.LLM.BaseURL
	}
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
	err = dsim.Await(waitCtx, func() bool { return dsim.Connected(dsim.BotID()) })
	stop()
	if err != nil {
		cancel()
		return fmt.Errorf("sandbox: the bot did not log in: %v (logs: %s): %w", <-botDone, *logPath, err)
	}
	fmt.Fprintf(e.stdout, "banter sandbox: you are in #general with %s; model: %s\n", cfg.Bot.Name, model)
	fmt.Fprintf(e.stdout, "type to talk, \"/as NAME text\" to speak as someone else, /quit to leave (logs: %s)\n", *logPath)
	fmt.Fprintf(e.stdout, "control API: http://%s (docs/simulator.md)\n", ctlLn.Addr())

	// Print what others (the bot) post, as it arrives.
	printed := map[discordsim.MessageID]bool{}
	printerDone := make(chan struct{})
	go func() {
		defer close(printerDone)
		for {
			for _, m := range dsim.Messages(general) {
				if printed[m.ID] || m.Origin == discordsim.OriginScript {
					continue
				}
				printed[m.ID] = true
				fmt.Fprintf(e.stdout, "%s: %s\n", cfg.Bot.Name, m.Content)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

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
			if _, err := dsim.Post(ctx, user(name), general, text); err != nil {
				fmt.Fprintln(e.stderr, "sandbox:", err)
			}
		default:
			if _, err := dsim.Post(ctx, user("you"), general, line); err != nil {
				fmt.Fprintln(e.stderr, "sandbox:", err)
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	// Give in-flight replies a moment to print before shutting down.
	time.Sleep(500 * time.Millisecond)
	cancel()
	<-printerDone
	return <-botDone
}
