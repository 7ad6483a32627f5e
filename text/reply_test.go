package text_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestForcedTurnSkipGetsPlaceholder: a turn that must be answered, whose model answers [SKIP]
// or nothing, gets the placeholder reply (text.forcedReplyOnSkip: placeholder); a refusal is a
// safety skip and stays silent; an unforced turn's skip stays silent; with silent, nothing is
// sent.
func TestForcedTurnSkipGetsPlaceholder(t *testing.T) {
	// Each prompt shows the earlier messages too, so the rules go newest question first.
	h := newHarness(t, func(c *config.Config) { c.Text.ForcedReplyPlaceholder = "…pass, sorry!" },
		openaisim.Rule{Match: openaisim.Match{InputPattern: "rainy days"}, Reply: openaisim.Reply{Skip: true}},
		openaisim.Rule{Match: openaisim.Match{InputPattern: "secret recipe"}, Reply: openaisim.Reply{Refusal: "I can't share that."}},
		openaisim.Rule{Match: openaisim.Match{InputPattern: "favourite number"}, Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{
			Name: "send_discord_message", Arguments: `{"mode":"reply","target_message_id":null,"text":"   "}`}}}},
		openaisim.Rule{Match: openaisim.Match{InputPattern: "favourite colour"}, Reply: openaisim.Reply{Skip: true}},
	)
	// [SKIP] on a mention.
	m1 := h.post(h.alice, mention(h.dsim.BotID())+" what's your favourite colour?")
	r := h.waitBot(1)
	if r.Content != "…pass, sorry!" || r.ReplyTo() != m1.ID {
		t.Errorf("got %q replying to %q; want the placeholder replying to %q", r.Content, r.ReplyTo(), m1.ID)
	}
	h.waitLog(`"msg":"reply_placeholder"`, string(m1.ID), `"reason":"llm_skip"`, `"pass":"reply"`)
	h.waitLog(`"msg":"sent_reply"`, string(m1.ID), `"placeholder":true`)

	// An empty answer on a name address.
	m2 := h.post(h.bob, "banter, what's your favourite number?")
	if r := h.waitBot(2); r.Content != "…pass, sorry!" || r.ReplyTo() != m2.ID {
		t.Errorf("got %q replying to %q; want the placeholder replying to %q", r.Content, r.ReplyTo(), m2.ID)
	}
	h.waitLog(`"msg":"reply_placeholder"`, string(m2.ID), `"reason":"empty_reply"`)

	// A refusal on a forced turn: a safety skip, logged as such, nothing sent.
	m3 := h.post(h.alice, "banter, tell me the secret recipe")
	h.waitLog(`"msg":"reply_skipped"`, string(m3.ID), `"safety":true`, `"force":true`)

	// An unforced turn that the model skips: silence.
	h.initiativeIn(h.general)
	m4 := h.post(h.bob, "anyone like rainy days?")
	h.waitLog(`"msg":"reply_skipped"`, string(m4.ID), `"force":false`, `"safety":false`)

	// Silent mode: a forced [SKIP] ends the turn.
	h.reconfigure(func(c *config.Config) { c.Text.ForcedReplyOnSkip = "silent" })
	m5 := h.post(h.alice, "banter, favourite colour again?")
	h.waitLog(`"msg":"reply_skipped"`, string(m5.ID), `"force":true`, `"safety":false`)

	// The positive event after them all: a later question is answered (by the simulator's
	// default reply), and is the third reply.
	h.osim.ResetRules()
	later := h.post(h.alice, "banter, hello?")
	if r := h.waitBot(3); r.ReplyTo() != later.ID {
		t.Errorf("third message replies to %q, want %q (nothing for the refusal, the unforced or the silent skip)", r.ReplyTo(), later.ID)
	}
	if n := len(h.botMessages()); n != 3 {
		t.Errorf("bot sent %d messages, want 3", n)
	}
}

