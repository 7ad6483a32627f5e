package text_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

func TestMentionRepliesToTrigger(t *testing.T) {
	h := newHarness(t, nil, toolReply("weather", "reply", "", "Sunny with a chance of memes."))
	m := h.post(h.alice, mention(h.dsim.BotID())+" what's the weather like?")
	r := h.waitBot(1)
	if r.Content != "Sunny with a chance of memes." {
		t.Errorf("reply = %q", r.Content)
	}
	if r.ReplyTo() != m.ID {
		t.Errorf("reply references %q, want the trigger %q", r.ReplyTo(), m.ID)
	}
	if r.AllowedMentions == nil || len(r.AllowedMentions.Parse) != 0 || !r.AllowedMentions.RepliedUser {
		t.Errorf("allowed_mentions = %+v, want parse [] and replied_user true", r.AllowedMentions)
	}
	// The typing indicator is sent alongside the generation, so it may land after the reply.
	tctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	if _, err := simtest.WaitTyping(tctx, h.dsim, h.general, h.dsim.BotID()); err != nil {
		t.Errorf("no typing indicator for an addressed turn: %v", err)
	}
	h.waitLog(`"msg":"sent_reply"`, `"signal":"direct"`, string(m.ID))
	// The model saw who said what, with ids.
	g := h.generations()
	if len(g) != 1 || !strings.Contains(g[0].Prompt, "[msg "+string(m.ID)) || !strings.Contains(g[0].Prompt, "alice") {
		t.Fatalf("prompt lacks the labelled trigger:\n%v", g)
	}
	// The line shows the mention as Discord writes it (<@id>): the participants say whose id it is.
	if self := "- banter (you, user id " + string(h.dsim.BotID()) + ")"; !strings.Contains(g[0].Prompt, mention(h.dsim.BotID())) || !strings.Contains(g[0].Prompt, self) {
		t.Errorf("the prompt shows a mention of the bot without saying it is the bot's id (%q):\n%s", self, g[0].Prompt)
	}
}

func TestNameAndAliasAddressing(t *testing.T) {
	h := newHarness(t, nil)
	tests := []struct {
		content string
		want    bool
	}{
		{"hey banter, can you settle a bet?", true},
		{"bants, you awake?", true},
		{"I asked banter yesterday about it", false},
		{"stop bantering around", false},
	}
	sent := 0
	for _, tt := range tests {
		m := h.post(h.alice, tt.content)
		if tt.want {
			sent++
			r := h.waitBot(sent)
			if r.ReplyTo() != m.ID {
				t.Errorf("%q: reply references %q, want %q", tt.content, r.ReplyTo(), m.ID)
			}
		} else {
			h.waitLog(`"msg":"reply_admission"`, string(m.ID), `"allow":false`)
		}
	}
	if n := len(h.botMessages()); n != sent {
		t.Errorf("bot sent %d messages, want %d", n, sent)
	}
}

func TestDirectReplyChainAndPersonaAcrossRestart(t *testing.T) {
	h := newHarness(t, nil)
	// The bot answers a pirate command, in the pirate persona.
	cmd := h.post(h.alice, "!banter(pirate) tell me about treasure")
	b1 := h.waitBot(1)
	if b1.ReplyTo() != cmd.ID {
		t.Fatalf("command answer references %q", b1.ReplyTo())
	}
	if g := h.generations(); !strings.Contains(g[0].Instructions, "banter the pirate") {
		t.Fatalf("command did not use the pirate persona:\n%s", g[0].Instructions)
	}
	// The answer is stored with its persona once sent_reply is logged (Discord shows it first).
	h.waitLog(`"msg":"sent_reply"`, string(b1.ID))
	// Alice replies to the bot: a DirectReply, answered in the same persona.
	m2 := h.post(h.alice, "where is it buried?", discordsim.ReplyTo(b1.ID))
	b2 := h.waitBot(2)
	if b2.ReplyTo() != m2.ID {
		t.Fatalf("direct reply answer references %q", b2.ReplyTo())
	}

	// Restart: the persona of b2 comes from the store.
	h.waitLog(`"msg":"sent_reply"`, string(b2.ID))
	h.restart()
	m3 := h.post(h.alice, "and who guards it?", discordsim.ReplyTo(b2.ID))
	b3 := h.waitBot(3)
	if b3.ReplyTo() != m3.ID {
		t.Fatalf("post-restart answer references %q", b3.ReplyTo())
	}
	g := h.generations()
	last := g[len(g)-1]
	if !strings.Contains(last.Instructions, "banter the pirate") {
		t.Errorf("persona lost across restart:\n%s", last.Instructions)
	}
	// The 3-hop chain, oldest first, bot lines marked.
	p := last.Prompt
	want := []string{"reply chain", string(cmd.ID), string(b1.ID) + " · ", "banter (you)", string(m2.ID), string(b2.ID), string(m3.ID)}
	prev := -1
	for _, w := range want {
		i := strings.Index(p, w)
		if i < 0 {
			t.Fatalf("prompt lacks %q:\n%s", w, p)
		}
		if w != "banter (you)" && i < prev {
			t.Errorf("%q out of order in:\n%s", w, p)
		}
		if w != "banter (you)" {
			prev = i
		}
	}
	h.waitLog(`"msg":"reply_admission"`, string(m3.ID), `"reason":"reply_to_bot"`)
}

