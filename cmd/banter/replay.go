package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/decision/replay"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/text"
	"github.com/banterbot/banter/voice"
)

// replayCommand implements `banter replay [-config FILE] [-llm] [-cost] [-log FILE] EVENTS.jsonl`:
// a recorded conversation through the decision engine, offline (with -log, its decisions and
// each admitted text turn's outcome as the bot's log lines; with -cost, what the model calls
// cost at the config's prices); with -labels CORPUS.jsonl it scores a labelled corpus instead.
func replayCommand(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("banter replay", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	configPath := fs.String("config", "", "config file (else $BANTER_CONFIG, else ./banter.yaml if present, else defaults)")
	useLLM := fs.Bool("llm", false, "run the classifier and Stage B against the configured model")
	withCost := fs.Bool("cost", false, "with -llm (implied): print what the model calls cost at the config's prices")
	logPath := fs.String("log", "", "write the decisions and, with -llm, each admitted text turn's outcome (reply_skipped, sent_reply, sent_message) as JSON log lines to this file")
	labels := fs.String("labels", "", "score a labelled corpus (events with \"addressed\" and \"why\"): print precision, recall, confusion tables and errors instead of results")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: banter replay [-config FILE] [-llm] [-cost] [-log FILE] EVENTS.jsonl   (- reads stdin)")
		fmt.Fprintln(e.stderr, "       banter replay [-config FILE] [-llm] [-cost] -labels CORPUS.jsonl")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e.args, e, "banter replay [-config FILE] [-llm] [-cost] [-log FILE] EVENTS.jsonl   (- reads stdin)"); err != nil {
		return err
	}
	switch {
	case *labels != "" && fs.NArg() != 0:
		fs.Usage()
		return &usageError{"replay: with -labels, give no other file"}
	case *labels == "" && fs.NArg() != 1:
		fs.Usage()
		return &usageError{"replay: give exactly one EVENTS.jsonl file (or -)"}
	}
	cfg, err := config.Load(config.Locate(*configPath, e.getenv), e.getenv)
	if err != nil {
		return &usageError{err.Error()}
	}
	opts := replay.Options{Text: text.Policy(cfg), Voice: voice.Policy(cfg),
		Routing: replay.Routing{TargetedReplies: cfg.Text.TargetedReplies, ReplyShare: cfg.Activity.InitiativeReplyShare}}
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return fmt.Errorf("replay: -log: %w", err)
		}
		defer f.Close()
		opts.Logger = slog.New(slog.NewJSONHandler(f, nil))
	}
	var cost *replayCost
	if *withCost {
		*useLLM = true
		cost = newReplayCost(cfg, slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	if *useLLM {
		if missing := cfg.MissingKeys(); len(missing) > 0 {
			return &usageError{missingKeysHelp(missing)}
		}
		base := llm.Options{Logger: slog.New(slog.DiscardHandler)}
		if cost != nil {
			base.Meter = cost.meter
		}
		models := newModelClients(cfg, base, nil)
		classifier, err := models.For(cfg.LLM.DirectAddressClassifier.Provider)
		if err != nil {
			return err
		}
		client, err := models.For(cfg.LLM.Provider)
		if err != nil {
			return err
		}
		classify := classifier.ClassifyWith(func() string { return cfg.LLM.DirectAddressClassifier.ReasoningEffort })
		opts.Classifier = decision.ClassifierFunc(func(ctx context.Context, model, system, user string) (string, error) {
			return classify(charge(ctx, replayClassifierSlot), model, system, user)
		})
		opts.Generator = replay.GeneratorFunc(func(ctx context.Context, system, user string) (string, error) {
			res, err := client.Generate(charge(ctx, replayGeneratorSlot), llm.GenerateRequest{Model: cfg.LLM.Model, Instructions: system,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}})
			if err != nil {
				return "", err
			}
			return strings.TrimSpace(res.Text), nil
		})
	}
	if *labels != "" {
		opts.Score = replay.NewScore()
		if err := replay.RunFile(ctx, *labels, e.stdin, io.Discard, e.stderr, opts); err != nil {
			return err
		}
		if err := opts.Score.Write(e.stdout); err != nil || cost == nil {
			return err
		}
		return cost.write(e.stderr)
	}
	if err := replay.RunFile(ctx, fs.Arg(0), e.stdin, e.stdout, e.stderr, opts); err != nil {
		return err
	}
	if cost != nil {
		return cost.write(e.stderr)
	}
	return nil
}
