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

// TestScoreCounts checks the scoring rules on a small corpus: the bot
// switch, a pending borderline turn counted as not addressed (and as
// borderline), an error listed with its decision, unlabelled turns ignored.
func TestScoreCounts(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"bot","name":"Zorvik","aliases":["Zorv"]}`,
		`{"type":"message","id":"1","channel_id":"c","author_id":"u","content":"thanks zorvik","ts":"2026-11-21T10:00:00Z","addressed":true,"why":"thanks"}`,
		`{"type":"message","id":"2","channel_id":"c","author_id":"u","content":"thanks banter","ts":"2026-11-21T10:01:00Z","addressed":false,"why":"old_name"}`,
		`{"type":"message","id":"3","channel_id":"c","author_id":"u","content":"I asked zorvik yesterday","ts":"2026-11-21T10:02:00Z","addressed":true,"why":"mislabelled"}`,
		`{"type":"message","id":"4","channel_id":"c","author_id":"u","content":"hey zorvik","ts":"2026-11-21T10:03:00Z"}`,
		`{"type":"voice","id":"v1","channel_id":"vc","speaker_id":"u","transcript":"zorbik over there needs fixing","ts":"2026-11-21T10:04:00Z","addressed":true,"why":"asr_borderline"}`,
		`{"type":"voice","id":"v2","channel_id":"vc","speaker_id":"u","transcript":"zorvek can you hear me","ts":"2026-11-21T10:05:00Z","addressed":true,"why":"asr_lead"}`,
		`{"type":"bot","aliases":["x"]}`,
	}, "\n")
	opts := corpusPolicies()
	opts.Score = NewScore()
	_, _, summary := run(t, in, opts)
	if !strings.Contains(summary, "line 8: skipped: bad event: bot: missing name") {
		t.Errorf("a bot switch without a name is not reported:\n%s", summary)
	}
	if got, want := opts.Score.Pipeline("text"), (Confusion{TP: 1, FN: 1, TN: 1, Pending: 1, Borderline: 1, BorderlineAddressed: 1}); got != want {
		t.Errorf("text %+v, want %+v", got, want)
	}
	if got, want := opts.Score.Pipeline("voice"), (Confusion{TP: 1, FN: 1, Pending: 1, Borderline: 1, BorderlineAddressed: 1}); got != want {
		t.Errorf("voice %+v, want %+v", got, want)
	}
	misses := opts.Score.Misses()
	if len(misses) != 2 || misses[0].ID != "3" || misses[0].Bot != "Zorvik" || misses[1].ID != "v1" ||
		misses[1].Decision.Reason != decision.ReasonNeedsClassifier {
		t.Errorf("misses %+v", misses)
	}
	var report bytes.Buffer
	if err := opts.Score.Write(&report); err != nil {
		t.Fatal(err)
	}
	if got, want := opts.Score.All(), (Confusion{TP: 2, FN: 2, TN: 1, Pending: 2, Borderline: 2, BorderlineAddressed: 2}); got != want {
		t.Errorf("all %+v, want %+v", got, want)
	}
	if got := opts.Score.All().ClassifierShare(); got != 0.4 {
		t.Errorf("classifier share %v, want 0.4 (2 of 5 turns)", got)
	}
	if got, want := opts.Score.Kind("asr_borderline"), (Confusion{FN: 1, Pending: 1, Borderline: 1, BorderlineAddressed: 1}); got != want {
		t.Errorf("kind asr_borderline %+v, want %+v", got, want)
	}
	for _, line := range []string{"CLASSIFIER_SHARE", "all       5", "WHY", "mislabelled     1      1          1.000      0.000"} {
		if !strings.Contains(report.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, report.String())
		}
	}
	if !strings.Contains(report.String(), `text 3 [Zorvik] labelled addressed (mislabelled), got pending needs_classifier llm_decides 0.30: "I asked zorvik yesterday"`) {
		t.Errorf("report:\n%s", report.String())
	}
}