func TestReplyChainDeeperThanCap(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Context.ReplyChainDepth = 3 })
	m1 := h.post(h.alice, "banter, first question")
	b1 := h.waitBot(1)
	m2 := h.post(h.alice, "second", discordsim.ReplyTo(b1.ID))
	b2 := h.waitBot(2)
	m3 := h.post(h.alice, "third", discordsim.ReplyTo(b2.ID))
	h.waitBot(3)
	g := h.generations()
	p := g[len(g)-1].Prompt
	// The chain section holds the capped chain; what came before it is in the channel's
	// recent conversation that follows.
	chain, around, ok := strings.Cut(p, "What else was said in the channel around it")
	if !ok {
		t.Fatalf("prompt lacks the channel section after the chain:\n%s", p)
	}
	for _, id := range []discordsim.MessageID{m2.ID, b2.ID, m3.ID} {
		if !strings.Contains(chain, "[msg "+string(id)) {
			t.Errorf("chain within the cap lacks %s:\n%s", id, p)
		}
	}
	for _, id := range []discordsim.MessageID{m1.ID, b1.ID} {
		if strings.Contains(chain, "[msg "+string(id)) {
			t.Errorf("chain beyond the cap (3) includes %s:\n%s", id, p)
		}
		if !strings.Contains(around, "[msg "+string(id)) {
			t.Errorf("the channel around the chain lacks %s:\n%s", id, p)
		}
	}
}

func TestDeletedParentStopsChainAndDeletedBotMessageFallsBack(t *testing.T) {
	h := newHarness(t, nil)
	m1 := h.post(h.alice, "banter, remember this secret: tacos")
	b1 := h.waitBot(1)
	if err := h.dsim.Delete(h.ctx, m1.ID); err != nil {
		t.Fatal(err)
	}
	h.waitStored(m1.ID, "deleted", func(m store.Message) bool { return m.Deleted }) // the delete event landed
	m2 := h.post(h.alice, "what was it?", discordsim.ReplyTo(b1.ID))
	h.waitBot(2)
	g := h.generations()
	p := g[len(g)-1].Prompt
	if strings.Contains(p, "tacos") {
		t.Errorf("deleted parent still shown:\n%s", p)
	}
	if !strings.Contains(p, string(b1.ID)) || !strings.Contains(p, string(m2.ID)) {
		t.Errorf("chain lacks the live messages:\n%s", p)
	}

	// A reply to a deleted bot message is not a DirectReply: without another address it is
	// handled like any unaddressed message (here: initiative off, so no reply). Discord refuses a
	// new reply to an already deleted message, so the case arises when the delete reaches the bot
	// before a reply sent just earlier: the bot's store knows the message is gone.
	b2 := h.waitBot(2)
	h.waitStored(b2.ID, "saved", func(store.Message) bool { return true }) // the bot's own reply came back through the gateway
	if err := h.st.DeleteMessage(h.ctx, string(b2.ID)); err != nil {
		t.Fatal(err)
	}
	m3 := h.post(h.alice, "thanks!", discordsim.ReplyTo(b2.ID))
	h.waitLog(`"msg":"reply_admission"`, string(m3.ID), `"allow":false`, `"reason":"initiative_disabled"`)
	// The same reply to a live bot message is a DirectReply.
	m4 := h.post(h.alice, "thanks again!", discordsim.ReplyTo(b1.ID))
	h.waitLog(`"msg":"reply_admission"`, string(m4.ID), `"reason":"reply_to_bot"`)
}