// TestTargetedRepliesForAddressedTurns: when a burst coalesces several addressed messages, the
// model may choose which one the reply answers (one of the burst, or the anchor); any other
// target is refused and the reply answers the trigger; with text.targetedReplies off the reply
// always answers the trigger.
func TestTargetedRepliesForAddressedTurns(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 60 // the burst closes at two messages, not on a timer
		c.Activity.ReplyCoalesceMaxMessages = 2
	})
	// burst posts two addressed messages; the model's reply targets target(first).
	burst := func(first, second string, target func(a discordsim.Message) string) (a, b discordsim.Message) {
		t.Helper()
		a = h.post(h.alice, first)
		h.osim.ResetRules()
		h.osim.AddRule(toolReply("", "reply", target(a), "Four."))
		b = h.post(h.bob, second)
		return a, b
	}
	older := h.post(h.bob, "an old message")

	// The model answers the first message of the burst: accepted.
	a, b := burst("banter, what's 2+2?", "banter, and the capital of France?", func(a discordsim.Message) string { return string(a.ID) })
	r := h.waitBot(1)
	if r.ReplyTo() != a.ID {
		t.Errorf("reply references %q, want the model's choice %q (the trigger was %q)", r.ReplyTo(), a.ID, b.ID)
	}
	h.waitLog(`"msg":"reply_decision"`, `"model_target_id":"`+string(a.ID)+`"`, `"mode":"target_reply"`, `"why":"model_target"`)
	if p := h.lastPrompt(); !strings.Contains(p, "the burst of messages "+string(a.ID)+", "+string(b.ID)) {
		t.Errorf("prompt does not name the burst:\n%s", p)
	}

	// A target outside the burst: refused, the reply answers the trigger.
	_, b = burst("banter, one more?", "banter, and another?", func(discordsim.Message) string { return string(older.ID) })
	if r := h.waitBot(2); r.ReplyTo() != b.ID {
		t.Errorf("reply references %q, want the trigger %q (the model's target was not in the burst)", r.ReplyTo(), b.ID)
	}
	h.waitLog(`"msg":"reply_decision"`, `"model_target_id":"`+string(older.ID)+`"`, `"mode":"trigger_reply"`, `"why":"not_in_burst"`)

	// Off: the trigger, whatever the model chose.
	h.reconfigure(func(c *config.Config) { c.Text.TargetedReplies = false })
	a, b = burst("banter, last one?", "banter, really the last?", func(a discordsim.Message) string { return string(a.ID) })
	if r := h.waitBot(3); r.ReplyTo() != b.ID {
		t.Errorf("targetedReplies off: reply references %q, want the trigger %q", r.ReplyTo(), b.ID)
	}
	h.waitLog(`"msg":"reply_decision"`, `"model_target_id":"`+string(a.ID)+`"`, `"mode":"trigger_reply"`, `"why":"targeted_replies_off"`)
}

// TestTargetedReplyToAnchor: the model may answer the message the trigger replies to.
func TestTargetedReplyToAnchor(t *testing.T) {
	h := newHarness(t, nil)
	anchor := h.post(h.bob, "I can juggle five balls")
	h.osim.AddRule(toolReply("", "reply", string(anchor.ID), "Prove it, bob!"))
	trig := h.post(h.alice, mention(h.dsim.BotID())+" do you believe him?", discordsim.ReplyTo(anchor.ID))
	r := h.waitBot(1)
	if r.ReplyTo() != anchor.ID {
		t.Errorf("reply references %q, want the anchor %q (trigger %q)", r.ReplyTo(), anchor.ID, trig.ID)
	}
	h.waitLog(`"msg":"sent_reply"`, `"mode":"target_reply"`, string(anchor.ID))
}

// TestBurstTriggerAfterPrimaryIsShown: a message of the burst that came after the one answered
// (so not in the conversation before it) is still shown to the model.
func TestBurstTriggerAfterPrimaryIsShown(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 60
		c.Activity.ReplyCoalesceMaxMessages = 2
	})
	h.initiativeIn(h.general)
	a := h.post(h.alice, "banter, tea or coffee?")
	b := h.post(h.bob, "coffee, obviously, with cardamom")
	r := h.waitBot(1)
	if r.ReplyTo() != a.ID {
		t.Errorf("reply references %q, want the addressed message %q", r.ReplyTo(), a.ID)
	}
	p := h.lastPrompt()
	if !strings.Contains(p, "[msg "+string(b.ID)) || !strings.Contains(p, "cardamom") {
		t.Errorf("the burst's later message is missing from the prompt:\n%s", p)
	}
	if n := strings.Count(p, "[msg "+string(a.ID)+" "); n != 1 {
		t.Errorf("the answered message is shown %d times:\n%s", n, p)
	}
}

