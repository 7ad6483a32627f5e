package text_test

import (
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// The two-stage reply: with replyFollowupLlm enabled the reply model may ask for lookups; their
// results feed the follow-up pass (its own model), which writes the final reply.

const followupModel = "followup-model"

// lookupsOn switches the two-stage reply on, with the follow-up pass on followupModel.
func lookupsOn(c *config.Config) {
	c.ReplyFollowupLLM.Enabled = true
	c.ReplyFollowupLLM.Model = followupModel
}

// lookupCall scripts the reply model asking for one lookup when the last user text matches.
func lookupCall(pattern, tool, args string) openaisim.Rule {
	return openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-mini", InputPattern: pattern},
		Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: tool, Arguments: args}}}}
}

// followupSays scripts the follow-up pass's answer when its whole prompt matches.
func followupSays(promptPattern, text string) openaisim.Rule {
	r := toolReply("", "reply", "", text)
	r.Match = openaisim.Match{Model: followupModel, PromptPattern: promptPattern}
	return r
}

// requestsOf returns the recorded requests for a model.
func (h *harness) requestsOf(model string) []openaisim.Recorded {
	var out []openaisim.Recorded
	for _, r := range h.osim.Requests() {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

func hasTool(r openaisim.Recorded, name string) bool {
	for _, t := range r.Tools {
		if t.Name == name || (t.Name == "" && t.Type == name) {
			return true
		}
	}
	return false
}

func toolNamesOf(r openaisim.Recorded) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Type+":"+t.Name)
	}
	return out
}

func last[T any](t *testing.T, s []T) T {
	t.Helper()
	if len(s) == 0 {
		t.Fatal("nothing recorded")
	}
	return s[len(s)-1]
}

// TestMemoryLookupFindsLastWeekInThisChannelOnly: a message from last week (long out of the
// conversation's cluster) is found by memory_lookup in the asker's channel, and the follow-up
// pass answers from it; a matching message of another channel is not found (scope channel, the
// default), until lookups.memory.scope is guild.
func TestMemoryLookupFindsLastWeekInThisChannelOnly(t *testing.T) {
	h := newHarness(t, lookupsOn,
		lookupCall(`where did bob say`, "memory_lookup", `{"query":"lighthouse key"}`),
		followupSays(`(?s)Before answering you asked.*blue pot`, "Bob said it's under the blue pot."),
		followupSays(`(?s)Before answering you asked.*harbour`, "It went to the harbour."),
	)
	random := h.dsim.CreateTextChannel(h.guild, "random")
	old := h.post(h.bob, "the lighthouse key is under the blue pot")
	elsewhere, err := h.dsim.Post(h.ctx, h.bob, random, "in random: the lighthouse key went to the harbour")
	if err != nil {
		t.Fatal(err)
	}
	h.waitStored(elsewhere.ID, "saved", func(store.Message) bool { return true })
	h.clock.Advance(7 * 24 * time.Hour)
	h.post(h.alice, "morning")
	q := h.post(h.alice, "banter, where did bob say the lighthouse key was?")
	r := h.waitBot(1)
	if r.Content != "Bob said it's under the blue pot." || r.ReplyTo() != q.ID {
		t.Fatalf("reply %q to %q; want the follow-up's answer to %q", r.Content, r.ReplyTo(), q.ID)
	}
	first := h.requestsOf("gpt-5-mini")
	if len(first) != 1 || strings.Contains(first[0].Prompt, "blue pot") {
		t.Fatalf("reply model saw last week's message in its context (want it only through the lookup): %d requests", len(first))
	}
	if !hasTool(first[0], "memory_lookup") || !hasTool(first[0], "image_lookup") || hasTool(first[0], "web_search") {
		t.Errorf("lookups offered = %v; want memory_lookup and image_lookup (web search is off by default)", toolNamesOf(first[0]))
	}
	fu := h.requestsOf(followupModel)
	if len(fu) != 1 {
		t.Fatalf("%d follow-up passes, want 1", len(fu))
	}
	p := fu[0].Prompt
	if !strings.Contains(p, string(old.ID)) || !strings.Contains(p, "7d ago") || strings.Contains(p, "harbour") {
		t.Errorf("follow-up prompt should show last week's #general message (and nothing of #random):\n%s", p)
	}
	if len(fu[0].Tools) != 1 || fu[0].Tools[0].Name != "send_discord_message" {
		t.Errorf("follow-up pass offered %v, want send_discord_message only", toolNamesOf(fu[0]))
	}
	h.waitLog(`"msg":"lookup"`, `"lookup":"memory_lookup"`, `"outcome":"ok"`, `"query":"lighthouse key"`)
	line := h.waitLog(`"msg":"sent_reply"`, string(q.ID))
	for _, f := range []string{`"latency_llm1_ms"`, `"latency_lookup_ms"`, `"latency_followup_ms"`} {
		if !strings.Contains(line, f) {
			t.Errorf("sent_reply lacks %s: %s", f, line)
		}
	}
	if n := h.metric("banter_text_lookups_total", map[string]string{"lookup": "memory_lookup", "outcome": "ok"}); n != 1 {
		t.Errorf("lookups_total{memory_lookup,ok} = %v, want 1", n)
	}

	// In #random nothing of #general is found (the default scope is the channel)...
	if _, err := h.dsim.Post(h.ctx, h.alice, random, "banter, where did bob say the lighthouse key was? (blue?)"); err != nil {
		t.Fatal(err)
	}
	h.waitBot(2)
	if p := last(t, h.requestsOf(followupModel)).Prompt; strings.Contains(p, "blue pot") || !strings.Contains(p, "harbour") {
		t.Errorf("a lookup from #random should find #random's message and not #general's:\n%s", p)
	}
	// ...unless the scope is the guild.
	h.reconfigure(func(c *config.Config) { c.Lookups.Memory.Scope = "guild" })
	if _, err := h.dsim.Post(h.ctx, h.alice, random, "banter, where did bob say the lighthouse key was, anywhere?"); err != nil {
		t.Fatal(err)
	}
	h.waitBot(3)
	if p := last(t, h.requestsOf(followupModel)).Prompt; !strings.Contains(p, "blue pot") || !strings.Contains(p, "#general") {
		t.Errorf("with scope guild, #general's message should be found, named by channel:\n%s", p)
	}
}

