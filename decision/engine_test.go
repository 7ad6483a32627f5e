package decision

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// scripted is a classifier that answers from a script and counts calls.
// It stands in for the model: the engine only sees raw text answers.
type scripted struct {
	answers []string // one per attempt; the last repeats
	err     error    // returned instead, when set
	block   bool     // wait for the context to end
	calls   atomic.Int32
	lastReq atomic.Pointer[ClassifierRequest]
}

func (s *scripted) Classify(ctx context.Context, req ClassifierRequest) (string, error) {
	n := int(s.calls.Add(1))
	s.lastReq.Store(&req)
	switch {
	case s.block:
		<-ctx.Done()
		return "", fmt.Errorf("scripted: %w", ctx.Err())
	case s.err != nil:
		return "", s.err
	}
	return s.answers[min(n, len(s.answers))-1], nil
}

var _ Classifier = (*scripted)(nil)

type textCase struct {
	name       string
	policy     func(*TextPolicy)
	turn       TextTurn
	classifier *scripted
	want       Reason
	outcome    Outcome
	signal     Signal
	force      bool
	calls      int
}

func textPolicy() TextPolicy {
	p := DefaultTextPolicy("banter")
	p.Aliases = []string{"bant"}
	p.AllowInitiativeReplies = true
	p.InitiativeChannelIDs = []string{"init"}
	return p
}

func textTurn(channel, content string) TextTurn {
	return TextTurn{MessageID: "m1", ChannelID: channel, AuthorID: "u1", AuthorName: "alice", Content: content, At: t0}
}

func withClassifier(p *TextPolicy) {
	p.DirectAddress = ClassifierPolicy{Enabled: true, Model: "judge", MaxAttempts: 2, Timeout: 20 * time.Millisecond}
}

