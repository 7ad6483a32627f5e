package replay

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scorePeople replays one part of the people corpus (testdata/people:
// issue 38, written and labelled before the matcher was tuned; dev tuned
// on, test only scored) without a classifier and returns its score.
func scorePeople(t *testing.T, part string) *Score {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "people", part+".jsonl"))
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
		t.Fatalf("the %s part has bad lines:\n%s", part, summary.String())
	}
	return opts.Score
}

// peopleFloor is what Stage A reached on one part of the people corpus
// (docs/decision.md): at most this many false alarms and misses per
// pipeline, and at most this many turns left to a classifier (the
// baseline's count before issue 38 is baselinePending).
type peopleFloor struct {
	turns, addressed        int
	textFP, textFN          int
	voiceFP, voiceFN        int
	pending                 int
	baselinePending         int
	minPrecision, minRecall float64
}

var peopleFloors = map[string]peopleFloor{
	"dev":  {turns: 528, addressed: 245, textFP: 2, textFN: 0, voiceFP: 3, voiceFN: 0, pending: 118, baselinePending: 158, minPrecision: 0.97, minRecall: 0.97},
	"test": {turns: 501, addressed: 223, textFP: 3, textFN: 0, voiceFP: 1, voiceFN: 2, pending: 127, baselinePending: 153, minPrecision: 0.97, minRecall: 0.97},
}

// TestPeopleCorpus replays both parts of the people corpus without a
// classifier and fails when Stage A falls below what it reached: more
// false alarms or misses in either pipeline, precision or recall under
// 0.97, or a larger share left to the classifier. It prints the report
// (go test -run PeopleCorpus -v ./decision/replay); the dev part is the one
// to read errors from, the test part is only scored.
func TestPeopleCorpus(t *testing.T) {
	for _, part := range []string{"dev", "test"} {
		t.Run(part, func(t *testing.T) {
			s := scorePeople(t, part)
			var report bytes.Buffer
			if err := s.Write(&report); err != nil {
				t.Fatal(err)
			}
			t.Logf("people corpus, %s part, no classifier:\n%s", part, report.String())
			want := peopleFloors[part]
			all, text, voice := s.All(), s.Pipeline("text"), s.Pipeline("voice")
			if all.Turns() != want.turns || all.TP+all.FN != want.addressed {
				t.Fatalf("%d turns (%d addressed), want %d (%d): the corpus changed", all.Turns(), all.TP+all.FN, want.turns, want.addressed)
			}
			if text.FP > want.textFP || text.FN > want.textFN || voice.FP > want.voiceFP || voice.FN > want.voiceFN {
				t.Errorf("text FP %d FN %d, voice FP %d FN %d; reached FP %d FN %d, FP %d FN %d",
					text.FP, text.FN, voice.FP, voice.FN, want.textFP, want.textFN, want.voiceFP, want.voiceFN)
			}
			for name, c := range map[string]Confusion{"text": text, "voice": voice, "all": all} {
				if c.Precision() < want.minPrecision || c.Recall() < want.minRecall {
					t.Errorf("%s: precision %.3f, recall %.3f, want >= %.2f each", name, c.Precision(), c.Recall(), want.minPrecision)
				}
			}
			if all.Pending > want.pending || all.Pending >= want.baselinePending {
				t.Errorf("%d turns left to the classifier, reached %d (baseline %d)", all.Pending, want.pending, want.baselinePending)
			}
		})
	}
}