func TestChimeInClusterCutsOldConversation(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.bob, "pineapple on pizza is a crime")
	h.post(h.alice, "it's delicious, fight me")
	h.clock.Advance(2 * time.Hour)
	t1 := h.post(h.bob, "tacos tonight?")
	t2 := h.post(h.alice, "only if there is guac")
	trig := h.post(h.alice, mention(h.dsim.BotID())+" what do you think?")
	h.waitBot(1)
	p := h.generations()[0].Prompt
	for _, id := range []discordsim.MessageID{t1.ID, t2.ID, trig.ID} {
		if !strings.Contains(p, string(id)) {
			t.Errorf("cluster lacks %s:\n%s", id, p)
		}
	}
	if strings.Contains(p, "pineapple") {
		t.Errorf("cluster crossed a 2h gap (clusterGapMinutes 60):\n%s", p)
	}
	if !strings.Contains(p, "Participants:") || !strings.Contains(p, "bob (user id "+string(h.bob)) {
		t.Errorf("participants block missing bob:\n%s", p)
	}
}

func TestReplyAnchorToOldMessage(t *testing.T) {
	h := newHarness(t, nil)
	old := h.post(h.bob, "we should build a catapult for the office")
	h.clock.Advance(72 * time.Hour)
	h.post(h.bob, "anyway, lunch?")
	trig := h.post(h.alice, mention(h.dsim.BotID())+" is this a good idea?", discordsim.ReplyTo(old.ID))
	r := h.waitBot(1)
	if r.ReplyTo() != trig.ID {
		t.Errorf("reply references %q, want trigger %q", r.ReplyTo(), trig.ID)
	}
	p := h.generations()[0].Prompt
	i := strings.Index(p, "alice is replying to this message")
	j := strings.Index(p, "catapult")
	if i < 0 || j < i {
		t.Errorf("anchor not shown first:\n%s", p)
	}
	if !strings.Contains(p, "3d ago") {
		t.Errorf("anchor age missing:\n%s", p)
	}
}

// TestCoalescedBurst: three addressed messages within the coalescing window become one reply
// attempt, answering the latest, with every trigger id logged. The window is long and the burst
// closes at three messages, so the batch never depends on how fast the posts land.
func TestCoalescedBurst(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 60
		c.Activity.ReplyCoalesceMaxMessages = 3
	})
	a := h.post(h.alice, "banter, quick one")
	b := h.post(h.alice, "banter, also this")
	c := h.post(h.alice, "banter, and finally that")
	r := h.waitBot(1)
	if r.ReplyTo() != c.ID {
		t.Errorf("burst reply references %q, want the latest addressed %q", r.ReplyTo(), c.ID)
	}
	line := h.waitLog(`"msg":"sent_reply"`, string(c.ID))
	for _, id := range []discordsim.MessageID{a.ID, b.ID, c.ID} {
		if !strings.Contains(line, string(id)) {
			t.Errorf("sent_reply lacks trigger id %s: %s", id, line)
		}
	}
	for _, id := range []discordsim.MessageID{a.ID, b.ID} {
		h.waitLog(`"msg":"turn_coalesced"`, string(id), `"into":"`+string(c.ID)+`"`)
	}
	// A later message, answered on its own: nothing else came of the burst before it (the
	// channel's queue answers in order).
	h.reconfigure(func(c *config.Config) { c.Activity.ReplyCoalesceMaxMessages = 1 })
	later := h.post(h.alice, "banter, after the burst")
	if r := h.waitBot(2); r.ReplyTo() != later.ID {
		t.Errorf("second reply references %q, want %q", r.ReplyTo(), later.ID)
	}
	if n := len(h.botMessages()); n != 2 {
		t.Errorf("bot sent %d messages, want 2 (one for the burst)", n)
	}
	if n := len(h.generations()); n != 2 {
		t.Errorf("%d model calls, want 2 (one for the burst)", n)
	}
}