// TestNoLookupNoFollowup: when the reply model answers without asking for a lookup, its answer
// is final: one model call, no follow-up pass.
func TestNoLookupNoFollowup(t *testing.T) {
	h := newHarness(t, lookupsOn, toolReply("weather", "reply", "", "Sunny, probably."))
	q := h.post(h.alice, "banter, how's the weather?")
	if r := h.waitBot(1); r.Content != "Sunny, probably." || r.ReplyTo() != q.ID {
		t.Fatalf("reply %q to %q", r.Content, r.ReplyTo())
	}
	line := h.waitLog(`"msg":"sent_reply"`, string(q.ID))
	if !strings.Contains(line, `"latency_followup_ms":0,`) || !strings.Contains(line, `"latency_lookup_ms":0,`) {
		t.Errorf("a reply without lookups has lookup or follow-up time: %s", line)
	}
	if n := len(h.osim.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (no follow-up pass without a lookup)", n)
	}
}

// TestFailedLookupsAreReportedToTheFollowup: a lookup that errors, one that times out and one
// with unusable arguments do not stop the reply: the follow-up pass runs without them and is
// told so.
func TestFailedLookupsAreReportedToTheFollowup(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		lookupsOn(c)
		c.Lookups.WebSearch.Enabled = true
		c.Lookups.WebSearch.Model = "search-model"
		c.Lookups.TimeoutSeconds = 1
		c.LLM.MaxRetries = 0
	},
		openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-mini", InputPattern: "look it all up"}, Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{
			{Name: "web_search", Arguments: `{"query":"broken"}`},
			{Name: "web_search", Arguments: `{"query":"slow"}`},
			{Name: "memory_lookup", Arguments: `{"query":`},
		}}},
		openaisim.Rule{Match: openaisim.Match{Model: "search-model", InputPattern: "broken"}, Fault: openaisim.Fault{Status: 500}},
		openaisim.Rule{Match: openaisim.Match{Model: "search-model", InputPattern: "slow"}, Fault: openaisim.Fault{Timeout: true}},
		followupSays(`(?s)broken.*failed.*slow.*failed \(timed out.*memory_lookup.*failed`, "I couldn't find out, sorry."),
	)
	q := h.post(h.alice, "banter, look it all up please")
	if r := h.waitBot(1); r.Content != "I couldn't find out, sorry." || r.ReplyTo() != q.ID {
		t.Fatalf("reply %q to %q; logs:\n%s", r.Content, r.ReplyTo(), h.tail())
	}
	for _, o := range []string{"failed", "timeout", "invalid"} {
		h.waitLog(`"msg":"lookup"`, `"outcome":"`+o+`"`)
	}
	if n := h.metric("banter_text_lookups_total", map[string]string{"lookup": "web_search", "outcome": "timeout"}); n != 1 {
		t.Errorf("lookups_total{web_search,timeout} = %v, want 1", n)
	}
}

// TestWebSearchLookup: web_search runs as a call of its own to the web-search slot's model with
// the provider's hosted web_search tool, and the follow-up pass answers from its result.
func TestWebSearchLookup(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		lookupsOn(c)
		c.Lookups.WebSearch.Enabled = true
		c.Lookups.WebSearch.Model = "search-model"
	},
		lookupCall(`who won`, "web_search", `{"query":"2026 world cup final result"}`),
		openaisim.Rule{Match: openaisim.Match{Model: "search-model"}, Reply: openaisim.Reply{Text: "Brazil beat France 2-1 in the 2026 final.",
			WebSearch: &openaisim.WebSearch{Results: []openaisim.WebResult{{URL: "https://news.example.com/final", Title: "Final report"}}}}},
		followupSays(`(?s)web_search\("2026 world cup final result"\).*Brazil beat France 2-1.*Sources:\n- Final report https://news.example.com/final`, "Brazil, 2-1 over France!"),
	)
	q := h.post(h.alice, "banter, who won the world cup final?")
	if r := h.waitBot(1); r.Content != "Brazil, 2-1 over France!" || r.ReplyTo() != q.ID {
		t.Fatalf("reply %q to %q; logs:\n%s", r.Content, r.ReplyTo(), h.tail())
	}
	search := h.requestsOf("search-model")
	if len(search) != 1 || !hasTool(search[0], "web_search") || search[0].LastUserText != "2026 world cup final result" {
		t.Fatalf("web search requests = %d (tools %v); want one with the hosted web_search tool and the query", len(search), toolNamesOf(last(t, search)))
	}
	for _, tl := range h.requestsOf("gpt-5-mini")[0].Tools {
		if tl.Type != "function" {
			t.Errorf("the reply model was offered the hosted tool %q itself; it asks for web_search as a function", tl.Type)
		}
	}
}

