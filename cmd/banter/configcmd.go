package main

import (
	"fmt"

	"github.com/banterbot/banter/config"
)

// configCommand implements `banter config check FILE`.
func configCommand(e env) error {
	if len(e.args) != 2 || e.args[0] != "check" {
		return &usageError{"usage: banter config check FILE"}
	}
	path := e.args[1]
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
