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

// TestPeopleCorpusDev prints the report of the development part, errors
// included (go test -run PeopleCorpusDev -v ./decision/replay).
func TestPeopleCorpusDev(t *testing.T) {
	s := scorePeople(t, "dev")
	var report bytes.Buffer
	if err := s.Write(&report); err != nil {
		t.Fatal(err)
	}
	t.Logf("people corpus, dev part, no classifier:\n%s", report.String())
}