// TestFollowupSkipOnForcedTurn: the follow-up pass may answer [SKIP]; a forced turn then gets
// the placeholder (text.forcedReplyOnSkip placeholder), or stays silent with silent.
func TestFollowupSkipOnForcedTurn(t *testing.T) {
	h := newHarness(t, lookupsOn,
		lookupCall(`laundry`, "memory_lookup", `{"query":"laundry"}`),
		openaisim.Rule{Match: openaisim.Match{Model: followupModel}, Reply: openaisim.Reply{Skip: true}},
	)
	m := h.post(h.alice, "banter, laundry tips?")
	h.waitLog(`"msg":"reply_placeholder"`, string(m.ID), `"pass":"followup"`)
	if r := h.waitBot(1); r.Content != config.DefaultForcedReplyPlaceholder || r.ReplyTo() != m.ID {
		t.Errorf("sent %q replying to %q; want the placeholder", r.Content, r.ReplyTo())
	}
	h.reconfigure(func(c *config.Config) { c.Text.ForcedReplyOnSkip = "silent" })
	m = h.post(h.alice, "banter, more laundry tips?")
	h.waitLog(`"msg":"reply_skipped"`, string(m.ID), `"pass":"followup"`)
}

// TestImageLookup: image_lookup describes, through the vision model (lookups.image), an image of
// the channel that is not in the conversation shown, by its message id; the follow-up pass
// answers from the description. An id of another channel finds nothing.
func TestImageLookup(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		lookupsOn(c)
		c.Images.Mode = "url"
		c.Lookups.Image.Model = "vision-model"
	}, openaisim.Rule{Match: openaisim.Match{Model: "vision-model"}, Reply: openaisim.Reply{Text: "A ginger cat asleep on a keyboard."}},
		followupSays(`(?s)image_lookup.*ginger cat asleep`, "Your cat was napping on the keyboard!"),
		followupSays(`(?s)image_lookup.*failed`, "I can't see that one."))
	pic := h.post(h.bob, "look at him", discordsim.WithFile("tom.png", "image/png", pngBytes(t)))
	random := h.dsim.CreateTextChannel(h.guild, "random")
	other, err := h.dsim.Post(h.ctx, h.bob, random, "secret", discordsim.WithFile("secret.png", "image/png", pngBytes(t)))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStored(other.ID, "saved", func(store.Message) bool { return true })
	h.clock.Advance(24 * time.Hour)
	if err := h.osim.AddRule(lookupCall(`bob's picture yesterday\?\n\nMessage to answer`, "image_lookup", `{"message_id":"`+string(pic.ID)+`"}`)); err != nil {
		t.Fatal(err)
	}
	q := h.post(h.alice, "banter, what was in bob's picture yesterday?")
	if r := h.waitBot(1); r.Content != "Your cat was napping on the keyboard!" || r.ReplyTo() != q.ID {
		t.Fatalf("reply %q to %q; logs:\n%s", r.Content, r.ReplyTo(), h.tail())
	}
	h.waitLog(`"msg":"lookup"`, `"lookup":"image_lookup"`, `"outcome":"ok"`, `"message_id":"`+string(pic.ID)+`"`)
	if strings.Contains(h.requestsOf("gpt-5-mini")[0].Prompt, string(pic.ID)) {
		t.Fatal("the old picture was in the conversation shown; the test needs it out of the window")
	}
	vision := h.requestsOf("vision-model")
	if len(vision) != 1 || len(vision[0].Images) != 1 || withoutQuery(vision[0].Images[0]) != withoutQuery(h.dsim.AttachmentURL(h.general, pic.Attachments[0])) {
		t.Fatalf("vision requests = %d, want one with bob's picture", len(vision))
	}

	if err := h.osim.AddRule(lookupCall(`the secret one\?\n\nMessage to answer`, "image_lookup", `{"message_id":"`+string(other.ID)+`"}`)); err != nil {
		t.Fatal(err)
	}
	h.post(h.alice, "banter, and the secret one?")
	if r := h.waitBot(2); r.Content != "I can't see that one." {
		t.Errorf("reply %q; an image of another channel must not be described", r.Content)
	}
	if n := len(h.requestsOf("vision-model")); n != 1 {
		t.Errorf("%d vision requests, want still 1", n)
	}
}
