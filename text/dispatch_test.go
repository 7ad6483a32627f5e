package text_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
)

func TestTargetDeletedMeanwhileDowngradesToBroadcast(t *testing.T) {
	h := newHarness(t, nil)
	target := h.post(h.bob, "anyone up for chess later?")
	h.waitLog(`"msg":"reply_admission"`, string(target.ID), `"allow":false`)
	h.initiativeIn(h.general)
	// The model takes its time; meanwhile bob deletes the message it will reply to.
	h.osim.AddRule(openaisim.Rule{
		Match:   openaisim.Match{InputPattern: "chess"},
		Reply:   openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "send_discord_message", Arguments: `{"mode":"reply","target_message_id":"` + string(target.ID) + `","text":"I'd play!"}`}}},
		Latency: openaisim.Latency{TimeToFirstToken: 2 * time.Second},
	})
	started := len(h.osim.Requests())
	h.post(h.alice, "chess sounds fun")
	// The generation is under way (the simulator holds its answer for 2 s) before the delete.
	if _, err := h.osim.WaitRequestsStarted(h.ctx, started+1); err != nil {
		t.Fatal(err)
	}
	if err := h.dsim.Delete(h.ctx, target.ID); err != nil {
		t.Fatal(err)
	}
	r := h.waitBot(1)
	if r.Reference != nil || !strings.HasSuffix(r.Content, "\nI'd play!") || !strings.Contains(r.Content, "deleted, sorry") {
		t.Errorf("got %+v, want a plain message with an apology, then the text", r)
	}
	h.waitLog(`"msg":"sent_message"`, `"fallback":"target_deleted"`)
	if got := h.metric("banter_text_fallbacks_total", map[string]string{"reason": "target_deleted"}); got != 1 {
		t.Errorf("banter_text_fallbacks_total{reason=target_deleted} = %v, want 1", got)
	}
}

func TestMassMentionsNeverPing(t *testing.T) {
	h := newHarness(t, nil, toolReply("announce", "reply", "", "@everyone @here <@&123> listen up!"))
	h.post(h.alice, "banter, announce something")
	r := h.waitBot(1)
	if r.MentionEveryone || len(r.MentionRoles) > 0 {
		t.Errorf("model text pinged: everyone=%v roles=%v", r.MentionEveryone, r.MentionRoles)
	}
	if r.AllowedMentions == nil || len(r.AllowedMentions.Parse) != 0 {
		t.Errorf("allowed_mentions = %+v", r.AllowedMentions)
	}
	if strings.Contains(r.Content, "@everyone") || strings.Contains(r.Content, "@here") {
		t.Errorf("mass mention left intact in %q", r.Content)
	}
}

func TestPingRepliedUserFollowsConfig(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Permissions.PingRepliedUser = false })
	h.post(h.alice, "banter, hi")
	r := h.waitBot(1)
	if r.AllowedMentions == nil || r.AllowedMentions.RepliedUser {
		t.Errorf("allowed_mentions = %+v, want replied_user false", r.AllowedMentions)
	}
}

func TestBanWordsInAndOut(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Safety.BanWords = []string{"frobnitz"} },
		toolReply("gadget", "reply", "", "The frobnitz is a fine gadget."))
	in := h.post(h.alice, "banter, say frobnitz")
	h.waitLog(`"msg":"message_ignored"`, `"reason":"ban_word"`, string(in.ID))
	h.post(h.alice, "banter, what's your favourite gadget?")
	r := h.waitBot(1)
	// A reply that trips the filter is replaced by the configured canned response, never sent
	// with the word starred.
	if r.Content != config.DefaultFilteredReplyText {
		t.Errorf("reply holding a ban word sent as %q, want the canned %q", r.Content, config.DefaultFilteredReplyText)
	}
	h.waitLog(`"msg":"sent_reply"`, `"filtered":true`)
	h.reconfigure(func(c *config.Config) { c.Safety.FilteredReplyText = "I'd better not say that." })
	h.post(h.alice, "banter, and your favourite gadget now?")
	if r := h.waitBot(2); r.Content != "I'd better not say that." {
		t.Errorf("after a reload: %q, want the new canned response", r.Content)
	}
	if n := len(h.generations()); n != 2 {
		t.Errorf("%d model calls, want 2 (the banned message must not reach the model)", n)
	}
}

