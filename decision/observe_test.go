package decision

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

func decodeLog(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestDecideLogsAndCounts(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	c := &scripted{answers: []string{"NO"}}
	ve := NewVoiceEngine(voicePolicy(), EngineOptions{Classifier: c, Logger: logger, Metrics: m})
	te := NewTextEngine(textPolicy(), EngineOptions{Logger: logger, Metrics: m})

	vt := voiceTurn("can you pass me the banner")
	ve.Decide(context.Background(), &vt, slog.String("guildId", "g1"))
	tt := textTurn("c1", "hey banter, what's the weather like today?")
	te.Decide(context.Background(), &tt)
	_, sd := ReplyDecision(PipelineText, "[SKIP]", true)
	(&Recorder{Logger: logger, Metrics: m}).Record(context.Background(), sd)

	logs := decodeLog(t, &buf)
	if len(logs) != 3 {
		t.Fatalf("%d log events, want 3:\n%s", len(logs), buf.String())
	}
	v := logs[0]
	for k, want := range map[string]any{
		"msg": EventVoiceTurnAddressing, "allow": false, "reason": "llm_no", "directAddressed": false, "pipeline": "voice",
		"classifierModel": "judge", "classifierRaw": "NO", "classifierAttempts": 1.0, "turnId": "v1", "userId": "u1", "guildId": "g1",
		"signal": "llm_decides", "confidence": 0.0,
	} {
		if v[k] != want {
			t.Errorf("voice event %s = %v, want %v", k, v[k], want)
		}
	}
	x := logs[1]
	for k, want := range map[string]any{"msg": EventReplyAdmission, "allow": true, "reason": "name_address", "signal": "name_exact",
		"force": true, "directAddressed": true, "phase": "enqueue", "confidence": 0.95} {
		if x[k] != want {
			t.Errorf("text event %s = %v, want %v", k, x[k], want)
		}
	}
	if _, ok := x["classifierModel"]; ok {
		t.Error("classifier fields logged without a classifier call")
	}
	if s := logs[2]; s["msg"] != EventReplySkipped || s["reason"] != "llm_skip" || s["stage"] != "B" {
		t.Errorf("stage B event: %v", s)
	}

	got := map[string]float64{}
	var histograms int
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, metric := range mf.GetMetric() {
			switch mf.GetName() {
			case "banter_decisions_total":
				var labels []string
				for _, l := range metric.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				got[strings.Join(labels, ",")] = metric.GetCounter().GetValue()
			case "banter_decision_classifier_duration_seconds":
				histograms += int(metric.GetHistogram().GetSampleCount())
			}
		}
	}
	want := map[string]float64{
		"outcome=allow,pipeline=text,reason=name_address,stage=A": 1,
		"outcome=deny,pipeline=text,reason=llm_skip,stage=B":      1,
		"outcome=deny,pipeline=voice,reason=llm_no,stage=A":       1,
	}
	if len(got) != len(want) {
		t.Errorf("counters %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("banter_decisions_total{%s} = %v, want %v", k, got[k], v)
		}
	}
	if histograms != 1 {
		t.Errorf("classifier duration samples: %d, want 1", histograms)
	}
}

func TestNilObservers(t *testing.T) {
	var m *Metrics
	m.Observe(Decision{Pipeline: PipelineText})
	var r *Recorder
	r.Record(context.Background(), Decision{})
	Decision{}.Log(context.Background(), nil)
	(&Recorder{}).Record(context.Background(), Decision{Pipeline: PipelineVoice, ClassifierAttempts: 1})
	NewMetrics(nil).Observe(Decision{ClassifierAttempts: 2, ClassifierLatency: time.Second})
}

func TestEnginesConcurrent(t *testing.T) {
	te := NewTextEngine(textPolicy(), EngineOptions{Metrics: NewMetrics(prometheus.NewRegistry())})
	ve := NewVoiceEngine(voicePolicy(), EngineOptions{Classifier: &scripted{answers: []string{"YES"}}})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 200 {
				tt := textTurn("init", "anyone up?")
				te.Decide(context.Background(), &tt)
				vt := voiceTurn("what do you think about pineapple on pizza?")
				ve.Decide(context.Background(), &vt)
				if j%50 == 0 {
					p := te.Policy()
					p.ReplyLevelInitiative = (i * 30) % 100
					te.SetPolicy(p)
				}
			}
		})
	}
	wg.Wait()
}