func textCases() []textCase {
	mod := func(tt TextTurn, f func(*TextTurn)) TextTurn { f(&tt); return tt }
	talking := textTurn("c1", "I asked banter yesterday about the deploy")
	return []textCase{
		{name: "own message", turn: mod(textTurn("init", "hello"), func(t *TextTurn) { t.IsSelf = true }),
			want: ReasonOwnMessage, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "other bot", turn: mod(textTurn("init", "banter, hi"), func(t *TextTurn) { t.IsBot = true }),
			want: ReasonBotAuthor, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "command", turn: mod(textTurn("c1", "pirates"), func(t *TextTurn) { t.Command = true }),
			want: ReasonCommand, outcome: OutcomeAllow, signal: SignalDirect, force: true},
		{name: "mention", turn: mod(textTurn("c1", "<@42> what do you think?"), func(t *TextTurn) { t.MentionsBot = true }),
			want: ReasonDirectMention, outcome: OutcomeAllow, signal: SignalDirect, force: true},
		{name: "reply to bot", turn: mod(textTurn("c1", "really?"), func(t *TextTurn) { t.ReplyToBot = true }),
			want: ReasonReplyToBot, outcome: OutcomeAllow, signal: SignalDirect, force: true},
		{name: "name", turn: textTurn("c1", "hey banter, what's the weather like today?"),
			want: ReasonNameAddress, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "name with initiative off", policy: func(p *TextPolicy) { p.AllowInitiativeReplies = false },
			turn: textTurn("c1", "banter, tell us a joke"), want: ReasonNameAddress, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "alias", turn: textTurn("c1", "bant, you there?"),
			want: ReasonAliasAddress, outcome: OutcomeAllow, signal: SignalNameAlias, force: true},
		{name: "guild nickname", policy: func(p *TextPolicy) { p.AnswerToNickname = true },
			turn: mod(textTurn("c1", "jarvis, what's up?"), func(t *TextTurn) { t.GuildID, t.BotNickname = "g1", "Jarvis" }),
			want: ReasonNicknameAddress, outcome: OutcomeAllow, signal: SignalNameNickname, force: true},
		{name: "addressed never stale", turn: mod(textTurn("c1", "banter, still there?"), func(t *TextTurn) {
			t.Phase, t.NewerMessages, t.Now = PhasePreGeneration, 50, t0.Add(time.Hour)
		}), want: ReasonNameAddress, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "stale by messages", turn: mod(textTurn("init", "anyone watching the game?"), func(t *TextTurn) {
			t.Phase, t.NewerMessages = PhasePreGeneration, 10
		}), want: ReasonRoomMovedOn, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "stale by age", turn: mod(textTurn("init", "anyone watching the game?"), func(t *TextTurn) {
			t.Phase, t.Now = PhasePreGeneration, t0.Add(3*time.Minute)
		}), want: ReasonRoomMovedOn, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "fresh at pre-generation", turn: mod(textTurn("init", "anyone watching the game?"), func(t *TextTurn) {
			t.Phase, t.NewerMessages, t.Now = PhasePreGeneration, 9, t0.Add(10*time.Second)
		}), want: ReasonInitiativeChannel, outcome: OutcomeAllow, signal: SignalLLMDecides},
		{name: "quiet hours deny an initiative turn", turn: mod(textTurn("init", "anyone watching the game?"), func(t *TextTurn) { t.QuietHours = true }),
			want: ReasonQuietHours, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "quiet hours keep a name address", turn: mod(textTurn("init", "banter, you up?"), func(t *TextTurn) { t.QuietHours = true }),
			want: ReasonNameAddress, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "initiative disabled", policy: func(p *TextPolicy) { p.AllowInitiativeReplies = false },
			turn: textTurn("init", "anyone watching the game?"), want: ReasonInitiativeDisabled, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "initiative channel", turn: textTurn("init", "anyone watching the game?"),
			want: ReasonInitiativeChannel, outcome: OutcomeAllow, signal: SignalLLMDecides},
		{name: "initiative eagerness 0", policy: func(p *TextPolicy) { p.ReplyLevelInitiative = 0 },
			turn: textTurn("init", "anyone watching the game?"), want: ReasonEagernessDisabled, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "recent bot activity", turn: mod(textTurn("c1", "and what about tomorrow?"), func(t *TextTurn) {
			t.BotLastSpokeAt = t0.Add(-time.Minute)
		}), want: ReasonRecentBotActivity, outcome: OutcomeAllow, signal: SignalLLMDecides},
		{name: "recent but level 0", policy: func(p *TextPolicy) { p.ReplyLevelNonInitiative = 0 },
			turn: mod(textTurn("c1", "and what about tomorrow?"), func(t *TextTurn) { t.BotLastSpokeAt = t0.Add(-time.Minute) }),
			want: ReasonEagernessDisabled, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "bot spoke long ago", turn: mod(textTurn("c1", "and what about tomorrow?"), func(t *TextTurn) {
			t.BotLastSpokeAt = t0.Add(-6 * time.Minute)
		}), want: ReasonNotAddressed, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "not addressed", turn: textTurn("c1", "anyone watching the game?"),
			want: ReasonNotAddressed, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "talking about, no classifier", turn: talking, want: ReasonNotAddressed, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "substring", policy: withClassifier, turn: textTurn("c1", "we were bantering all night"),
			want: ReasonNotAddressed, outcome: OutcomeDeny, signal: SignalLLMDecides},
		{name: "talking about, classifier missing", policy: withClassifier, turn: talking,
			want: ReasonNeedsClassifier, outcome: OutcomePending, signal: SignalLLMDecides},
		{name: "talking about in initiative channel skips classifier", policy: withClassifier, classifier: &scripted{answers: []string{"1"}},
			turn: textTurn("init", "I asked banter yesterday"), want: ReasonInitiativeChannel, outcome: OutcomeAllow, signal: SignalLLMDecides},
		{name: "classifier confident", policy: withClassifier, classifier: &scripted{answers: []string{"0.93"}}, turn: talking,
			want: ReasonLLMDirectAddress, outcome: OutcomeAllow, signal: SignalLLMDirectAddress, calls: 1},
		{name: "classifier not confident", policy: withClassifier, classifier: &scripted{answers: []string{"0.2"}}, turn: talking,
			want: ReasonLLMNo, outcome: OutcomeDeny, signal: SignalLLMDecides, calls: 1},
		{name: "classifier unclear then sure", policy: withClassifier, classifier: &scripted{answers: []string{"hmm", "85%"}}, turn: talking,
			want: ReasonLLMDirectAddress, outcome: OutcomeAllow, signal: SignalLLMDirectAddress, calls: 2},
		{name: "classifier unclear", policy: withClassifier, classifier: &scripted{answers: []string{"maybe"}}, turn: talking,
			want: ReasonClassifierUnclear, outcome: OutcomeDeny, signal: SignalLLMDecides, calls: 2},
		{name: "classifier error", policy: withClassifier, classifier: &scripted{err: errors.New("boom: 500")}, turn: talking,
			want: ReasonClassifierError, outcome: OutcomeDeny, signal: SignalLLMDecides, calls: 2},
		{name: "classifier timeout", policy: withClassifier, classifier: &scripted{block: true}, turn: talking,
			want: ReasonClassifierTimeout, outcome: OutcomeDeny, signal: SignalLLMDecides, calls: 2},
	}
}

