// Command banter is the banter Discord companion bot.
//
// Usage:
//
//	banter [run] [-config FILE] [-log-format json|text] [-log-level debug|info|warn|error]
//	                                                      run the bot (the default; the playground without DISCORD_TOKEN)
//	banter config check FILE                              validate a config, print it (secrets redacted)
//	banter replay [-config FILE] [-llm] EVENTS.jsonl      replay a conversation through the decision engine
//	banter replay [-config FILE] -labels CORPUS.jsonl     score the decision engine on a labelled corpus
//	banter sim discord|openai|gemini [-addr HOST:PORT]    run a local simulator (loopback only)
//	banter playground [-addr HOST:PORT] [-config FILE]    the bot on a simulated Discord, with a web page (also run without a token)
//	banter sandbox [-config FILE]                         chat with the bot in a terminal, on a local Discord
//	banter health [-config FILE] [-ready]                 check /healthz (or /readyz) of a running banter
//	banter version                                        print the version
//
// See README.md and docs/ for the rest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/banterbot/banter/redact"
)

// exitCoder is an error that carries the process exit status.
type exitCoder interface{ ExitCode() int }

// usageError marks a command-line mistake (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) ExitCode() int { return 2 }

// env is what a subcommand may touch of the process: arguments, streams and environment.
type env struct {
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, env{args: os.Args[1:], stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	if err == nil {
		return
	}
	os.Exit(reportError(os.Stderr, err))
}

// reportError prints the error a command ended with, credentials in URLs redacted, and
// returns the process's exit status for it.
func reportError(w io.Writer, err error) int {
	fmt.Fprintln(w, "banter:", redact.Text(err.Error()))
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

const usage = `usage:
  banter [run] [-config FILE] [-log-format json|text] [-log-level LEVEL]
                                                        run the bot (default)
  banter config check FILE                              validate FILE and print the effective config
  banter replay [-config FILE] [-llm] EVENTS.jsonl      run a recorded conversation through the decision engine
  banter replay [-config FILE] -labels CORPUS.jsonl     score the decision engine on a labelled corpus
  banter sim discord|openai|gemini [-addr HOST:PORT]    run a local simulator (loopback only)
  banter playground [-addr HOST:PORT] [-config FILE]    the bot on a simulated Discord, with a web page
                                                        (what run starts when DISCORD_TOKEN is not set)
  banter sandbox [-config FILE]                         chat with the bot in a terminal, on a local Discord
  banter health [-config FILE] [-ready]                 check /healthz (or /readyz) of a running banter
  banter version                                        print the version
`

// errHelp is returned by a subcommand whose usage was asked for (-h): the
// usage is on stdout and the process exits 0, as for `banter -h`.
var errHelp = errors.New("help shown")

// parseFlags parses a subcommand's flags. -h or -help prints synopsis and the
// flags on stdout and returns errHelp; a bad flag prints them on stderr and
// returns a usageError (exit status 2).
func parseFlags(fs *flag.FlagSet, args []string, e env, synopsis string) error {
	fs.SetOutput(io.Discard) // the usage is printed below, on the stream that fits
	err := fs.Parse(args)
	if err == nil {
		fs.SetOutput(e.stderr)
		return nil
	}
	w := e.stderr
	if errors.Is(err, flag.ErrHelp) {
		w = e.stdout
	}
	fmt.Fprintln(w, "usage:", synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	return &usageError{err.Error()}
}

func dispatch(ctx context.Context, e env) error {
	err := dispatchCommand(ctx, e)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func dispatchCommand(ctx context.Context, e env) error {
	if len(e.args) > 0 && (e.args[0] == "-h" || e.args[0] == "--help" || e.args[0] == "-help") {
		fmt.Fprint(e.stdout, usage)
		return nil
	}
	if len(e.args) == 0 || (len(e.args[0]) > 0 && e.args[0][0] == '-') {
		return runCommand(ctx, e)
	}
	cmd, rest := e.args[0], e.args[1:]
	e.args = rest
	switch cmd {
	case "run":
		return runCommand(ctx, e)
	case "config":
		return configCommand(e)
	case "replay":
		return replayCommand(ctx, e)
	case "sim":
		return simCommand(ctx, e)
	case "playground":
		return playgroundCommand(ctx, e)
	case "sandbox":
		return sandboxCommand(ctx, e)
	case "health":
		return healthCommand(ctx, e)
	case "version":
		if err := parseFlags(flag.NewFlagSet("banter version", flag.ContinueOnError), e.args, e, "banter version   (print the version)"); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "banter", version())
		return nil
	case "help":
		fmt.Fprint(e.stdout, usage)
		return nil
	}
	return &usageError{fmt.Sprintf("unknown command %q\n%s", cmd, usage)}
}
