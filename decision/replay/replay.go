// Package replay runs a recorded conversation through the decision engine
// offline ("banter replay"), so operators can tune names and eagerness
// before touching their server. It reads JSON lines (Event), writes one
// JSON line per event (Result) in the same order, and a summary table.
package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"github.com/banterbot/banter/decision"
)

// Generator produces a reply for Stage B: the model's raw answer to the
// system and user prompts. Implementations must honour ctx.
type Generator interface {
	Generate(ctx context.Context, system, user string) (string, error)
}

// GeneratorFunc adapts a function to Generator.
type GeneratorFunc func(ctx context.Context, system, user string) (string, error)

// Generate calls f.
func (f GeneratorFunc) Generate(ctx context.Context, system, user string) (string, error) {
	return f(ctx, system, user)
}

// Options configure a replay. Policies come from the config; Classifier and
// Generator are set with -llm.
type Options struct {
	Text  decision.TextPolicy
	Voice decision.VoicePolicy
	// Classifier answers the voice YES/NO and the text direct-address
	// questions. Nil: turns that need it come out as allow:null,
	// needs_classifier.
	Classifier decision.Classifier
	// Generator runs Stage B on admitted turns. Nil: Stage B is not run.
	Generator Generator
	// Routing decides, with the text policy's initiative channels, whether an admitted text
	// turn's reply is sent as a reply or a channel message (its outcome).
	Routing Routing
	// VoiceReplyDuration is how long the simulated bot speaks after an
	// admitted voice turn; utterances ending meanwhile are deferred
	// (bot_turn_open). Zero: the bot's speech takes no time.
	VoiceReplyDuration time.Duration
	// Logger receives every decision as its structured event, and with a generator each
	// admitted text turn's outcome event (nil: none).
	Logger *slog.Logger
	// Metrics counts decisions (nil: none).
	Metrics *decision.Metrics
	// Score, when set, scores every labelled event (replay -labels).
	Score *Score
	// MaxLineBytes bounds an input line (default 1 MiB).
	MaxLineBytes int
}

const defaultMaxLine = 1 << 20

// Run replays the events read from in. It writes one Result line per valid
// event to out, reports bad lines (with their line number) and finally the
// summary table to summary, and returns an error only when reading,
// writing or ctx fails.
func Run(ctx context.Context, in io.Reader, out, summary io.Writer, opts Options) error {
	r := newRunner(opts)
	br := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	maxLine := opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = defaultMaxLine
	}
	for lineNo := 1; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("replay: line %d: %w", lineNo, err)
		}
		line, tooLong, err := readLine(br, maxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("replay: read line %d: %w", lineNo, err)
		}
		eof := errors.Is(err, io.EOF)
		switch {
		case tooLong:
			r.stats.bad++
			fmt.Fprintf(summary, "replay: line %d: skipped: longer than %d bytes\n", lineNo, maxLine)
		case len(strings.TrimSpace(string(line))) == 0:
			// Blank lines are not events.
		default:
			ev, perr := ParseEvent(line)
			if perr != nil {
				r.stats.bad++
				fmt.Fprintf(summary, "replay: line %d: skipped: %v\n", lineNo, perr)
				break
			}
			res, ok := r.handle(ctx, ev)
			if !ok {
				break
			}
			if err := enc.Encode(res); err != nil {
				return fmt.Errorf("replay: write result for line %d: %w", lineNo, err)
			}
		}
		if eof {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("replay: write results: %w", err)
	}
	if err := r.stats.write(summary); err != nil {
		return fmt.Errorf("replay: write summary: %w", err)
	}
	return nil
}

// readLine reads one line without its end, discarding the rest of a line
// longer than max (tooLong).
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+2 {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = []byte(strings.TrimRight(string(line), "\r\n"))
		if tooLong {
			line = nil
		}
		return line, tooLong, err
	}
}

// round3 keeps confidences stable in the output.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func result(id string, d decision.Decision) Result {
	r := Result{ID: id, Reason: d.Reason.String(), Signal: d.Signal.String(), Confidence: round3(d.Confidence), Force: d.Force}
	switch d.Outcome {
	case decision.OutcomePending:
	default:
		allow := d.Allowed()
		r.Allow = &allow
	}
	if d.RetryAfter > 0 {
		r.RetryAfterMS = d.RetryAfter.Milliseconds()
	}
	return r
}

// RunFile replays the events in the file at path ("-" reads stdin), with
// results to out and the summary to summary: the whole of
// "banter replay EVENTS.jsonl" once the options are built.
func RunFile(ctx context.Context, path string, stdin io.Reader, out, summary io.Writer, opts Options) error {
	if path == "-" {
		return Run(ctx, stdin, out, summary, opts)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	return Run(ctx, f, out, summary, opts)
}