func TestTextStageA(t *testing.T) {
	for _, tc := range textCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := textPolicy()
			if tc.policy != nil {
				tc.policy(&p)
			}
			var o EngineOptions
			if tc.classifier != nil {
				o.Classifier = tc.classifier
			}
			e := NewTextEngine(p, o)
			turn := tc.turn
			d := e.Decide(context.Background(), &turn)
			if d.Reason != tc.want || d.Outcome != tc.outcome || d.Signal != tc.signal || d.Force != tc.force {
				t.Fatalf("got %v/%v signal %v force %v, want %v/%v signal %v force %v",
					d.Outcome, d.Reason, d.Signal, d.Force, tc.outcome, tc.want, tc.signal, tc.force)
			}
			if d.Pipeline != PipelineText || d.Stage != StageA || d.TurnID != "m1" || d.ChannelID != turn.ChannelID {
				t.Errorf("context fields wrong: %+v", d)
			}
			if d.DirectAddressed != (d.Signal != SignalLLMDecides) {
				t.Errorf("DirectAddressed %v with signal %v", d.DirectAddressed, d.Signal)
			}
			if tc.classifier != nil {
				if got := int(tc.classifier.calls.Load()); got != tc.calls {
					t.Errorf("classifier calls = %d, want %d", got, tc.calls)
				}
				if tc.calls > 0 && (d.ClassifierModel != "judge" || d.ClassifierAttempts != tc.calls) {
					t.Errorf("classifier fields: model %q attempts %d", d.ClassifierModel, d.ClassifierAttempts)
				}
			}
			// The deterministic part agrees whenever no classifier is involved.
			if tc.calls == 0 {
				if a := e.Admit(&turn); a != d {
					t.Errorf("Admit = %+v, Decide = %+v", a, d)
				}
			}
		})
	}
}

type voiceCase struct {
	name       string
	policy     func(*VoicePolicy)
	turn       VoiceTurn
	classifier *scripted
	want       Reason
	outcome    Outcome
	signal     Signal
	force      bool
	calls      int
}

func voicePolicy() VoicePolicy {
	p := DefaultVoicePolicy("banter")
	p.Classifier = ClassifierPolicy{Enabled: true, Model: "judge", MaxAttempts: 2, Timeout: 20 * time.Millisecond}
	return p
}

func voiceTurn(transcript string) VoiceTurn {
	return VoiceTurn{ID: "v1", ChannelID: "vc1", SpeakerID: "u1", SpeakerName: "alice", Transcript: transcript,
		Duration: 1400 * time.Millisecond, At: t0,
		Participants: []Participant{{ID: "u1", Name: "alice"}, {ID: "u2", Name: "Mike"}}}
}

