package decision

import (
	"strings"
	"testing"
)

type replyCase struct {
	name    string
	in      string
	want    string
	skipped bool
	reason  Reason
}

func replyCases() []replyCase {
	return []replyCase{
		{"plain", "Sunny, 21 degrees.", "Sunny, 21 degrees.", false, ReasonModelReplied},
		{"trimmed", "  hi there \n", "hi there", false, ReasonModelReplied},
		{"exact", "[SKIP]", "", true, ReasonLLMSkip},
		{"exact spaced", "  [SKIP]\n", "", true, ReasonLLMSkip},
		{"lower case", "[skip]", "", true, ReasonLLMSkip},
		{"quoted", "`[SKIP]`", "", true, ReasonLLMSkip},
		{"bare word", "SKIP", "", true, ReasonLLMSkip},
		{"trailing", "They are talking among themselves. [SKIP]", "", true, ReasonLLMSkip},
		{"leading", "[SKIP] not for me", "", true, ReasonLLMSkip},
		{"structured", `{"skip": true, "reason": "not addressed"}`, "", true, ReasonLLMSkip},
		{"loose structured", "skip: true", "", true, ReasonLLMSkip},
		{"loose braces", "{skip:true}", "", true, ReasonLLMSkip},
		{"loose false", "skip: false", "skip: false", false, ReasonModelReplied},
		{"structured fence", "```json\n{\"skip\":true}\n```", "", true, ReasonLLMSkip},
		{"structured reply", `{"skip": false, "text": "Sure, here you go."}`, "Sure, here you go.", false, ReasonModelReplied},
		{"structured empty", `{"skip": false}`, "", true, ReasonEmptyReply},
		{"json without skip", `{"a": 1}`, `{"a": 1}`, false, ReasonModelReplied},
		{"embedded sentinel", "Well [SKIP] maybe I will answer: yes.", "Well  maybe I will answer: yes.", false, ReasonModelReplied},
		{"word skip in text", "Skip the intro and read chapter 2.", "Skip the intro and read chapter 2.", false, ReasonModelReplied},
		{"empty", "", "", true, ReasonEmptyReply},
		{"whitespace", " \n\t ", "", true, ReasonEmptyReply},
	}
}

func TestParseReply(t *testing.T) {
	for _, tc := range replyCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, skipped, reason := ParseReply(tc.in)
			if got != tc.want || skipped != tc.skipped || reason != tc.reason {
				t.Errorf("ParseReply(%q) = %q, %v, %v; want %q, %v, %v", tc.in, got, skipped, reason, tc.want, tc.skipped, tc.reason)
			}
			cleaned, d := ReplyDecision(PipelineText, tc.in, true)
			if cleaned != tc.want || d.Skipped() != tc.skipped || d.Reason != tc.reason || !d.Force || d.Stage != StageB {
				t.Errorf("ReplyDecision: %q %+v", cleaned, d)
			}
			wantEvent := EventReplyAccepted
			if tc.skipped {
				wantEvent = EventReplySkipped
			}
			if d.Event() != wantEvent {
				t.Errorf("event %q, want %q", d.Event(), wantEvent)
			}
		})
	}
}

func TestStreamFilter(t *testing.T) {
	tests := []struct {
		name   string
		deltas []string
		want   string
		reason Reason
	}{
		{"plain", []string{"Hello", " there.", " How are you?"}, "Hello there. How are you?", ReasonModelReplied},
		{"skip split", []string{" [S", "KI", "P]"}, "", ReasonLLMSkip},
		{"skip then text", []string{"[SKIP]", " sorry"}, "", ReasonLLMSkip},
		{"structured skip", []string{`{"sk`, `ip": true}`}, "", ReasonLLMSkip},
		{"structured text", []string{`{"skip": false, `, `"text": "Yes!"}`}, "Yes!", ReasonModelReplied},
		{"trailing sentinel dropped", []string{"Nice one.", " [SK", "IP]"}, "Nice one.", ReasonModelReplied},
		{"bracket that is not a sentinel", []string{"See [1", "] for more"}, "See [1] for more", ReasonModelReplied},
		{"empty", []string{"", "  "}, "", ReasonEmptyReply},
		{"partial sentinel at end", []string{"ok [SK"}, "ok [SK", ReasonModelReplied},
		// A sentinel whose removal closes an outer one: the outer "[" must
		// not be released before the text after the inner one is seen.
		{"nested sentinel cut in the inner one", []string{"[[SK", "IP]SKIP]"}, "", ReasonEmptyReply},
		{"nested sentinel after text", []string{"Sure [", "[SKIP]", "SKIP] thing"}, "Sure  thing", ReasonModelReplied},
		{"three deep one byte at a time", strings.Split("ok [[[SKIP]SKIP]SKIP]!", ""), "ok !", ReasonModelReplied},
		{"nested prefixes then plain text", []string{"a [[S[SK", " b"}, "a [[S[SK b", ReasonModelReplied},
		{"nested lower case", []string{"x [[s", "kip]Skip] y"}, "x  y", ReasonModelReplied},
		{"bracket run closed late", []string{"[[[ ", "[SKIP] z"}, "[[[  z", ReasonModelReplied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f StreamFilter
			var b strings.Builder
			for _, d := range tc.deltas {
				b.WriteString(f.Push(d))
			}
			rest, reason := f.Finish()
			b.WriteString(rest)
			if got := strings.TrimSpace(b.String()); got != tc.want || reason != tc.reason {
				t.Errorf("got %q, %v; want %q, %v", got, reason, tc.want, tc.reason)
			}
			if indexFold(b.String(), SkipSentinel) >= 0 {
				t.Errorf("sentinel leaked: %q", b.String())
			}
		})
	}
}