func TestGuidance(t *testing.T) {
	bands := []struct {
		level int
		band  EagernessBand
	}{{-5, BandOff}, {0, BandOff}, {1, BandReserved}, {20, BandReserved}, {21, BandLow}, {50, BandBalanced},
		{61, BandChatty}, {80, BandChatty}, {81, BandEager}, {100, BandEager}, {250, BandEager}}
	seen := map[string]bool{}
	for _, tc := range bands {
		if got := Band(tc.level); got != tc.band {
			t.Errorf("Band(%d) = %v, want %v", tc.level, got, tc.band)
		}
		g, b := EagernessGuidance(tc.level), ClassifierBias(tc.level)
		if g == "" || b == "" || !strings.Contains(g, SkipSentinel) {
			t.Errorf("level %d: guidance %q bias %q", tc.level, g, b)
		}
		seen[g] = true
	}
	if len(seen) != 6 {
		t.Errorf("%d distinct guidance texts, want one per band", len(seen))
	}

	forced := Decision{Outcome: OutcomeAllow, Reason: ReasonReplyToBot, Force: true}
	lines := ForceReplyLines(forced, "alice")
	if len(lines) != 2 || !strings.Contains(lines[0], "alice replied to your message") || !strings.Contains(lines[1], "unsafe") {
		t.Errorf("force lines: %q", lines)
	}
	if ForceReplyLines(Decision{Outcome: OutcomeAllow, Reason: ReasonInitiativeChannel}, "alice") != nil {
		t.Error("force lines for an unforced turn")
	}
	tests := []struct {
		d    Decision
		want string
	}{
		{forced, "You must reply"},
		{Decision{Reason: ReasonLLMDirectAddress, Signal: SignalLLMDirectAddress, DirectAddressed: true}, "probably addressed"},
		{Decision{Reason: ReasonFocusedSpeaker}, "continuing their conversation"},
		{Decision{Reason: ReasonInitiativeChannel, Eagerness: 90}, EagernessGuidance(90)},
		{Decision{Reason: ReasonEagerTurn, Eagerness: 10, EagerTurn: true}, EagernessGuidance(10)},
	}
	for _, tc := range tests {
		if got := Guidance(tc.d, "alice"); !strings.Contains(got, tc.want) {
			t.Errorf("Guidance(%v) = %q, want it to contain %q", tc.d.Reason, got, tc.want)
		}
	}
}

func TestPromptTemplates(t *testing.T) {
	c := &scripted{answers: []string{"yes"}}
	p := voicePolicy()
	p.Classifier.SystemPrompt = "Judge for {{botName}}."
	p.Classifier.UserPrompt = "{{speaker}} said {{transcript}} to {{participants}} at eagerness {{eagerness}}; {{engagement}}"
	e := NewVoiceEngine(p, EngineOptions{Classifier: c})
	vt := voiceTurn("what do you think about pineapple on pizza?")
	if d := e.Decide(context.Background(), &vt); d.Reason != ReasonLLMYes {
		t.Fatalf("reason %v", d.Reason)
	}
	req := c.lastReq.Load()
	want := "alice said what do you think about pineapple on pizza? to alice, Mike at eagerness 30; banter is not in a conversation with anyone."
	if req.User != want {
		t.Errorf("user prompt %q, want %q", req.User, want)
	}
	if !strings.HasPrefix(req.System, "Judge for {{botName}}.\n") || !strings.HasSuffix(req.System, ClassifierBias(30)) {
		t.Errorf("system prompt %q", req.System)
	}

	tc := &scripted{answers: []string{"0.9"}}
	tp := textPolicy()
	withClassifier(&tp)
	tp.DirectAddress.UserPrompt = "{{author}}: {{content}} | {{botName}}"
	te := NewTextEngine(tp, EngineOptions{Classifier: tc})
	tt := textTurn("c1", "I asked banter yesterday")
	if d := te.Decide(context.Background(), &tt); d.Reason != ReasonLLMDirectAddress || d.Confidence != 0.9 {
		t.Fatalf("text decision %+v", d)
	}
	if got := tc.lastReq.Load(); got.User != "alice: I asked banter yesterday | banter" || got.Purpose != PurposeDirectAddress ||
		!strings.Contains(got.System, `named "banter" (also called bant)`) {
		t.Errorf("text classifier request %+v", got)
	}
}