func voiceCases() []voiceCase {
	mod := func(vt VoiceTurn, f func(*VoiceTurn)) VoiceTurn { f(&vt); return vt }
	focused := func(vt VoiceTurn, ago time.Duration) VoiceTurn {
		vt.Engagement.FocusedSpeakerID, vt.Engagement.FocusedAt = "u1", t0.Add(-ago)
		return vt
	}
	replied := func(vt VoiceTurn, ago time.Duration) VoiceTurn {
		vt.Engagement.LastReplyToID, vt.Engagement.LastReplyAt = "u1", t0.Add(-ago)
		return vt
	}
	pizza := voiceTurn("what do you think about pineapple on pizza? and be honest")
	noClassifier := func(p *VoicePolicy) { p.Classifier.Enabled = false }
	return []voiceCase{
		{name: "empty transcript", turn: voiceTurn(""), want: ReasonMissingTranscript, outcome: OutcomeDeny},
		{name: "punctuation only", turn: voiceTurn(" ... ?! "), want: ReasonMissingTranscript, outcome: OutcomeDeny},
		{name: "bot speaking", turn: mod(voiceTurn("hey banter, what's the weather like today?"), func(t *VoiceTurn) {
			t.Engagement.BotSpeaking = true
		}), want: ReasonBotTurnOpen, outcome: OutcomeDefer},
		{name: "filler", turn: voiceTurn("uh huh"), want: ReasonLowSignalFragment, outcome: OutcomeDeny},
		{name: "long filler", turn: voiceTurn("yeah yeah okay sure, right"), want: ReasonLowSignalFragment, outcome: OutcomeDeny},
		{name: "short fragment", turn: voiceTurn("nice one mate"), want: ReasonLowSignalFragment, outcome: OutcomeDeny},
		{name: "backchannel after reply", turn: replied(voiceTurn("uh huh"), 2*time.Second), want: ReasonLowSignalFragment, outcome: OutcomeDeny},
		{name: "wake ping", turn: voiceTurn("hey banter"), want: ReasonWakePing, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "bare name question", turn: voiceTurn("Banter?"), want: ReasonWakePing, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "fast path", turn: voiceTurn("hey banter, what's the weather like today?"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "fast path joke", turn: voiceTurn("banter, tell us a joke"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "fast path stop", turn: voiceTurn("banter, stop talking please"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "fast path ASR variant", turn: voiceTurn("hey banner, what's the weather"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "fast path alias", policy: func(p *VoicePolicy) { p.Aliases = []string{"bant"} }, turn: voiceTurn("yo bant, are you there"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameAlias, force: true},
		{name: "fast path nickname", policy: func(p *VoicePolicy) { p.AnswerToNickname = true },
			turn: mod(voiceTurn("hey jarvis, what's the weather like"), func(t *VoiceTurn) { t.GuildID, t.BotNickname = "g1", "Jarvis" }),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameNickname, force: true},
		{name: "aimed at mike", turn: voiceTurn("mike, can you hear me?"), want: ReasonAddressedToOther, outcome: OutcomeDeny},
		{name: "aimed at mike while focused", turn: focused(voiceTurn("mike, can you hear me?"), 2*time.Second),
			want: ReasonAddressedToOther, outcome: OutcomeDeny},
		{name: "focused follow-up", turn: focused(voiceTurn("and what about tomorrow then"), 5*time.Second),
			want: ReasonFocusedSpeaker, outcome: OutcomeAllow},
		{name: "recent reply follow-up", turn: replied(voiceTurn("tell me more about that one"), 3*time.Second),
			want: ReasonRecentReplyFollowup, outcome: OutcomeAllow},
		{name: "short answer after reply", turn: replied(voiceTurn("yes please"), 3*time.Second),
			want: ReasonRecentReplyFollowup, outcome: OutcomeAllow},
		{name: "eagerness 0", policy: func(p *VoicePolicy) { p.ReplyEagerness = 0 }, turn: pizza,
			want: ReasonEagernessDisabled, outcome: OutcomeDeny},
		{name: "eagerness 0, talking about", policy: func(p *VoicePolicy) { p.ReplyEagerness = 0 }, turn: voiceTurn("that's just banter, man"),
			want: ReasonEagernessDisabled, outcome: OutcomeDeny},
		{name: "eagerness 0, borderline look-alike goes to the classifier", policy: func(p *VoicePolicy) { p.ReplyEagerness = 0 },
			turn: voiceTurn("banner over there needs fixing"), want: ReasonNeedsClassifier, outcome: OutcomePending},
		{name: "eagerness 0, borderline look-alike, classifier says yes", policy: func(p *VoicePolicy) { p.ReplyEagerness = 0 },
			classifier: &scripted{answers: []string{"YES"}}, turn: voiceTurn("banner over there needs fixing"),
			want: ReasonLLMYes, outcome: OutcomeAllow, calls: 1},
		{name: "eagerness 0, borderline look-alike, classifier off", policy: func(p *VoicePolicy) { p.ReplyEagerness = 0; p.Classifier.Enabled = false },
			turn: voiceTurn("banner over there needs fixing"), want: ReasonEagernessDisabled, outcome: OutcomeDeny},
		{name: "asr variant at the start, then a question", turn: voiceTurn("banta can you hear me"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "name closing a question", turn: voiceTurn("can you hear me banter"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "a participant's name that looks like ours", turn: mod(voiceTurn("hey Bender, pass the salt"), func(vt *VoiceTurn) {
			vt.Participants = append(vt.Participants, Participant{ID: "u3", Name: "Bender"})
		}), want: ReasonAddressedToOther, outcome: OutcomeDeny},
		{name: "a look-alike that is nobody's name", turn: voiceTurn("hey Bender, pass the salt"),
			want: ReasonDirectAddressFastPath, outcome: OutcomeAllow, signal: SignalNameExact, force: true},
		{name: "name as a noun", turn: voiceTurn("ok so banter aside are we playing tonight"),
			want: ReasonNeedsClassifier, outcome: OutcomePending},
		{name: "eagerness 0, focus expired", policy: func(p *VoicePolicy) { p.ReplyEagerness = 0 },
			turn: focused(voiceTurn("and what about tomorrow then"), 30*time.Second), want: ReasonEagernessDisabled, outcome: OutcomeDeny},
		{name: "classifier off", policy: noClassifier, turn: pizza, want: ReasonEagerTurn, outcome: OutcomeAllow},
		{name: "classifier missing", turn: pizza, want: ReasonNeedsClassifier, outcome: OutcomePending},
		{name: "classifier yes", classifier: &scripted{answers: []string{"YES"}}, turn: pizza,
			want: ReasonLLMYes, outcome: OutcomeAllow, calls: 1},
		{name: "classifier no", classifier: &scripted{answers: []string{"no."}}, turn: voiceTurn("can you pass me the banner"),
			want: ReasonLLMNo, outcome: OutcomeDeny, calls: 1},
		{name: "talking about asks classifier", classifier: &scripted{answers: []string{"No"}}, turn: voiceTurn("that's just banter, man"),
			want: ReasonLLMNo, outcome: OutcomeDeny, calls: 1},
		{name: "classifier unclear", classifier: &scripted{answers: []string{"I think so"}}, turn: pizza,
			want: ReasonClassifierUnclear, outcome: OutcomeDeny, calls: 2},
		{name: "classifier error", classifier: &scripted{err: errors.New("status 500")}, turn: pizza,
			want: ReasonClassifierError, outcome: OutcomeDeny, calls: 2},
		{name: "classifier timeout", classifier: &scripted{block: true}, turn: pizza,
			want: ReasonClassifierTimeout, outcome: OutcomeDeny, calls: 2},
		{name: "classifier one attempt", policy: func(p *VoicePolicy) { p.Classifier.MaxAttempts = 1 },
			classifier: &scripted{answers: []string{"?", "YES"}}, turn: pizza, want: ReasonClassifierUnclear, outcome: OutcomeDeny, calls: 1},
	}
}

func TestVoiceStageA(t *testing.T) {
	for _, tc := range voiceCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := voicePolicy()
			if tc.policy != nil {
				tc.policy(&p)
			}
			var o EngineOptions
			if tc.classifier != nil {
				o.Classifier = tc.classifier
			}
			e := NewVoiceEngine(p, o)
			turn := tc.turn
			d := e.Decide(context.Background(), &turn)
			signal := tc.signal
			if signal == SignalUnknown {
				signal = SignalLLMDecides
			}
			if d.Reason != tc.want || d.Outcome != tc.outcome || d.Signal != signal || d.Force != tc.force {
				t.Fatalf("got %v/%v signal %v force %v, want %v/%v signal %v force %v",
					d.Outcome, d.Reason, d.Signal, d.Force, tc.outcome, tc.want, signal, tc.force)
			}
			if d.Pipeline != PipelineVoice || d.Stage != StageA || d.TurnID != "v1" || d.UserID != "u1" {
				t.Errorf("context fields wrong: %+v", d)
			}
			if d.EagerTurn != (d.Reason == ReasonEagerTurn) {
				t.Errorf("EagerTurn = %v for %v", d.EagerTurn, d.Reason)
			}
			if (d.Outcome == OutcomeDefer) != (d.RetryAfter > 0) {
				t.Errorf("outcome %v with RetryAfter %v", d.Outcome, d.RetryAfter)
			}
			if tc.classifier != nil {
				if got := int(tc.classifier.calls.Load()); got != tc.calls {
					t.Errorf("classifier calls = %d, want %d", got, tc.calls)
				}
			}
		})
	}
}

func TestEveryReasonCovered(t *testing.T) {
	seen := map[Reason]bool{}
	for _, tc := range textCases() {
		seen[tc.want] = true
	}
	for _, tc := range voiceCases() {
		seen[tc.want] = true
	}
	for _, tc := range replyCases() {
		seen[tc.reason] = true
	}
	// budget_cap is decided by the voice pipeline, not the engine: voice's TestVoiceQuietAtCap.
	seen[ReasonBudgetCap] = true
	// server_muted likewise: voice's TestServerMutedBotStaysQuiet.
	seen[ReasonServerMuted] = true
	for _, r := range Reasons() {
		if !seen[r] {
			t.Errorf("reason %v has no table test", r)
		}
		if back, ok := ParseReason(r.String()); !ok || back != r {
			t.Errorf("ParseReason(%q) = %v, %v", r.String(), back, ok)
		}
	}
}

func TestDeferRetryAfter(t *testing.T) {
	e := NewVoiceEngine(voicePolicy(), EngineOptions{})
	turn := voiceTurn("banter, tell us a joke")
	turn.Engagement.BotSpeaking = true
	if d := e.Admit(&turn); d.RetryAfter != DefaultDeferRetryAfter {
		t.Errorf("unknown speech end: RetryAfter %v, want %v", d.RetryAfter, DefaultDeferRetryAfter)
	}
	turn.Engagement.BotSpeechEndsAt = t0.Add(2300 * time.Millisecond)
	if d := e.Admit(&turn); d.RetryAfter != 2300*time.Millisecond || d.Outcome != OutcomeDefer {
		t.Errorf("known speech end: %v %v, want defer 2.3s", d.Outcome, d.RetryAfter)
	}
}

func TestEngagement(t *testing.T) {
	e := NewVoiceEngine(voicePolicy(), EngineOptions{})
	var g Engagement
	turn := voiceTurn("banter, tell us a joke")
	d := e.Admit(&turn)
	g.Observe(d, &turn)
	if g.FocusedSpeakerID != "u1" || !g.FocusedAt.Equal(t0) {
		t.Fatalf("after direct address: %+v", g)
	}
	g.BotReplied("u1", t0.Add(4*time.Second))
	next := voiceTurn("and another one about cats")
	next.At = t0.Add(20 * time.Second)
	next.Engagement = g
	if d := e.Admit(&next); d.Reason != ReasonFocusedSpeaker {
		t.Errorf("follow-up 16s after the reply: %v, want %v", d.Reason, ReasonFocusedSpeaker)
	}
	next.At = t0.Add(60 * time.Second)
	if d := e.Admit(&next); d.Reason != ReasonNeedsClassifier {
		t.Errorf("a minute later: %v, want %v", d.Reason, ReasonNeedsClassifier)
	}
	// Denied decisions leave the focus alone.
	other := voiceTurn("mike, can you hear me?")
	other.SpeakerID = "u2"
	g.Observe(e.Admit(&other), &other)
	if g.FocusedSpeakerID != "u1" {
		t.Errorf("focus moved on a denied turn: %+v", g)
	}
}

func TestSetPolicyHotReload(t *testing.T) {
	e := NewVoiceEngine(voicePolicy(), EngineOptions{})
	turn := voiceTurn("what do you think about pineapple on pizza? and be honest")
	if d := e.Admit(&turn); d.Reason != ReasonNeedsClassifier {
		t.Fatalf("before: %v", d.Reason)
	}
	p := e.Policy()
	p.ReplyEagerness = 0
	e.SetPolicy(p)
	if d := e.Admit(&turn); d.Reason != ReasonEagernessDisabled {
		t.Errorf("after reload: %v", d.Reason)
	}
}

func TestClassifierPrompts(t *testing.T) {
	c := &scripted{answers: []string{"YES"}}
	p := voicePolicy()
	p.ReplyEagerness = 90
	e := NewVoiceEngine(p, EngineOptions{Classifier: c})
	turn := voiceTurn("can you pass me the banter thing")
	turn.Timeline = []ContextLine{{Speaker: "mike", Text: "who wants pizza"}, {Text: "I do!", Bot: true}}
	turn.Engagement.LastReplyToID, turn.Engagement.LastReplyAt = "u2", t0.Add(-40*time.Second)
	e.Decide(context.Background(), &turn)
	req := c.lastReq.Load()
	if req == nil {
		t.Fatal("classifier not called")
	}
	for _, want := range []string{"alice", "Mike", "who wants pizza", "[banter (you)] I do!", "can you pass me the banter thing",
		"last replied to Mike, 40s ago", "90/100", `contains "banter"`} {
		if !contains(req.User, want) {
			t.Errorf("user prompt lacks %q:\n%s", want, req.User)
		}
	}
	if !contains(req.System, ClassifierBias(90)) || req.Purpose != PurposeReplyDecision || req.Model != "judge" {
		t.Errorf("system prompt/purpose/model wrong: %+v", req)
	}
}

func contains(s, sub string) bool { return indexFold(s, sub) >= 0 }

// The speech fixtures (copied from the shared corpus's INDEX.tsv) are what
// the voice pipeline's end-to-end tests speak; this pins what Stage A makes
// of their transcripts, with mike in the channel and no classifier wired.
func TestSpeechFixtureTranscripts(t *testing.T) {
	data, err := os.ReadFile("testdata/speech_index.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Reason{
		"hey-banter-weather.wav": ReasonDirectAddressFastPath,
		"banter-joke.wav":        ReasonDirectAddressFastPath,
		"hey-banner-weather.wav": ReasonDirectAddressFastPath,
		"pass-the-banner.wav":    ReasonNeedsClassifier,
		"mike-hear-me.wav":       ReasonAddressedToOther,
		"uh-huh.wav":             ReasonLowSignalFragment,
		"thats-just-banter.wav":  ReasonNeedsClassifier,
		"long-story.wav":         ReasonNeedsClassifier,
		"banter-stop.wav":        ReasonDirectAddressFastPath,
		"two-questions.wav":      ReasonNeedsClassifier,
	}
	e := NewVoiceEngine(voicePolicy(), EngineOptions{})
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("bad index line %q", line)
		}
		w, ok := want[f[0]]
		if !ok {
			t.Errorf("no expectation for fixture %s (%q)", f[0], f[2])
			continue
		}
		seen++
		turn := voiceTurn(f[2])
		if d := e.Admit(&turn); d.Reason != w {
			t.Errorf("%s %q: %v, want %v", f[0], f[2], d.Reason, w)
		}
		if m := e.MatchName("", "", f[2]); m.Addressed() != (w == ReasonDirectAddressFastPath) {
			t.Errorf("%s: MatchName addressed = %v", f[0], m.Addressed())
		}
	}
	if seen != len(want) {
		t.Errorf("saw %d fixtures, want %d", seen, len(want))
	}
}

// FuzzStageA feeds arbitrary text through both engines, prompts included.
func FuzzStageA(f *testing.F) {
	for _, s := range []string{"hey banter, what's the weather like today?", "hey banner", "mike, can you hear me?", "uh huh",
		"<:banter:1> https://banter.io", "banter's", "", "?", "\xff\xfebanter", "Zoë, banter… ok"} {
		f.Add(s)
	}
	c := &scripted{answers: []string{"0.5"}}
	tp := textPolicy()
	withClassifier(&tp)
	te := NewTextEngine(tp, EngineOptions{Classifier: c})
	ve := NewVoiceEngine(voicePolicy(), EngineOptions{Classifier: c})
	f.Fuzz(func(t *testing.T, s string) {
		tt := textTurn("c1", s)
		vt := voiceTurn(s)
		vt.Timeline = []ContextLine{{Speaker: "mike", Text: s}}
		for _, d := range []Decision{te.Admit(&tt), te.Decide(context.Background(), &tt), ve.Admit(&vt), ve.Decide(context.Background(), &vt)} {
			if d.Reason == ReasonUnknown || d.Outcome == OutcomeUnknown || d.Confidence < 0 || d.Confidence > 1 {
				t.Fatalf("decision for %q: %+v", s, d)
			}
			if d.Force && !d.Signal.HighCertainty() {
				t.Fatalf("forced with signal %v for %q", d.Signal, s)
			}
		}
	})
}

// TestDirectAddressPromptIsBounded: the classifier prompt carries the recent lines (at most
// maxPromptLines, each clipped) and the judged message, clipped too, so a long message cannot
// make a cheap call expensive.
func TestDirectAddressPromptIsBounded(t *testing.T) {
	p := textPolicy()
	withClassifier(&p)
	c := &scripted{answers: []string{"0.1"}}
	e := NewTextEngine(p, EngineOptions{Classifier: c})
	turn := textTurn("c1", "I asked banter yesterday "+strings.Repeat("and then ", 500))
	for i := range 20 {
		turn.Recent = append(turn.Recent, ContextLine{Speaker: "bob", Text: fmt.Sprintf("line %d %s", i, strings.Repeat("x", 1000))})
	}
	if d := e.Decide(context.Background(), &turn); d.Reason != ReasonLLMNo {
		t.Fatalf("reason = %v, want llm_no", d.Reason)
	}
	req := c.lastReq.Load()
	if req == nil {
		t.Fatal("classifier not asked")
	}
	if !strings.Contains(req.User, "line 19 ") || strings.Contains(req.User, "line 7 ") {
		t.Errorf("prompt does not hold exactly the newest %d lines:\n%s", maxPromptLines, req.User)
	}
	if !strings.Contains(req.User, "I asked banter yesterday") || !strings.Contains(req.User, `"banter"`) {
		t.Errorf("prompt lacks the judged message or the name:\n%s", req.User)
	}
	if limit := maxPromptLines*(maxPromptLineBytes+20) + maxJudgedBytes + 400; len(req.User) > limit {
		t.Errorf("prompt is %d bytes, want at most %d", len(req.User), limit)
	}
}
