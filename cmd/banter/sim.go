package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// simCommand implements `banter sim discord|openai [-addr HOST:PORT]`: the local simulators,
// standalone, for pointing a bot or a third-party client at them. They listen on loopback only.
func simCommand(ctx context.Context, e env) error {
	if len(e.args) == 0 {
		return &usageError{"usage: banter sim discord|openai [-addr 127.0.0.1:PORT] [-script FILE (openai)]"}
	}
	which := e.args[0]
	fs := flag.NewFlagSet("banter sim "+which, flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	script := fs.String("script", "", "openai only: a YAML or JSON script of rules, latency and faults (docs/simulator.md)")
	if err := parseFlags(fs, e.args[1:], e, "banter sim "+which+" [-addr HOST:PORT] [-script FILE]"); err != nil {
		return err
	}
	switch which {
	case "discord":
		return discordsim.RunStandalone(ctx, *addr, e.stdout)
	case "openai":
		var opts []openaisim.Option
		if *script != "" {
			data, err := os.ReadFile(*script)
			if err != nil {
				return &usageError{fmt.Sprintf("banter sim openai: -script: %v", err)}
			}
			sc, err := openaisim.ParseScript(data)
			if err != nil {
				return &usageError{fmt.Sprintf("banter sim openai: -script %s: %v", *script, err)}
			}
			opts = append(opts, openaisim.WithScript(sc))
		}
		return openaisim.RunStandalone(ctx, *addr, e.stdout, opts...)
	}
	return &usageError{fmt.Sprintf("banter sim: unknown simulator %q (allowed: discord, openai)", which)}
}