func TestEnumStrings(t *testing.T) {
	if Reason(200).String() != "unknown" || Signal(99).String() != "unknown" || Outcome(42).String() != "unknown" ||
		PipelineUnknown.String() != "unknown" || StageUnknown.String() != "unknown" || PhasePreGeneration.String() != "pre_generation" {
		t.Error("out-of-range enum strings")
	}
	b, _ := ReasonDirectAddressFastPath.MarshalText()
	s, _ := SignalNameAlias.MarshalText()
	o, _ := OutcomePending.MarshalText()
	if string(b) != "direct_address_fast_path" || string(s) != "name_alias" || string(o) != "pending" {
		t.Errorf("MarshalText: %s %s %s", b, s, o)
	}
	for _, sig := range []Signal{SignalDirect, SignalNameExact, SignalNameAlias} {
		if !sig.HighCertainty() {
			t.Errorf("%v not high certainty", sig)
		}
	}
	if SignalLLMDirectAddress.HighCertainty() || SignalLLMDecides.HighCertainty() {
		t.Error("classifier signals must not force a reply")
	}
}

func TestStronger(t *testing.T) {
	deny := Decision{Outcome: OutcomeDeny, Reason: ReasonNotAddressed, Signal: SignalLLMDecides}
	initiative := Decision{Outcome: OutcomeAllow, Reason: ReasonInitiativeChannel, Signal: SignalLLMDecides}
	llm := Decision{Outcome: OutcomeAllow, Reason: ReasonLLMDirectAddress, Signal: SignalLLMDirectAddress, Confidence: 0.9}
	alias := Decision{Outcome: OutcomeAllow, Reason: ReasonAliasAddress, Signal: SignalNameAlias, Force: true, Confidence: 0.95}
	name := Decision{Outcome: OutcomeAllow, Reason: ReasonNameAddress, Signal: SignalNameExact, Force: true, Confidence: 0.8}
	mention := Decision{Outcome: OutcomeAllow, Reason: ReasonDirectMention, Signal: SignalDirect, Force: true, Confidence: 1}
	order := []Decision{deny, initiative, llm, alias, name, mention} // weakest first
	for i := range order {
		for j := range order {
			if got := order[i].Stronger(order[j]); got != (i > j) {
				t.Errorf("%v.Stronger(%v) = %v", order[i].Reason, order[j].Reason, got)
			}
		}
	}
}

func TestClassifierPromptBounded(t *testing.T) {
	c := &scripted{answers: []string{"NO"}}
	e := NewVoiceEngine(voicePolicy(), EngineOptions{Classifier: c})
	vt := voiceTurn("what do you think about pineapple on pizza?")
	for i := range 40 {
		vt.Timeline = append(vt.Timeline, ContextLine{Speaker: "mike", Text: fmt.Sprintf("line %02d %s", i, strings.Repeat("ö", 400))})
	}
	e.Decide(context.Background(), &vt)
	u := c.lastReq.Load().User
	if strings.Contains(u, "line 27") || !strings.Contains(u, "line 28") || !strings.Contains(u, "line 39") {
		t.Errorf("timeline not cut to the newest %d lines", maxPromptLines)
	}
	if len(u) > maxPromptLines*(maxPromptLineBytes+40)+1000 || !utf8.ValidString(u) || !strings.Contains(u, "…") {
		t.Errorf("prompt of %d bytes (valid UTF-8: %v)", len(u), utf8.ValidString(u))
	}
}

// docs/decision.md documents every reason code and log event.
func TestDocsCoverReasons(t *testing.T) {
	doc, err := os.ReadFile("../docs/decision.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Reasons() {
		if !strings.Contains(string(doc), "| `"+r.String()+"` |") {
			t.Errorf("docs/decision.md has no table row for reason %q", r)
		}
	}
	for _, ev := range []string{EventReplyAdmission, EventReplySkipped, EventReplyAccepted, EventVoiceTurnAddressing} {
		if !strings.Contains(string(doc), "`"+ev+"`") {
			t.Errorf("docs/decision.md does not name event %q", ev)
		}
	}
}

func TestDecisionString(t *testing.T) {
	tests := []struct {
		d    Decision
		want string
	}{
		{Decision{Pipeline: PipelineText, Stage: StageA, Outcome: OutcomeAllow, Reason: ReasonNameAddress, Signal: SignalNameExact, Confidence: 0.95, Force: true},
			"text A allow name_address (name_exact 0.95, forced)"},
		{Decision{Pipeline: PipelineVoice, Stage: StageA, Outcome: OutcomeDefer, Reason: ReasonBotTurnOpen, Signal: SignalLLMDecides, RetryAfter: 750 * time.Millisecond},
			"voice A defer bot_turn_open (llm_decides 0.00, retry after 750ms)"},
		{Decision{Pipeline: PipelineVoice, Stage: StageA, Outcome: OutcomeDeny, Reason: ReasonLLMNo, Signal: SignalLLMDecides, ClassifierModel: "nano", ClassifierRaw: "NO", ClassifierAttempts: 1},
			`voice A deny llm_no (llm_decides 0.00, nano said "NO")`},
	}
	for _, tc := range tests {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
