package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/banterbot/banter/sim/discord/control"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// simCommand implements `banter sim discord|openai|gemini [-addr HOST:PORT]`: the local simulators,
// standalone, for pointing a bot or a third-party client at them. They listen on loopback only.
func simCommand(ctx context.Context, e env) error {
	const synopsis = "banter sim discord|openai|gemini [-addr 127.0.0.1:PORT] [-script FILE (openai, gemini)]\n" +
		"  gemini also: [-connection-limit D] [-go-away-lead D] (the Live API's connection limit, default 10m and 10s)\n" +
		"               [-session-limit D] [-video-session-limit D] (a session without compression, default 15m and 2m)\n" +
		"  discord also: [-control-addr 127.0.0.1:PORT] [-voice-port PORT] [-bot-token T] [-id-time RFC3339] [-write-config FILE] [-openai-url URL]\n" +
		"  banter sim discord -h, banter sim openai -h: the flags"
	if len(e.args) == 0 {
		return &usageError{"usage: " + synopsis}
	}
	if e.args[0] == "-h" || e.args[0] == "-help" || e.args[0] == "--help" {
		fmt.Fprintln(e.stdout, "usage:", synopsis)
		return errHelp
	}
	which := e.args[0]
	fs := flag.NewFlagSet("banter sim "+which, flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	script := fs.String("script", "", "openai only: a YAML or JSON script of rules, latency and faults (docs/simulator.md)")
	ctlAddr := fs.String("control-addr", "127.0.0.1:0", "discord only: loopback address of the control API")
	voicePort := fs.Int("voice-port", 0, "discord only: the voice server's port on 127.0.0.1, TCP and UDP (default: free ones)")
	botToken := fs.String("bot-token", "", "discord only: the bot's token (default: generated)")
	idTime := fs.String("id-time", "", "discord only: pin the demo world's ids to snowflakes of this RFC 3339 instant")
	writeConfig := fs.String("write-config", "", "discord only: write a banter config for this simulator to FILE")
	openaiURL := fs.String("openai-url", "", "discord only: llm.baseUrl for the written config (e.g. a banter sim openai)")
	connLimit := fs.Duration("connection-limit", 10*time.Minute, "gemini only: how long a Live connection lives (goAway first); 0: no limit")
	goAwayLead := fs.Duration("go-away-lead", 10*time.Second, "gemini only: goAway this long before the connection limit")
	sessLimit := fs.Duration("session-limit", openaisim.DefaultGeminiSessionLimit, "gemini only: how long a session without context window compression lasts on audio only; 0: no limit")
	videoLimit := fs.Duration("video-session-limit", openaisim.DefaultGeminiVideoSessionLimit, "gemini only: … once video was sent; 0: no limit")
	if err := parseFlags(fs, e.args[1:], e, "banter sim "+which+" [flags]"); err != nil {
		return err
	}
	switch which {
	case "discord":
		if *voicePort < 0 || *voicePort > 65535 {
			return &usageError{fmt.Sprintf("banter sim discord: -voice-port %d: want 1-65535, or 0 for a free port", *voicePort)}
		}
		o := control.Options{Addr: *addr, ControlAddr: *ctlAddr, BotToken: *botToken, WriteConfig: *writeConfig,
			OpenAIURL: *openaiURL, VoicePort: *voicePort}
		if *idTime != "" {
			t, err := time.Parse(time.RFC3339, *idTime)
			if err != nil {
				return &usageError{fmt.Sprintf("banter sim discord: -id-time: %v (want RFC 3339, e.g. 2025-01-01T00:00:00Z)", err)}
			}
			o.IDTime = t
		}
		return control.RunStandalone(ctx, o, e.stdout)
	case "openai", "gemini":
		var opts []openaisim.Option
		if *script != "" {
			data, err := os.ReadFile(*script)
			if err != nil {
				return &usageError{fmt.Sprintf("banter sim %s: -script: %v", which, err)}
			}
			sc, err := openaisim.ParseScript(data)
			if err != nil {
				return &usageError{fmt.Sprintf("banter sim %s: -script %s: %v", which, *script, err)}
			}
			opts = append(opts, openaisim.WithScript(sc))
		}
		if which == "openai" {
			return openaisim.RunStandalone(ctx, *addr, e.stdout, opts...)
		}
		if *connLimit < 0 || *goAwayLead < 0 || (*connLimit > 0 && *goAwayLead > *connLimit) {
			return &usageError{fmt.Sprintf("banter sim gemini: -connection-limit %v, -go-away-lead %v: want 0 <= lead <= limit", *connLimit, *goAwayLead)}
		}
		if *sessLimit < 0 || *videoLimit < 0 {
			return &usageError{fmt.Sprintf("banter sim gemini: -session-limit %v, -video-session-limit %v: want 0 or more", *sessLimit, *videoLimit)}
		}
		opts = append(opts, openaisim.WithGeminiConnectionLimit(*connLimit, *goAwayLead),
			openaisim.WithGeminiSessionLimit(*sessLimit, *videoLimit))
		return openaisim.RunGeminiStandalone(ctx, *addr, e.stdout, opts...)
	}
	return &usageError{fmt.Sprintf("banter sim: unknown simulator %q (allowed: discord, openai, gemini)", which)}
}
