// Package e2e_test runs `banter replay -llm` end to end: the replay runner,
// our OpenAI client (llm) and the OpenAI simulator (sim/openai), over real
// HTTP on loopback. It lives in its own package so that the replay unit
// tests do not depend on the llm and simulator packages.
package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/decision/replay"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

const (
	classifierModel = "gpt-5-nano"
	replyModel      = "gpt-5-mini"
)

func TestReplayWithLLM(t *testing.T) {
	sim := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Name: "yes-pizza", Match: openaisim.Match{Model: classifierModel, InputPattern: `Latest utterance, from mike: "what do you think about pineapple`},
			Reply: openaisim.Reply{Text: "YES"}},
		openaisim.Rule{Name: "addressed-after-all", Match: openaisim.Match{Model: classifierModel, InputPattern: `from carol:\nI asked banter yesterday`},
			Reply: openaisim.Reply{Text: "0.9"}},
		openaisim.Rule{Name: "classifier-no", Match: openaisim.Match{Model: classifierModel}, Reply: openaisim.Reply{Text: "NO."}},
		openaisim.Rule{Name: "skip-match", Match: openaisim.Match{Model: replyModel, InputPattern: `Latest, from alice: anyone watching the match`},
			Reply: openaisim.Reply{Skip: true}},
		openaisim.Rule{Name: "reply", Match: openaisim.Match{Model: replyModel}, Reply: openaisim.Reply{Text: "Happy to help!"}},
	))
	client, err := llm.New(llm.Options{BaseURL: sim.BaseURL(), APIKey: "test", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	tp := decision.DefaultTextPolicy("banter")
	tp.Aliases = []string{"bant"}
	tp.AllowInitiativeReplies = true
	tp.InitiativeChannelIDs = []string{"200000000000000002"}
	tp.DirectAddress = decision.ClassifierPolicy{Enabled: true, Model: classifierModel, Threshold: 0.75}
	vp := decision.DefaultVoicePolicy("banter")
	vp.RecentReplyWindow = 30 * time.Second
	vp.Classifier = decision.ClassifierPolicy{Enabled: true, Model: classifierModel, MaxAttempts: 2, Timeout: 5 * time.Second}
	opts := replay.Options{
		Text: tp, Voice: vp,
		// This is the whole -llm wiring.
		Classifier: decision.ClassifierFunc(client.Classify),
		Generator: replay.GeneratorFunc(func(ctx context.Context, system, user string) (string, error) {
			res, err := client.Generate(ctx, llm.GenerateRequest{Model: replyModel, Instructions: system,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}})
			if err != nil {
				return "", err
			}
			return res.Text, nil
		}),
	}

	in, err := os.Open("../../../docs/examples/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, summary bytes.Buffer
	if err := replay.Run(t.Context(), in, &out, &summary, opts); err != nil {
		t.Fatal(err)
	}
	got := map[string]replay.Result{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r replay.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got[r.ID] = r
	}
	tests := []struct {
		id, reason string
		allow      bool
		skipped    string // "", "true", "false": Stage B ran (only for admitted turns)
		reply      string
	}{
		{"1002", "name_address", true, "false", "Happy to help!"},
		{"1003", "own_message", false, "", ""},
		{"1008", "initiative_channel", true, "true", ""},
		{"1009", "alias_address", true, "false", "Happy to help!"},
		// Talking about the bot: the direct-address classifier decides.
		{"1010", "llm_direct_address", true, "false", "Happy to help!"},
		{"1011", "llm_no", false, "", ""},
		{"v1", "direct_address_fast_path", true, "false", "Happy to help!"},
		{"v6", "llm_no", false, "", ""},
		{"v7", "llm_no", false, "", ""},
		{"v9", "llm_yes", true, "false", "Happy to help!"},
	}
	for _, tc := range tests {
		r, ok := got[tc.id]
		if !ok {
			t.Errorf("%s: no result", tc.id)
			continue
		}
		skipped := ""
		if r.Skipped != nil {
			skipped = map[bool]string{true: "true", false: "false"}[*r.Skipped]
		}
		if r.Allow == nil || *r.Allow != tc.allow || r.Reason != tc.reason || skipped != tc.skipped || r.Reply != tc.reply || r.Error != "" {
			t.Errorf("%s: %+v; want allow %v reason %s skipped %q reply %q", tc.id, r, tc.allow, tc.reason, tc.skipped, tc.reply)
		}
		if tc.skipped == "true" && r.SkipReason != "llm_skip" {
			t.Errorf("%s: skip_reason %q", tc.id, r.SkipReason)
		}
	}
	if strings.Contains(out.String(), "needs_classifier") {
		t.Errorf("with a classifier nothing should be pending:\n%s", out.String())
	}

	// The classifier saw the conversation: participants, timeline, eagerness.
	var sawPizza bool
	forced := 0
	for _, rec := range sim.RequestsFor(openaisim.EndpointResponses) {
		if rec.Model == classifierModel && strings.Contains(rec.Prompt, "pineapple") {
			sawPizza = true
			for _, want := range []string{"YES or NO", "Participants: mike, alice, bob", "Eagerness: 30/100", "[alice] banter, stop talking please"} {
				if !strings.Contains(rec.Prompt, want) {
					t.Errorf("classifier prompt lacks %q:\n%s", want, rec.Prompt)
				}
			}
		}
		if rec.Model == replyModel && strings.HasSuffix(strings.TrimSpace(rec.Prompt), "hey banter, what's the weather like today?") {
			forced++
			if !strings.Contains(rec.Prompt, "You must reply") {
				t.Errorf("forced turn without the force lines:\n%s", rec.Prompt)
			}
		}
	}
	if forced != 2 {
		t.Errorf("saw %d generation requests for the two forced weather questions, want 2", forced)
	}
	if !sawPizza {
		t.Error("no classifier request for the pizza question")
	}
}
