package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

func run(t *testing.T, input string, opts Options) ([]Result, string, string) {
	t.Helper()
	var out, sum bytes.Buffer
	if err := Run(context.Background(), strings.NewReader(input), &out, &sum, opts); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return decodeResults(t, out.String()), out.String(), sum.String()
}

func TestReplayBadLines(t *testing.T) {
	good := `{"type":"message","id":"1","channel_id":"c1","author_id":"u1","content":"hi","ts":"2026-11-21T10:00:00Z"}`
	tests := []struct {
		name, line, want string
	}{
		{"truncated", `{"type":"message","id":"2"`, "invalid JSON"},
		{"not json", `hello`, "invalid JSON"},
		{"unknown type", `{"type":"reaction","id":"2","channel_id":"c1","ts":"2026-11-21T10:00:00Z"}`, `type "reaction"`},
		{"typo field", `{"type":"message","id":"2","channel":"c1","author_id":"u1","ts":"2026-11-21T10:00:00Z"}`, `unknown field "channel"`},
		{"no id", `{"type":"message","channel_id":"c1","author_id":"u1","ts":"2026-11-21T10:00:00Z"}`, "missing id"},
		{"no channel", `{"type":"message","id":"2","author_id":"u1","ts":"2026-11-21T10:00:00Z"}`, "missing channel_id"},
		{"no ts", `{"type":"message","id":"2","channel_id":"c1","author_id":"u1"}`, "missing ts"},
		{"bad ts", `{"type":"message","id":"2","channel_id":"c1","author_id":"u1","ts":"yesterday"}`, "invalid JSON"},
		{"no author", `{"type":"message","id":"2","channel_id":"c1","ts":"2026-11-21T10:00:00Z"}`, "missing author_id"},
		{"no speaker", `{"type":"voice","id":"2","channel_id":"c1","transcript":"hi","ts":"2026-11-21T10:00:00Z"}`, "missing speaker_id"},
		{"negative duration", `{"type":"voice","id":"2","channel_id":"c1","speaker_id":"u1","duration_ms":-5,"ts":"2026-11-21T10:00:00Z"}`, "negative duration_ms"},
		{"two values", good + " {}", "more than one JSON value"},
		{"wrong type", `{"type":"message","id":2,"channel_id":"c1","author_id":"u1","ts":"2026-11-21T10:00:00Z"}`, "invalid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			input := good + "\r\n\n" + tc.line + "\n" + strings.Replace(good, `"id":"1"`, `"id":"3"`, 1)
			results, _, summary := run(t, input, examplePolicies())
			if len(results) != 2 || results[0].ID != "1" || results[1].ID != "3" {
				t.Fatalf("results %+v: the good lines around the bad one must come through", results)
			}
			if !strings.Contains(summary, "replay: line 3: skipped: ") || !strings.Contains(summary, tc.want) || !strings.Contains(summary, "1 bad lines") {
				t.Errorf("summary does not report line 3 (%q):\n%s", tc.want, summary)
			}
		})
	}
}

func TestReplayLongLine(t *testing.T) {
	long := `{"type":"message","id":"1","channel_id":"c1","author_id":"u1","content":"` + strings.Repeat("a", 5000) + `","ts":"2026-11-21T10:00:00Z"}`
	good := `{"type":"message","id":"2","channel_id":"c1","author_id":"u1","content":"hi","ts":"2026-11-21T10:00:00Z"}`
	opts := examplePolicies()
	opts.MaxLineBytes = 1000
	results, _, summary := run(t, long+"\n"+good+"\n", opts)
	if len(results) != 1 || results[0].ID != "2" || !strings.Contains(summary, "line 1: skipped: longer than 1000 bytes") {
		t.Errorf("results %+v, summary:\n%s", results, summary)
	}
}

func TestReplayPendingIsNull(t *testing.T) {
	in := `{"type":"voice","id":"v1","channel_id":"vc1","speaker_id":"u1","speaker_name":"alice","transcript":"what do you think about pineapple on pizza? and be honest","duration_ms":3000,"ts":"2026-11-21T10:00:00Z"}`
	_, raw, _ := run(t, in, examplePolicies())
	want := `{"id":"v1","allow":null,"reason":"needs_classifier","signal":"llm_decides","confidence":0,"force":false}` + "\n"
	if raw != want {
		t.Errorf("got  %s\nwant %s", raw, want)
	}
}

