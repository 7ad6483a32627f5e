package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/decision"
	"github.com/prometheus/client_golang/prometheus"
)

var update = flag.Bool("update", false, "rewrite the expected files in docs/examples")

const examples = "../../docs/examples"

// examplePolicies mirror docs/examples/replay.yaml on top of the built-in
// config defaults.
func examplePolicies() Options {
	tp := decision.DefaultTextPolicy("banter")
	tp.Aliases = []string{"bant"}
	tp.AllowInitiativeReplies = true
	tp.InitiativeChannelIDs = []string{"200000000000000002"}
	tp.RecentWindow = 300 * time.Second
	vp := decision.DefaultVoicePolicy("banter")
	vp.ReplyEagerness = 50
	vp.FocusedSpeakerWindow = 20 * time.Second
	vp.RecentReplyWindow = 30 * time.Second
	vp.Classifier = decision.ClassifierPolicy{Enabled: true, Model: "gpt-5-nano", MaxAttempts: 2, Timeout: 2500 * time.Millisecond}
	return Options{Text: tp, Voice: vp}
}

func runFile(t *testing.T, path string, opts Options) (results []Result, raw, summary string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, sum bytes.Buffer
	if err := Run(context.Background(), f, &out, &sum, opts); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return decodeResults(t, out.String()), out.String(), sum.String()
}

func decodeResults(t *testing.T, s string) []Result {
	t.Helper()
	var rs []Result
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		rs = append(rs, r)
	}
	return rs
}

// want is what the sample conversation must produce; "null" is a pending
// decision (allow:null).
var exampleWant = map[string]struct {
	allow  string
	reason decision.Reason
	signal decision.Signal
	force  bool
}{
	"1001": {"false", decision.ReasonNotAddressed, decision.SignalLLMDecides, false},
	"1002": {"true", decision.ReasonNameAddress, decision.SignalNameExact, true},
	"1003": {"false", decision.ReasonOwnMessage, decision.SignalLLMDecides, false},
	"1004": {"true", decision.ReasonReplyToBot, decision.SignalDirect, true},
	"1005": {"true", decision.ReasonRecentBotActivity, decision.SignalLLMDecides, false},
	"1006": {"true", decision.ReasonDirectMention, decision.SignalDirect, true},
	"1007": {"false", decision.ReasonBotAuthor, decision.SignalLLMDecides, false},
	"1008": {"true", decision.ReasonInitiativeChannel, decision.SignalLLMDecides, false},
	"1009": {"true", decision.ReasonAliasAddress, decision.SignalNameAlias, true},
	"1010": {"false", decision.ReasonNotAddressed, decision.SignalLLMDecides, false},
	"1011": {"false", decision.ReasonNotAddressed, decision.SignalLLMDecides, false},
	"v0":   {"false", decision.ReasonLowSignalFragment, decision.SignalLLMDecides, false},
	"v1":   {"true", decision.ReasonDirectAddressFastPath, decision.SignalNameExact, true},
	"v2":   {"false", decision.ReasonLowSignalFragment, decision.SignalLLMDecides, false},
	"v3":   {"false", decision.ReasonAddressedToOther, decision.SignalLLMDecides, false},
	"v4":   {"true", decision.ReasonFocusedSpeaker, decision.SignalLLMDecides, false},
	"v5":   {"true", decision.ReasonDirectAddressFastPath, decision.SignalNameExact, true},
	"v6":   {"null", decision.ReasonNeedsClassifier, decision.SignalLLMDecides, false},
	"v7":   {"null", decision.ReasonNeedsClassifier, decision.SignalLLMDecides, false},
	"v8":   {"true", decision.ReasonDirectAddressFastPath, decision.SignalNameExact, true},
	"v9":   {"null", decision.ReasonNeedsClassifier, decision.SignalLLMDecides, false},
	"v10":  {"false", decision.ReasonMissingTranscript, decision.SignalLLMDecides, false},
	"v11":  {"true", decision.ReasonWakePing, decision.SignalNameExact, true},
}

func allowString(a *bool) string {
	if a == nil {
		return "null"
	}
	if *a {
		return "true"
	}
	return "false"
}

func TestReplayExample(t *testing.T) {
	in := filepath.Join(examples, "conversation.jsonl")
	reg := prometheus.NewRegistry()
	opts := examplePolicies()
	opts.Metrics = decision.NewMetrics(reg)
	results, raw, summary := runFile(t, in, opts)

	if len(results) != len(exampleWant) {
		t.Errorf("%d results, want %d", len(results), len(exampleWant))
	}
	for _, r := range results {
		w, ok := exampleWant[r.ID]
		if !ok {
			t.Errorf("unexpected result %+v", r)
			continue
		}
		if allowString(r.Allow) != w.allow || r.Reason != w.reason.String() || r.Signal != w.signal.String() || r.Force != w.force {
			t.Errorf("%s: allow %s reason %s signal %s force %v; want %s %v %v %v",
				r.ID, allowString(r.Allow), r.Reason, r.Signal, r.Force, w.allow, w.reason, w.signal, w.force)
		}
	}
	// Output order is input order.
	if len(results) > 0 && (results[0].ID != "1001" || results[len(results)-1].ID != "v11") {
		t.Errorf("order: first %s last %s", results[0].ID, results[len(results)-1].ID)
	}
	for _, want := range []string{"line 12: skipped", "line 13: skipped", `type "reaction"`, "23 events", "2 bad lines",
		"200000000000000002", "needs_classifier", "direct_address_fast_path"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if got := counter(t, reg, "banter_decisions_total", map[string]string{"pipeline": "voice", "stage": "A", "outcome": "allow", "reason": "direct_address_fast_path"}); got != 3 {
		t.Errorf("banter_decisions_total{voice,A,allow,direct_address_fast_path} = %v, want 3", got)
	}

	golden(t, filepath.Join(examples, "conversation.expected.jsonl"), raw)
	golden(t, filepath.Join(examples, "conversation.summary.txt"), summary)
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

// counter returns the value of the counter with exactly these labels.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