func TestRateLimitKeepsReserveForAddressedTurns(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.MaxPromptsPerHour = 3
		c.Activity.ExplicitReservePromptsPerHour = 2
	})
	h.initiativeIn(h.general)
	h.post(h.alice, "nice weather today") // initiative: uses the one unreserved prompt
	h.waitBot(1)
	ambient := h.post(h.alice, "really nice") // initiative again: only the reserve is left
	h.waitLog(`"msg":"reply_rate_limited"`, string(ambient.ID))
	h.post(h.alice, "banter, what do you think?") // addressed: may use the reserve
	h.waitBot(2)
	h.post(h.bob, "banter, and you?")
	h.waitBot(3)
	last := h.post(h.bob, "banter, one more?") // cap reached for everyone
	h.waitLog(`"msg":"reply_rate_limited"`, string(last.ID), `"addressed":true`)
	if n := len(h.botMessages()); n != 3 {
		t.Errorf("bot sent %d messages, want 3", n)
	}
}

func TestDiscord429IsRetried(t *testing.T) {
	h := newHarness(t, nil)
	h.dsim.RateLimitNext(discordsim.RouteAny, 1, 200*time.Millisecond, false)
	m := h.post(h.alice, "banter, are you there?")
	r := h.waitBot(1)
	if r.ReplyTo() != m.ID {
		t.Errorf("reply references %q", r.ReplyTo())
	}
}

func TestModelFailuresApologizeToAddressedUser(t *testing.T) {
	tests := []struct {
		name  string
		fault openaisim.Fault
	}{
		{"500", openaisim.Fault{Status: http.StatusInternalServerError}},
		{"timeout", openaisim.Fault{Timeout: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *config.Config) { c.LLM.TimeoutSeconds = 1 },
				openaisim.Rule{Match: openaisim.Match{InputPattern: "joke"}, Fault: tt.fault})
			m := h.post(h.alice, "banter, tell me a joke")
			r := h.waitBot(1)
			if r.ReplyTo() != m.ID || !strings.Contains(r.Content, "Sorry") {
				t.Errorf("got %q (reply to %q), want an apology replying to the trigger", r.Content, r.ReplyTo())
			}
			h.waitLog(`"msg":"reply_failed"`, string(m.ID))

			// An unaddressed turn that fails is logged, not apologised for: the next message
			// sent is the apology to a later addressed turn (which fails too: its prompt shows
			// the joke).
			h.initiativeIn(h.general)
			u := h.post(h.bob, "I know a joke too")
			h.waitLog(`"msg":"reply_failed"`, string(u.ID))
			later := h.post(h.alice, "banter, hello?")
			if r := h.waitBot(2); r.ReplyTo() != later.ID {
				t.Errorf("second message replies to %q, want the apology to %q", r.ReplyTo(), later.ID)
			}
			if n := len(h.botMessages()); n != 2 {
				t.Errorf("bot sent %d messages, want two apologies", n)
			}
		})
	}
}

func TestLongRepliesSplitAtBoundaries(t *testing.T) {
	long := strings.Repeat("This sentence is part of a very long answer. ", 70) // ~3150 chars
	h := newHarness(t, nil, toolReply("essay", "reply", "", long))
	m := h.post(h.alice, "banter, write an essay")
	first := h.waitBot(1)
	second := h.waitBot(2)
	if first.ReplyTo() != m.ID || second.Reference != nil {
		t.Errorf("first part should reply, the rest post: %q / %q", first.ReplyTo(), second.ReplyTo())
	}
	for _, p := range []discordsim.Message{first, second} {
		if n := len([]rune(p.Content)); n > 2000 || !strings.HasSuffix(p.Content, ".") {
			t.Errorf("part of %d chars not cut at a sentence end: …%q", n, p.Content[max(0, len(p.Content)-20):])
		}
	}
}

func TestUnknownPersonaCommand(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.alice, "!banter(ninja) hello")
	r := h.waitBot(1)
	if !strings.Contains(r.Content, "ninja") || !strings.Contains(r.Content, "pirate") {
		t.Errorf("unknown persona answer = %q", r.Content)
	}
	if n := len(h.generations()); n != 0 {
		t.Errorf("%d model calls for an unknown persona", n)
	}
}
