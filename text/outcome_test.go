package text_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// outcomeEvents are the log events that say how a turn ended, one per turn: the logs are
// the source of truth for counting over- and under-replying.
var outcomeEvents = []string{"reply_skipped", "sent_reply", "sent_message"}

// logLines returns the bot's log lines, parsed, whose msg is one of events.
func (h *harness) logLines(events ...string) []map[string]any {
	h.t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			h.t.Fatalf("log line is not JSON: %v: %s", err, line)
		}
		for _, e := range events {
			if m["msg"] == e {
				out = append(out, m)
			}
		}
	}
	return out
}

// outcomesByTurn counts, for each turn id, the outcome lines that name it (in trigger_ids:
// the turns of the attempt), and returns the event of each.
func (h *harness) outcomesByTurn() map[string][]string {
	h.t.Helper()
	out := map[string][]string{}
	for _, l := range h.logLines(outcomeEvents...) {
		ids, _ := l["trigger_ids"].([]any)
		if len(ids) == 0 {
			h.t.Errorf("%s line names no trigger_ids: %v", l["msg"], l)
		}
		for _, id := range ids {
			out[id.(string)] = append(out[id.(string)], l["msg"].(string))
		}
	}
	return out
}

// nextAnswer makes the model's next answers rule r (and nothing older).
func (h *harness) nextAnswer(r openaisim.Rule) {
	h.osim.ResetRules()
	h.osim.AddRule(r)
}

// TestOneOutcomeLinePerTurn: every admitted turn ends in exactly one of reply_skipped,
// sent_reply, sent_message: an unforced skip is not logged twice (the Stage B decision and the
// skip with its latencies), and a forced turn answered with the placeholder is not logged as
// skipped before it is answered. The metrics say the same by value.
func TestOneOutcomeLinePerTurn(t *testing.T) {
	h := newHarness(t, nil)
	h.initiativeIn(h.general)
	type step struct {
		who     discordsim.UserID
		content string
		answer  openaisim.Reply
		want    string
	}
	steps := []step{
		{h.bob, "anyone like rainy days?", openaisim.Reply{Skip: true}, "reply_skipped"},
		{h.alice, mention(h.dsim.BotID()) + " favourite colour?", openaisim.Reply{Skip: true}, "sent_reply"},
		{h.alice, "banter, what's 2+2?", toolCall("broadcast", "", "Four."), "sent_reply"},
		{h.bob, "nice weather though", toolCall("broadcast", "", "It is!"), "sent_message"},
		{h.alice, "banter, are you there?", toolCall("reply", "", "Here."), "sent_reply"},
	}
	h.reconfigure(func(c *config.Config) { c.Activity.InitiativeReplyShare = 1 }) // addressed turns reply
	var ids []string
	for _, s := range steps {
		h.nextAnswer(openaisim.Rule{Reply: s.answer})
		m := h.post(s.who, s.content)
		ids = append(ids, string(m.ID))
		h.waitLog(`"msg":"`+s.want+`"`, string(m.ID))
	}
	// The last turn's outcome is logged after every earlier one (one queue per channel): a
	// second line for an earlier turn would be there by now.
	got := h.outcomesByTurn()
	total := 0
	for i, id := range ids {
		if len(got[id]) != 1 || got[id][0] != steps[i].want {
			t.Errorf("turn %d (%q): outcome lines %v, want exactly [%s]", i, steps[i].content, got[id], steps[i].want)
		}
		total += len(got[id])
	}
	if n := len(h.logLines(outcomeEvents...)); n != len(steps) || total != len(steps) {
		t.Errorf("%d outcome lines naming %d turn outcomes, want %d: one per turn", n, total, len(steps))
	}
	for outcome, want := range map[string]float64{"skipped": 1, "placeholder": 1, "sent": 3} {
		if got := h.metric("banter_text_replies_total", map[string]string{"outcome": outcome}); got != want {
			t.Errorf("banter_text_replies_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	skips := h.metric("banter_decisions_total", map[string]string{"pipeline": "text", "stage": "B", "outcome": "deny", "reason": "llm_skip"})
	if skips != 2 {
		t.Errorf("banter_decisions_total{text, B, deny, llm_skip} = %v, want 2 (the unforced skip and the placeholder's)", skips)
	}
}

// toolCall is a send_discord_message answer.
func toolCall(mode, target, text string) openaisim.Reply {
	t := "null"
	if target != "" {
		t = `"` + target + `"`
	}
	return openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "send_discord_message",
		Arguments: `{"mode":"` + mode + `","target_message_id":` + t + `,"text":` + quote(text) + `}`}}}
}