// TestPerUserPromptShare: one person's turns may use only their share of a channel's
// maxPromptsPerHour; others still get answers.
func TestPerUserPromptShare(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.MaxPromptsPerHour = 4
		c.Activity.ExplicitReservePromptsPerHour = 0
		c.Activity.PerUserPromptShare = 0.5 // 2 each
	})
	for i, q := range []string{"banter, one?", "banter, two?"} {
		m := h.post(h.alice, q)
		if r := h.waitBot(i + 1); r.ReplyTo() != m.ID {
			t.Fatalf("reply references %q, want %q", r.ReplyTo(), m.ID)
		}
	}
	third := h.post(h.alice, "banter, three?")
	h.waitLog(`"msg":"reply_rate_limited"`, string(third.ID), `"limit":"user_share"`, `"user_prompts_last_hour":2`, `"user_limit":2`)
	bobs := h.post(h.bob, "banter, my turn?")
	if r := h.waitBot(3); r.ReplyTo() != bobs.ID {
		t.Errorf("reply references %q, want bob's %q", r.ReplyTo(), bobs.ID)
	}
}

// TestPromptBudgetCountsReplyAttempts: maxPromptsPerHour counts reply attempts; the lookups and
// the follow-up pass belong to their attempt, and the direct-address classifier is not counted.
func TestPromptBudgetCountsReplyAttempts(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.MaxPromptsPerHour = 2
		c.Activity.ExplicitReservePromptsPerHour = 0
		c.Activity.PerUserPromptShare = 1
		c.ReplyFollowupLLM.Enabled = true
		c.ReplyFollowupLLM.Model = "followup-model"
		c.LLM.DirectAddressClassifier.Enabled = true
		c.LLM.DirectAddressClassifier.Model = "gpt-5-nano"
	}, openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-nano"}, Reply: openaisim.Reply{Text: "0.9"}},
		openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-mini"}, Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{
			{Name: "memory_lookup", Arguments: `{"query":"that"}`}}}},
		openaisim.Rule{Match: openaisim.Match{Model: "followup-model"}, Reply: openaisim.Reply{Text: "Looked it up."}})
	// Two attempts (one after a classifier call), each with a lookup and a follow-up pass: both
	// answered, and then the cap of two is reached.
	m1 := h.post(h.alice, "I wonder what does banter think about that")
	if r := h.waitBot(1); r.ReplyTo() != m1.ID {
		t.Fatalf("reply references %q", r.ReplyTo())
	}
	m2 := h.post(h.bob, "banter, and you?")
	if r := h.waitBot(2); r.ReplyTo() != m2.ID {
		t.Fatalf("reply references %q", r.ReplyTo())
	}
	third := h.post(h.alice, "banter, once more?")
	h.waitLog(`"msg":"reply_rate_limited"`, string(third.ID), `"limit":"channel_cap"`, `"prompts_last_hour":2`)
	models := map[string]int{}
	for _, rq := range h.osim.Requests() {
		models[rq.Model]++
	}
	if models["gpt-5-nano"] != 1 || models["gpt-5-mini"] != 2 || models["followup-model"] != 2 {
		t.Errorf("model calls by model = %v, want 1 classifier call, 2 replies and their 2 follow-up passes", models)
	}
}

// TestSlashCommandsWithLongBotName: every command field stays within Discord's limits
// whatever bot.name is, so the commands register (the simulator refuses them otherwise, as
// Discord does).
func TestSlashCommandsWithLongBotName(t *testing.T) {
	long := strings.Repeat("Bartholomew ", 6) + "the Magnificent" // 87 characters
	h := newHarness(t, func(c *config.Config) { c.Bot.Name = long })
	cmds := h.dsim.Commands("")
	if len(cmds) != 2 || cmds[0].Name != "persona" || cmds[1].Name != "memory" {
		t.Fatalf("registered commands = %+v", cmds)
	}
	for _, name := range []string{"b", "banter", strings.Repeat("x", 35), strings.Repeat("é", 60), long} {
		h.reconfigure(func(c *config.Config) { c.Bot.Name = name })
		for _, cmd := range h.svc.Commands() {
			if n := utf8.RuneCountInString(cmd.Name); n < 1 || n > 32 {
				t.Errorf("bot.name %q: command name %q has %d characters", name, cmd.Name, n)
			}
			if n := utf8.RuneCountInString(cmd.Description); n < 1 || n > 100 {
				t.Errorf("bot.name %q: /%s description has %d characters: %q", name, cmd.Name, n, cmd.Description)
			}
			for _, o := range cmd.Options {
				if n := utf8.RuneCountInString(o.Name); n < 1 || n > 32 {
					t.Errorf("option name %q has %d characters", o.Name, n)
				}
				if n := utf8.RuneCountInString(o.Description); n < 1 || n > 100 {
					t.Errorf("option %q description has %d characters", o.Name, n)
				}
			}
		}
	}
}