func TestUnaddressedFallbacks(t *testing.T) {
	tests := []struct {
		name     string
		rule     openaisim.Rule
		wantMode string
	}{
		{"hallucinated target", toolReply("", "reply", "123456789012345678", "I think so too"), "unknown_target"},
		{"free text", openaisim.Rule{Reply: openaisim.Reply{Text: "I think so too"}}, "free_text"},
		{"invalid arguments", openaisim.Rule{Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "send_discord_message", Arguments: `{"mode":"sideways","target_message_id":null,"text":"I think so too"}`}}}}, "invalid_tool_call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, tt.rule)
			h.initiativeIn(h.general)
			h.post(h.alice, "does anyone like rainy days?")
			r := h.waitBot(1)
			if r.Reference != nil {
				t.Errorf("fallback sent as a reply to %q, want a plain channel message", r.ReplyTo())
			}
			if r.Content == "" {
				t.Error("empty fallback message")
			}
			h.waitLog(`"msg":"sent_message"`, `"fallback":"`+tt.wantMode+`"`)
		})
	}
}

// TestDirectAddressClassifier: a message that only mentions the bot's name goes to the
// direct-address classifier, which sees the recent conversation; a confident answer admits it
// (llm_direct_address) and the reply goes out, a low one denies it (llm_no). The classifier is
// asked once per message, not again at the pre-generation re-check.
func TestDirectAddressClassifier(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.LLM.DirectAddressClassifier.Enabled = true
		c.LLM.DirectAddressClassifier.Model = "gpt-5-nano"
		c.Activity.ReplyCoalesceWindowSeconds = 0.2
	},
		openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-nano", InputPattern: `(?s)Message to judge.*what does banter think`}, Reply: openaisim.Reply{Text: "0.9"}},
		openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-nano"}, Reply: openaisim.Reply{Text: "0.1"}},
		toolReply("cheese", "reply", "", "Cheddar, obviously."))
	h.post(h.bob, "we need to pick a cheese for the party")
	m := h.post(h.alice, "I wonder what does banter think about that")
	r := h.waitBot(1)
	if r.ReplyTo() != m.ID || r.Content != "Cheddar, obviously." {
		t.Errorf("reply %q to %q, want the scripted answer to %q", r.Content, r.ReplyTo(), m.ID)
	}
	h.waitLog(`"msg":"reply_admission"`, string(m.ID), `"reason":"llm_direct_address"`)
	// Stage B's event says how the turn was addressed (it logged confidence 0 before).
	h.waitLog(`"msg":"reply_accepted"`, `"signal":"llm_direct_address","confidence":0.9`, string(m.ID))
	n := h.post(h.bob, "I told banter about the cheese yesterday") // a maybe: a plain topic ("banter is a funny name") costs no call
	h.waitLog(`"msg":"reply_admission"`, string(n.ID), `"reason":"llm_no"`)

	var asked []openaisim.Recorded
	for _, rq := range h.osim.Requests() {
		if rq.Model == "gpt-5-nano" {
			asked = append(asked, rq)
		}
	}
	if len(asked) != 2 {
		t.Fatalf("classifier asked %d times, want once per ambiguous message (2)", len(asked))
	}
	if !strings.Contains(asked[0].Prompt, "pick a cheese for the party") {
		t.Errorf("classifier prompt lacks the recent conversation:\n%s", asked[0].Prompt)
	}
	if len(h.botMessages()) != 1 {
		t.Errorf("bot sent %d messages, want 1", len(h.botMessages()))
	}
}

// TestClassifierDoesNotStallIntake: while the direct-address classifier thinks about one
// message, a message addressed to the bot in the same channel is answered (gateway handlers run
// one at a time, so the classifier must not run on that goroutine).
func TestClassifierDoesNotStallIntake(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.LLM.DirectAddressClassifier.Enabled = true
		c.LLM.DirectAddressClassifier.Model = "gpt-5-nano"
	},
		openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-nano"}, Reply: openaisim.Reply{Text: "0.1"},
			Latency: openaisim.Latency{TimeToFirstToken: 2 * time.Second}},
		toolReply("hello", "reply", "", "Hi Alice!"))
	slow := h.post(h.bob, "I heard banter is slow today")
	if _, err := h.osim.WaitRequestsStarted(h.ctx, 1); err != nil { // the classifier call is under way
		t.Fatal(err)
	}
	fast := h.post(h.alice, "banter, hello?")
	r := h.waitBot(1)
	if r.ReplyTo() != fast.ID {
		t.Errorf("reply references %q, want %q", r.ReplyTo(), fast.ID)
	}
	if strings.Contains(h.logs.String(), `"reason":"llm_no"`) {
		t.Error("the addressed message waited for the classifier's answer on the other one")
	}
	h.waitLog(`"msg":"reply_admission"`, string(slow.ID), `"reason":"llm_no"`)
}