// TestRoutingTable: replies go where the reply-decision table says (docs/text.md "Routing").
// Unaddressed turns post to the channel unless text.targetedReplies is on and the model chose
// a target (then they reply to it, whatever activity.initiativeReplyShare is); addressed turns
// reply outside initiative channels, and inside them only initiativeReplyShare of the time;
// text.targetedReplies off means no model-chosen target anywhere; a target older than
// text.targetMaxAgeMinutes falls back to a broadcast. Each turn logs one reply_decision, and
// banter_reply_target_total and banter_text_fallbacks_total count the modes by value.
func TestRoutingTable(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Text.TargetMaxAgeMinutes = 30 })
	other := h.dsim.CreateTextChannel(h.guild, "elsewhere")
	old := h.post(h.bob, "I baked bread last night")
	h.waitLog(`"msg":"reply_admission"`, string(old.ID), `"allow":false`)
	target := h.post(h.bob, "what's the best pizza topping?")
	h.waitLog(`"msg":"reply_admission"`, string(target.ID), `"allow":false`)
	h.initiativeIn(h.general)
	h.reconfigure(func(c *config.Config) { c.Activity.InitiativeReplyShare = 0 })
	type step struct {
		name    string
		mutate  func(*config.Config)
		channel discordsim.ChannelID
		content string
		answer  openaisim.Reply
		replyTo func(trigger discordsim.Message) discordsim.MessageID // "" for a channel message
		why     string
	}
	steps := []step{
		{name: "unaddressed, model target, share 0: a reply to the target", content: "mushrooms or olives?",
			answer:  toolCall("reply", string(target.ID), "Mushrooms."),
			replyTo: func(discordsim.Message) discordsim.MessageID { return target.ID }, why: "model_target"},
		{name: "addressed in an initiative channel, share 0: a channel message", content: "banter, pineapple?",
			answer:  toolCall("reply", "", "Never."),
			replyTo: func(discordsim.Message) discordsim.MessageID { return "" }, why: "initiative_share"},
		{name: "addressed elsewhere, share 0: a reply", channel: other, content: "banter, hello over here",
			answer:  toolCall("broadcast", "", "Hi!"),
			replyTo: func(m discordsim.Message) discordsim.MessageID { return m.ID }, why: "addressed"},
		{name: "addressed in an initiative channel, share 1: a reply", mutate: func(c *config.Config) { c.Activity.InitiativeReplyShare = 1 },
			content: "banter, anchovies?", answer: toolCall("broadcast", "", "Sure."),
			replyTo: func(m discordsim.Message) discordsim.MessageID { return m.ID }, why: "addressed"},
		{name: "targeted replies off: no model target for an unaddressed turn", mutate: func(c *config.Config) { c.Text.TargetedReplies = false },
			content: "ham then?", answer: toolCall("reply", string(target.ID), "Ham is fine."),
			replyTo: func(discordsim.Message) discordsim.MessageID { return "" }, why: "targeted_replies_off"},
		{name: "a target older than targetMaxAgeMinutes: fallback broadcast", mutate: func(c *config.Config) { c.Text.TargetedReplies = true },
			content: "bread is better than pizza", answer: toolCall("reply", string(old.ID), "Bread!"),
			replyTo: func(discordsim.Message) discordsim.MessageID { return "" }, why: "target_too_old"},
	}
	for i, s := range steps {
		if s.mutate != nil {
			h.reconfigure(s.mutate)
		}
		if s.why == "target_too_old" {
			h.clock.Advance(31 * time.Minute) // the baked bread is now older than 30 minutes
		}
		ch := s.channel
		if ch == "" {
			ch = h.general
		}
		h.nextAnswer(openaisim.Rule{Reply: s.answer})
		m, err := h.dsim.Post(h.ctx, h.alice, ch, s.content)
		if err != nil {
			t.Fatal(err)
		}
		r := h.waitBot(i + 1)
		if want := s.replyTo(m); r.ReplyTo() != want {
			t.Errorf("%s: sent replying to %q, want %q", s.name, r.ReplyTo(), want)
		}
		h.waitLog(`"msg":"reply_decision"`, string(m.ID), `"why":"`+s.why+`"`)
		h.waitLog(`"msg":"sent_`, `"message_id":"`+string(m.ID)+`"`) // logged after the metrics count it
	}
	decisions := map[string]int{}
	for _, l := range h.logLines("reply_decision") {
		decisions[l["message_id"].(string)]++
	}
	for id, n := range decisions {
		if n != 1 {
			t.Errorf("turn %s: %d reply_decision lines, want 1", id, n)
		}
	}
	if len(decisions) != len(steps) {
		t.Errorf("reply_decision for %d turns, want %d", len(decisions), len(steps))
	}
	for mode, want := range map[string]float64{"target_reply": 1, "trigger_reply": 2, "broadcast": 2, "fallback_broadcast": 1} {
		if got := h.metric("banter_reply_target_total", map[string]string{"mode": mode}); got != want {
			t.Errorf("banter_reply_target_total{mode=%q} = %v, want %v", mode, got, want)
		}
	}
	if got := h.metric("banter_text_fallbacks_total", map[string]string{"reason": "target_too_old"}); got != 1 {
		t.Errorf("banter_text_fallbacks_total{reason=target_too_old} = %v, want 1", got)
	}
}

