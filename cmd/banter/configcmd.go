package main

import (
	"flag"
	"fmt"

	"github.com/banterbot/banter/config"
)

const configSynopsis = "banter config check FILE   (validate FILE and print the effective config, secrets redacted)"

// configCommand implements `banter config check FILE`.
func configCommand(e env) error {
	if len(e.args) == 0 || e.args[0] != "check" {
		if err := parseFlags(flag.NewFlagSet("banter config", flag.ContinueOnError), e.args, e, configSynopsis); err != nil {
			return err
		}
		return &usageError{"usage: " + configSynopsis}
	}
	fs := flag.NewFlagSet("banter config check", flag.ContinueOnError)
	if err := parseFlags(fs, e.args[1:], e, configSynopsis); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"usage: " + configSynopsis}
	}
	path := fs.Arg(0)
	cfg, err := config.Load(path, e.getenv)
	if err != nil {
		return &usageError{err.Error()}
	}
	out, err := cfg.Redacted()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "# %s is valid. Effective configuration (defaults applied, secrets redacted):\n", path)
	if _, err := e.stdout.Write(out); err != nil {
		return err
	}
	for _, m := range cfg.MissingKeys() {
		fmt.Fprintf(e.stdout, "# warning: %s (banter run will refuse to start)\n", m)
	}
	return nil
}
