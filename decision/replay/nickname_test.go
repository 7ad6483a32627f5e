package replay

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/banterbot/banter/decision"
)

// TestReplayNickname: a recorded turn carries its guild and the bot's nickname there, so a
// replay of a turn addressed by nickname decides as the live bot did (nickname_address in
// text, the fast path with name_nickname in voice), the same words in another guild do not
// address the bot, the reply prompt names the nickname, and a nickname without a guild is a
// bad line.
func TestReplayNickname(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"message","id":"1","channel_id":"c1","guild_id":"g1","bot_nickname":"Jarvis 🤖","author_id":"u1","author_name":"alice","content":"jarvis, what's up?","ts":"2026-11-21T10:00:00Z"}`,
		`{"type":"message","id":"2","channel_id":"c9","guild_id":"g2","author_id":"u1","author_name":"alice","content":"jarvis, what's up?","ts":"2026-11-21T10:00:01Z"}`,
		`{"type":"voice","id":"v1","channel_id":"vc1","guild_id":"g1","bot_nickname":"Jarvis","speaker_id":"u2","speaker_name":"bob","transcript":"hey jarvis, what's the weather like","duration_ms":1500,"ts":"2026-11-21T10:00:02Z"}`,
		`{"type":"message","id":"3","channel_id":"c1","bot_nickname":"Jarvis","author_id":"u1","content":"jarvis?","ts":"2026-11-21T10:00:03Z"}`,
	}, "\n")
	opts := examplePolicies()
	opts.Text.AnswerToNickname, opts.Voice.AnswerToNickname = true, true
	opts.Text.AllowInitiativeReplies = false
	var mu sync.Mutex
	var systems []string
	opts.Generator = GeneratorFunc(func(_ context.Context, system, _ string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		systems = append(systems, system)
		return "sure", nil
	})
	var out, sum bytes.Buffer
	if err := Run(context.Background(), strings.NewReader(in), &out, &sum, opts); err != nil {
		t.Fatal(err)
	}
	results := decodeResults(t, out.String())
	want := map[string]struct {
		allow  string
		reason decision.Reason
		signal decision.Signal
	}{
		"1":  {"true", decision.ReasonNicknameAddress, decision.SignalNameNickname},
		"2":  {"false", decision.ReasonInitiativeDisabled, decision.SignalLLMDecides},
		"v1": {"true", decision.ReasonDirectAddressFastPath, decision.SignalNameNickname},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d:\n%s", len(results), len(want), out.String())
	}
	for _, r := range results {
		w := want[r.ID]
		if allowString(r.Allow) != w.allow || r.Reason != w.reason.String() || r.Signal != w.signal.String() {
			t.Errorf("%s: allow %s reason %s signal %s; want %s %v %v", r.ID, allowString(r.Allow), r.Reason, r.Signal, w.allow, w.reason, w.signal)
		}
	}
	if !strings.Contains(sum.String(), "line 4: skipped:") || !strings.Contains(sum.String(), "bot_nickname \"Jarvis\" without guild_id") {
		t.Errorf("a nickname without a guild is not reported as a bad line:\n%s", sum.String())
	}
	if len(systems) != 2 {
		t.Fatalf("%d generations, want 2 (the admitted turns)", len(systems))
	}
	for _, s := range systems {
		if !strings.Contains(s, `In this server you are called "Jarvis"`) {
			t.Errorf("reply prompt does not name the nickname:\n%s", s)
		}
	}
}
