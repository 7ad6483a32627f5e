package replay

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/banterbot/banter/decision"
)

// corpusPolicies mirror testdata/addressing.yaml on top of the built-in
// config defaults: initiative off, both classifiers configured (but none
// supplied, so borderline turns stay needs_classifier).
func corpusPolicies() Options {
	tp := decision.DefaultTextPolicy("banter")
	tp.Aliases = []string{"bant"}
	tp.DirectAddress = decision.ClassifierPolicy{Enabled: true, Model: "gpt-5-nano", Threshold: 0.75}
	vp := decision.DefaultVoicePolicy("banter")
	vp.Aliases = []string{"bant"}
	vp.Classifier = decision.ClassifierPolicy{Enabled: true, Model: "gpt-5-nano", MaxAttempts: 2}
	return Options{Text: tp, Voice: vp}
}

// Addressing quality floors on the labelled corpus, without a classifier.
const (
	minRecall    = 0.98
	minPrecision = 0.97
)

// TestAddressingCorpus scores Stage A on the labelled corpus (text and
// voice, two bots, written to be hard) and fails below the floors. It
// prints the whole report, errors included.
func TestAddressingCorpus(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "addressing.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts := corpusPolicies()
	opts.Score = NewScore()
	var summary bytes.Buffer
	if err := Run(context.Background(), f, io.Discard, &summary, opts); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(summary.String(), "skipped") {
		t.Fatalf("the corpus has bad lines:\n%s", summary.String())
	}
	var report bytes.Buffer
	if err := opts.Score.Write(&report); err != nil {
		t.Fatal(err)
	}
	t.Logf("addressing corpus, no classifier:\n%s", report.String())
	for _, p := range []string{"text", "voice"} {
		c := opts.Score.Pipeline(p)
		if c.Turns() < 200 || c.TP+c.FN < 80 || c.FP+c.TN < 80 {
			t.Errorf("%s: only %d turns (%d addressed): the corpus lost its lines", p, c.Turns(), c.TP+c.FN)
		}
		if c.Recall() < minRecall || c.Precision() < minPrecision {
			t.Errorf("%s: recall %.3f (floor %.2f), precision %.3f (floor %.2f)", p, c.Recall(), minRecall, c.Precision(), minPrecision)
		}
	}
}
