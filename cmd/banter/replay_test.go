package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// TestReplayOutcomesAddUpToTurns: `banter replay -llm -log FILE` over a recorded conversation
// logs, for each admitted text turn, exactly one of reply_skipped, sent_reply and
// sent_message (as the live bot does), so that counting those lines counts the turns, once
// each; the summary says the same numbers.
func TestReplayOutcomesAddUpToTurns(t *testing.T) {
	osim := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{HasTools: openaisim.Bool(false), PromptPattern: "(?i)YES or NO"}, Reply: openaisim.Reply{Text: "YES"}},
		openaisim.Rule{Match: openaisim.Match{InputPattern: "Latest, from alice: anyone watching the match"}, Reply: openaisim.Reply{Skip: true}},
		openaisim.Rule{Match: openaisim.Match{InputPattern: "Latest, from"}, Reply: openaisim.Reply{Text: "Happy to help!"}},
	))
	// The shipped example's config, with addressed turns in the initiative channel sent to
	// the channel (initiativeReplyShare 0), so that all three outcomes occur.
	shipped, err := os.ReadFile("../../docs/examples/replay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath, logPath := filepath.Join(dir, "replay.yaml"), filepath.Join(dir, "replay.log")
	cfg := strings.Replace(string(shipped), "  recentWindowSeconds: 300\n", "  recentWindowSeconds: 300\n  initiativeReplyShare: 0\n", 1)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"OPENAI_BASE_URL": osim.BaseURL(), "OPENAI_API_KEY": "sk-test"}
	out, summary, err := runCLI(t, vars, "replay", "-llm", "-log", logPath, "-config", cfgPath, "../../docs/examples/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	admitted := map[string]string{} // admitted text turn → its outcome in the results
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			ID      string `json:"id"`
			Allow   *bool  `json:"allow"`
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Allow != nil && *r.Allow && !strings.HasPrefix(r.ID, "v") {
			admitted[r.ID] = r.Outcome
		}
	}
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string][]string{} // turn → its outcome lines
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		var l struct {
			Msg      string   `json:"msg"`
			Triggers []string `json:"trigger_ids"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Msg != "reply_skipped" && l.Msg != "sent_reply" && l.Msg != "sent_message" {
			continue
		}
		kinds[l.Msg]++
		for _, id := range l.Triggers {
			lines[id] = append(lines[id], l.Msg)
		}
	}
	if len(admitted) < 3 {
		t.Fatalf("%d admitted text turns; the conversation should admit several:\n%s", len(admitted), out)
	}
	for id, outcome := range admitted {
		if len(lines[id]) != 1 || lines[id][0] != outcome {
			t.Errorf("turn %s: outcome lines %v, want exactly [%s] (its result's outcome)", id, lines[id], outcome)
		}
	}
	if n := kinds["reply_skipped"] + kinds["sent_reply"] + kinds["sent_message"]; n != len(admitted) || len(lines) != len(admitted) {
		t.Errorf("%d outcome lines naming %d turns, want %d: the admitted text turns, once each", n, len(lines), len(admitted))
	}
	for _, k := range []string{"reply_skipped", "sent_reply", "sent_message"} {
		if kinds[k] == 0 {
			t.Errorf("no %s line: the conversation should produce each outcome (%v)", k, kinds)
		}
	}
	want := fmt.Sprintf("text outcomes: %d admitted turns: %d sent_reply, %d sent_message, %d reply_skipped, 0 reply_failed",
		len(admitted), kinds["sent_reply"], kinds["sent_message"], kinds["reply_skipped"])
	t.Logf("%s", want)
	if !strings.Contains(summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, summary)
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
