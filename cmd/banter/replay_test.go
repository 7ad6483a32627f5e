package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

func TestReplayCommandOnShippedExample(t *testing.T) {
	out, _, err := runCLI(t, nil, "replay", "-config", "../../docs/examples/replay.yaml", "../../docs/examples/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../docs/examples/conversation.expected.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("banter replay output differs from docs/examples/conversation.expected.jsonl:\n%s", out)
	}
}

func TestReplayCommandWithLLM(t *testing.T) {
	osim := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{
		Match: openaisim.Match{HasTools: openaisim.Bool(false), PromptPattern: "(?i)YES or NO"},
		Reply: openaisim.Reply{Text: "YES"},
	}))
	vars := map[string]string{"OPENAI_BASE_URL": osim.BaseURL(), "OPENAI_API_KEY": "sk-test"}
	out, _, err := runCLI(t, vars, "replay", "-llm", "-config", "../../docs/examples/replay.yaml", "../../docs/examples/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "needs_classifier") {
		t.Errorf("-llm left turns pending:\n%s", out)
	}
	if !strings.Contains(out, `"reason":"llm_yes"`) {
		t.Errorf("the classifier's YES was not applied:\n%s", out)
	}
	if len(osim.Requests()) == 0 {
		t.Error("no model requests with -llm")
	}
}

func TestReplayCommandUsage(t *testing.T) {
	if _, _, err := runCLI(t, nil, "replay"); exitCode(err) != 2 {
		t.Errorf("no file: exit %d", exitCode(err))
	}
	if _, _, err := runCLI(t, nil, "replay", "testdata/missing.jsonl"); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}

func TestReplayCommandLabels(t *testing.T) {
	out, _, err := runCLI(t, nil, "replay", "-config", "../../decision/replay/testdata/addressing.yaml",
		"-labels", "../../decision/replay/testdata/addressing.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PIPELINE  TURNS  PRECISION  RECALL", "\ntext ", "\nvoice ", "name_exact", "BORDERLINE", "errors\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay -labels output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"allow"`) {
		t.Errorf("replay -labels printed result lines:\n%s", out)
	}
	if _, _, err := runCLI(t, nil, "replay", "-labels", "x.jsonl", "y.jsonl"); exitCode(err) != 2 {
		t.Errorf("-labels with another file: exit %d", exitCode(err))
	}
}

// TestReplayCost: `banter replay -cost` runs the recorded conversation's model calls (-llm
// implied) and prints what they cost at the config's prices: the total equals the simulator's
// reported usage times the shipped prices of the models asked.
func TestReplayCost(t *testing.T) {
	osim := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{
		Match: openaisim.Match{HasTools: openaisim.Bool(false), PromptPattern: "(?i)YES or NO"},
		Reply: openaisim.Reply{Text: "YES"},
	}))
	vars := map[string]string{"OPENAI_BASE_URL": osim.BaseURL(), "OPENAI_API_KEY": "sk-test"}
	_, stderr, err := runCLI(t, vars, "replay", "-cost", "-config", "../../docs/examples/replay.yaml", "../../docs/examples/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	prices := llmPrices(config.Default())
	var want float64
	for _, r := range osim.Requests() {
		want += prices[r.Model].Cost(recordedUsage(r))
	}
	if want == 0 {
		t.Fatal("the replay's calls cost nothing at the shipped prices")
	}
	line := fmt.Sprintf("cost: $%.6f at the configured prices", want)
	if !strings.Contains(stderr, line) || !strings.Contains(stderr, "  llm.directAddressClassifier ") {
		t.Errorf("replay -cost printed\n%s\nwant %q and the classifier's line", stderr, line)
	}
}