func TestReplayDefersWhileBotSpeaks(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"voice","id":"v1","channel_id":"vc1","speaker_id":"u1","speaker_name":"alice","transcript":"banter, tell us a joke","duration_ms":1000,"ts":"2026-11-21T10:00:00Z"}`,
		// Ends at 10:00:03, while the bot speaks until 10:00:06.
		`{"type":"voice","id":"v2","channel_id":"vc1","speaker_id":"u2","speaker_name":"bob","transcript":"banter, make it a good one","duration_ms":1000,"ts":"2026-11-21T10:00:02Z"}`,
		// Ends at 10:00:08: the bot is done, and alice follows up.
		`{"type":"voice","id":"v3","channel_id":"vc1","speaker_id":"u1","speaker_name":"alice","transcript":"ha, tell me another one","duration_ms":1000,"ts":"2026-11-21T10:00:07Z"}`,
	}, "\n")
	opts := examplePolicies()
	opts.VoiceReplyDuration = 5 * time.Second
	results, _, summary := run(t, in, opts)
	if len(results) != 3 {
		t.Fatalf("results: %+v", results)
	}
	if r := results[1]; r.Reason != "bot_turn_open" || r.Allow == nil || *r.Allow || r.RetryAfterMS != 3000 {
		t.Errorf("v2: %+v, want deferred with retry_after_ms 3000", r)
	}
	if r := results[2]; r.Reason != "focused_speaker_followup" || r.Allow == nil || !*r.Allow {
		t.Errorf("v3: %+v", r)
	}
	if !strings.Contains(summary, "1 deferred") {
		t.Errorf("summary:\n%s", summary)
	}
}

func TestReplayGeneratorError(t *testing.T) {
	in := `{"type":"message","id":"1","channel_id":"c1","author_id":"u1","content":"banter, hi","ts":"2026-11-21T10:00:00Z"}`
	opts := examplePolicies()
	opts.Generator = GeneratorFunc(func(ctx context.Context, system, user string) (string, error) {
		return "", errors.New("status 500")
	})
	results, _, _ := run(t, in, opts)
	if len(results) != 1 || results[0].Error != "stage B: status 500" || results[0].Skipped != nil || results[0].Allow == nil || !*results[0].Allow {
		t.Errorf("results: %+v", results)
	}
}

func TestReplayCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, sum bytes.Buffer
	err := Run(ctx, strings.NewReader("{}\n"), &out, &sum, examplePolicies())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run on a cancelled context: %v", err)
	}
}

func FuzzParseEvent(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(examples, "conversation.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f.Add(l)
	}
	f.Add(`{"type":"voice","id":"v","channel_id":"c","speaker_id":"s","duration_ms":1e3,"ts":"2026-11-21T10:00:00Z"}`)
	f.Add(`{"type":"message","id":"1","channel_id":"c","guild_id":"g","bot_nickname":"İlkay 🤖","author_id":"u","content":"İLKAY, selam","ts":"2026-11-21T10:00:00Z"}`)
	f.Add(`{"type":"voice","id":"v","channel_id":"c","guild_id":"g","bot_nickname":"ok","speaker_id":"s","transcript":"ok","ts":"2026-11-21T10:00:00Z"}`)
	f.Add(`{"type":"message","id":"1","channel_id":"c","bot_nickname":"Jarvis","author_id":"u","ts":"2026-11-21T10:00:00Z"}`)
	f.Fuzz(func(t *testing.T, line string) {
		ev, err := ParseEvent([]byte(line))
		if err != nil {
			return
		}
		if ev.Type == TypeBot {
			if ev.Name == "" {
				t.Fatalf("accepted a bot switch without a name: %+v", ev)
			}
		} else if ev.ID == "" || ev.ChannelID == "" || ev.TS.IsZero() || (ev.Type != TypeMessage && ev.Type != TypeVoice) ||
			(ev.BotNickname != "" && ev.GuildID == "") {
			t.Fatalf("accepted an invalid event: %+v", ev)
		}
		// Whatever parses must replay without panicking.
		var out, sum bytes.Buffer
		if err := Run(context.Background(), strings.NewReader(line), &out, &sum, examplePolicies()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRunFile(t *testing.T) {
	var out, sum bytes.Buffer
	if err := RunFile(context.Background(), filepath.Join(t.TempDir(), "missing.jsonl"), nil, &out, &sum, examplePolicies()); err == nil ||
		!strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
	in := `{"type":"message","id":"1","channel_id":"c1","author_id":"u1","content":"banter, hi","ts":"2026-11-21T10:00:00Z"}`
	if err := RunFile(context.Background(), "-", strings.NewReader(in), &out, &sum, examplePolicies()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"reason":"name_address"`) {
		t.Errorf("stdin replay: %s", out.String())
	}
}