// TestQuietHoursAnswerOnlyDirectAddresses: during a guild's quiet hours (text.quietHours, its
// own time zone) an unaddressed turn is denied at Stage A (quiet_hours) even in an initiative
// channel, a direct address is answered and its model is told it is quiet hours; a reload that
// ends the window takes effect on the next message.
func TestQuietHoursAnswerOnlyDirectAddresses(t *testing.T) {
	h := newHarness(t, nil) // the clock reads 10:00 UTC, 11:00 in Berlin
	h.initiativeIn(h.general)
	h.reconfigure(func(c *config.Config) {
		c.Text.QuietHours = []config.QuietHours{{GuildID: string(h.guild), TimeZone: "Europe/Berlin", Start: "10:30", End: "12:00"}}
	})
	ambient := h.post(h.bob, "anyone up for a movie?")
	h.waitLog(`"msg":"reply_admission"`, string(ambient.ID), `"allow":false`, `"reason":"quiet_hours"`)
	asked := h.post(h.alice, "banter, are you awake?")
	if r := h.waitBot(1); r.ReplyTo() != asked.ID {
		t.Fatalf("reply references %q, want the direct address %q", r.ReplyTo(), asked.ID)
	}
	if ins := h.lastInstructions(); !strings.Contains(ins, "it is quiet hours in this server now (10:30-12:00 Europe/Berlin)") {
		t.Errorf("instructions do not say it is quiet hours:\n%s", ins)
	}
	if n := len(h.generations()); n != 1 {
		t.Errorf("%d model calls, want 1 (the unaddressed turn never reaches the model)", n)
	}
	if got := h.metric("banter_decisions_total", map[string]string{"pipeline": "text", "stage": "A", "outcome": "deny", "reason": "quiet_hours"}); got != 1 {
		t.Errorf("banter_decisions_total{text, A, deny, quiet_hours} = %v, want 1", got)
	}

	// Another guild's window, or none: the initiative turn is answered again.
	h.reconfigure(func(c *config.Config) {
		c.Text.QuietHours = []config.QuietHours{{GuildID: "123456789012345678", TimeZone: "UTC", Start: "00:00", End: "23:59"}}
	})
	later := h.post(h.bob, "a movie, anyone?")
	h.waitLog(`"msg":"reply_admission"`, string(later.ID), `"allow":true`)
	h.waitBot(2)
	if ins := h.lastInstructions(); strings.Contains(ins, "it is quiet hours in this server now") {
		t.Errorf("instructions say quiet hours outside them:\n%s", ins)
	}
}