func TestStreamFilterHoldsOnlyWhileUndecided(t *testing.T) {
	var f StreamFilter
	if got := f.Push("["); got != "" {
		t.Fatalf("'[' released early: %q", got)
	}
	if got := f.Push("Note] the first"); got != "[Note] the first" {
		t.Errorf("after deciding: %q", got)
	}
	if got := f.Push(" chunk"); got != " chunk" {
		t.Errorf("later chunk held back: %q", got)
	}
}

func TestParseYesNo(t *testing.T) {
	tests := []struct {
		in   string
		want YesNo
	}{
		{"YES", AnswerYes}, {"yes", AnswerYes}, {"Yes.", AnswerYes}, {"**YES**", AnswerYes}, {"\"No\"", AnswerNo},
		{"NO", AnswerNo}, {"no, they are talking to Mike", AnswerNo}, {"Answer: YES", AnswerYes},
		{"Yes, because they asked.", AnswerYes}, {"yes or no", AnswerUnclear}, {"maybe", AnswerUnclear},
		{"", AnswerUnclear}, {"I think yes", AnswerUnclear}, {"Nope", AnswerUnclear}, {"yesterday", AnswerUnclear},
	}
	for _, tc := range tests {
		if got := ParseYesNo(tc.in); got != tc.want {
			t.Errorf("ParseYesNo(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseConfidence(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.93", 0.93, true}, {"  1", 1, true}, {"0", 0, true}, {"85%", 0.85, true}, {"85", 0.85, true},
		{"Confidence: 0.4", 0.4, true}, {"YES", 1, true}, {"no", 0, true}, {"maybe", 0, false},
		{"250", 0, false}, {"...", 0, false}, {"0.8.", 0.8, true}, {"NO.", 0, true}, {"Yes.", 1, true}, {".75", 0.75, true}, {"1.", 1, true}, {"Confidence: 0.85 (high).", 0.85, true},
		{"1.5", 0, false}, {"12.5%", 0.125, true}, {"99.0", 0, false},
	}
	for _, tc := range tests {
		got, ok := ParseConfidence(tc.in)
		if ok != tc.ok || (ok && (got < tc.want-1e-9 || got > tc.want+1e-9)) {
			t.Errorf("ParseConfidence(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseConfidence feeds arbitrary classifier answers (model output):
// an accepted answer is a probability in [0,1], never NaN.
func FuzzParseConfidence(f *testing.F) {
	for _, s := range []string{"0.93", "85%", "YES", "no", "Confidence: 0.85 (high).", "1e308", "NaN", "Inf%",
		"0.0000000000000000000000001", "100%", "100.000001%", "..5", "5..", "9" + strings.Repeat("9", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseConfidence(s)
		if ok && !(v >= 0 && v <= 1) {
			t.Fatalf("ParseConfidence(%q) = %v, accepted", s, v)
		}
		if !ok && v != 0 {
			t.Fatalf("ParseConfidence(%q) rejected but returned %v", s, v)
		}
	})
}

func FuzzParseReply(f *testing.F) {
	for _, tc := range replyCases() {
		f.Add(tc.in)
	}
	f.Add("[SKIP][SKIP]")
	f.Add("[[SKIP]SKIP]")
	f.Fuzz(func(t *testing.T, s string) {
		got, skipped, reason := ParseReply(s)
		if skipped && got != "" {
			t.Fatalf("skipped with text %q", got)
		}
		if !skipped && (got == "" || reason != ReasonModelReplied) {
			t.Fatalf("kept reply %q with reason %v", got, reason)
		}
		if strings.Contains(strings.ToUpper(got), SkipSentinel) {
			t.Fatalf("sentinel survived in %q (from %q)", got, s)
		}
	})
}

func FuzzParseYesNo(f *testing.F) {
	for _, s := range []string{"YES", "no.", "yes or no", "Answer: NO", "**yes**", "", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := ParseYesNo(s)
		if a == AnswerYes && ParseYesNo(s) != AnswerYes {
			t.Fatal("not deterministic")
		}
		c, ok := ParseConfidence(s)
		if ok && (c < 0 || c > 1) {
			t.Fatalf("confidence %v out of range for %q", c, s)
		}
		if a != AnswerUnclear && !strings.ContainsAny(s, "0123456789") && (!ok || (c == 1) != (a == AnswerYes)) {
			t.Fatalf("ParseYesNo(%q) = %v but ParseConfidence = %v, %v", s, a, c, ok)
		}
	})
}

func FuzzStreamFilter(f *testing.F) {
	for _, tc := range replyCases() {
		f.Add(tc.in, uint8(3))
	}
	f.Add("Nice one. [SK"+"IP]", uint8(12))
	f.Add("[[SKIP]SKIP] hi", uint8(1))
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		k := min(int(cut), len(s))
		var fl StreamFilter
		out := fl.Push(s[:k]) + fl.Push(s[k:])
		rest, reason := fl.Finish()
		out += rest
		// The sentinel is matched in ASCII case folding (indexFold).
		if indexFold(out, SkipSentinel) >= 0 {
			t.Fatalf("sentinel leaked from %q (cut %d): %q", s, k, out)
		}
		if reason != ReasonModelReplied && strings.TrimSpace(out) != "" {
			t.Fatalf("reason %v but text %q from %q", reason, out, s)
		}
		if hasPrefixFold(strings.TrimLeft(s, " \t\r\n\"'`*_"), SkipSentinel) && reason != ReasonLLMSkip {
			t.Fatalf("leading sentinel in %q gave %v", s, reason)
		}
		// One byte at a time: every cut at once.
		var bf StreamFilter
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteString(bf.Push(s[i : i+1]))
		}
		rest, _ = bf.Finish()
		b.WriteString(rest)
		if indexFold(b.String(), SkipSentinel) >= 0 {
			t.Fatalf("sentinel leaked from %q fed bytewise: %q", s, b.String())
		}
	})
}

// BenchmarkStreamFilterBracketRun streams a reply of 4000 "[" a byte at a
// time, all of which must be held (each could still close into a sentinel):
// the work per delta is the delta's, not the held tail's.
func BenchmarkStreamFilterBracketRun(b *testing.B) {
	for b.Loop() {
		var f StreamFilter
		f.Push("ok ")
		for range 4000 {
			f.Push("[")
		}
		f.Finish()
	}
}

// TestStageBFollowsStageA: Stage B's decision keeps its own verdict and says how its turn was
// addressed (Stage A's signal and confidence), so reply_accepted no longer logs confidence 0 for a
// turn the classifier admitted at 0.9.
func TestStageBFollowsStageA(t *testing.T) {
	a := Decision{Pipeline: PipelineText, Stage: StageA, Outcome: OutcomeAllow, Reason: ReasonLLMDirectAddress,
		Signal: SignalLLMDirectAddress, Confidence: 0.9, DirectAddressed: true, Eagerness: 40, TurnID: "t1", ChannelID: "c1", UserID: "u1"}
	for _, tt := range []struct {
		reply       string
		wantOutcome Outcome
	}{
		{"sure thing", OutcomeAllow},
		{"[SKIP]", OutcomeDeny},
	} {
		_, own := ReplyDecision(PipelineText, tt.reply, true)
		own.TurnID = "own"
		b := own.Following(a)
		if b.Stage != StageB || b.Outcome != tt.wantOutcome || b.Reason != own.Reason || !b.Force {
			t.Errorf("%q: stage %v outcome %v reason %v force %v, want Stage B's own (%v, %v, forced)", tt.reply, b.Stage, b.Outcome, b.Reason, b.Force, tt.wantOutcome, own.Reason)
		}
		if b.Signal != a.Signal || b.Confidence != 0.9 || !b.DirectAddressed || b.Eagerness != 40 {
			t.Errorf("%q: addressing %v %v %v %v, want Stage A's", tt.reply, b.Signal, b.Confidence, b.DirectAddressed, b.Eagerness)
		}
		if b.TurnID != "own" || b.ChannelID != "c1" || b.UserID != "u1" {
			t.Errorf("%q: ids %q %q %q, want own turn id and Stage A's channel and user", tt.reply, b.TurnID, b.ChannelID, b.UserID)
		}
	}
}
