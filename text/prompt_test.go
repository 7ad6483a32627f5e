package text_test

import (
	"strings"
	"testing"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// lastGeneration is the latest reply-model request.
func (h *harness) lastGeneration() openaisim.Recorded {
	h.t.Helper()
	g := h.generations()
	if len(g) == 0 {
		h.t.Fatalf("no reply-model request; logs:\n%s", h.tail())
	}
	return g[len(g)-1]
}

// lastInstructions are the reply model's instructions of the latest generation.
func (h *harness) lastInstructions() string {
	h.t.Helper()
	return h.lastGeneration().Instructions
}

// TestDirectReplyBuildsOnItsEarlierLine: a reply to the bot tells the model that someone is
// replying to something it said, and to build on that line (double down, contradict, escalate
// or refer back); a first question does not.
func TestDirectReplyBuildsOnItsEarlierLine(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.alice, "banter, is pineapple on pizza fine?")
	b1 := h.waitBot(1)
	if ins := h.lastInstructions(); strings.Contains(ins, "replying directly to something you said") {
		t.Errorf("a first question is told it replies to the bot:\n%s", ins)
	}
	h.post(h.alice, "are you serious?", discordsim.ReplyTo(b1.ID))
	h.waitBot(2)
	ins := h.lastInstructions()
	for _, want := range []string{"alice is replying directly to something you said", "double down", "contradict", "escalate", "refer back"} {
		if !strings.Contains(ins, want) {
			t.Errorf("DirectReply instructions lack %q:\n%s", want, ins)
		}
	}
}

// TestThreadNoteInInstructions: a turn in a Discord thread carries a note in the system
// instructions that this is a thread (with its name and parent), not only in the conversation.
func TestThreadNoteInInstructions(t *testing.T) {
	h := newHarness(t, nil)
	thread, err := h.dsim.CreateThread(h.general, h.alice, "side chat")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.dsim.Post(h.ctx, h.alice, thread, "banter, can you fold a crane?"); err != nil {
		t.Fatal(err)
	}
	h.waitBot(1)
	if ins := h.lastInstructions(); !strings.Contains(ins, `This conversation is in a Discord thread ("side chat", off #general)`) {
		t.Errorf("instructions carry no thread note:\n%s", ins)
	}
	h.post(h.alice, "banter, and in the main channel?")
	h.waitBot(2)
	if ins := h.lastInstructions(); strings.Contains(ins, "Discord thread") {
		t.Errorf("a channel turn is told it is in a thread:\n%s", ins)
	}
}

// TestConstraintsInInstructions: the system instruction states the constraints as the design
// does: a supplied id or a broadcast, no target older than text.targetMaxAgeMinutes, quiet
// hours; a reload changes the age it states.
func TestConstraintsInInstructions(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Text.TargetMaxAgeMinutes = 45 })
	h.post(h.alice, "banter, hello")
	h.waitBot(1)
	ins := h.lastInstructions()
	for _, want := range []string{"Reply only to a message id shown in the conversation, or broadcast.",
		"Avoid targets older than 45 minutes", "Respect quiet hours"} {
		if !strings.Contains(ins, want) {
			t.Errorf("instructions lack %q:\n%s", want, ins)
		}
	}
	h.reconfigure(func(c *config.Config) { c.Text.TargetMaxAgeMinutes = 10 })
	h.post(h.alice, "banter, hello again")
	h.waitBot(2)
	if ins := h.lastInstructions(); !strings.Contains(ins, "Avoid targets older than 10 minutes") {
		t.Errorf("after a reload, instructions lack the new age:\n%s", ins)
	}
}

// TestLinesLabelledWithPreferredName: conversation lines are labelled with the persona's
// preferred name when the author gave one, else the name Discord shows.
func TestLinesLabelledWithPreferredName(t *testing.T) {
	h := newHarness(t, nil)
	if err := h.st.SavePersona(h.ctx, store.UserPersona{UserID: string(h.alice), PreferredName: "Ally"}); err != nil {
		t.Fatal(err)
	}
	a := h.post(h.alice, "I like tea")
	b := h.post(h.bob, "banter, tea or coffee?")
	h.waitBot(1)
	p := h.lastPrompt()
	if !strings.Contains(p, "[msg "+string(a.ID)) || !strings.Contains(p, "] Ally: I like tea") {
		t.Errorf("alice's line is not labelled with her preferred name:\n%s", p)
	}
	if strings.Contains(p, "] alice: ") {
		t.Errorf("alice's line still labelled with her Discord name:\n%s", p)
	}
	if !strings.Contains(p, "] bob: banter, tea or coffee?") || !strings.Contains(p, "msg "+string(b.ID)+" from bob") {
		t.Errorf("bob (no persona) is not labelled with his Discord name:\n%s", p)
	}
}

// TestCoalescedAuthorsEachAnswered: when a burst of several people's messages is answered in
// one reply, the prompt names each author's question and asks the reply to address each.
func TestCoalescedAuthorsEachAnswered(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 60 // the burst closes at two messages, not on a timer
		c.Activity.ReplyCoalesceMaxMessages = 2
	})
	h.post(h.alice, "banter, what's 2+2?")
	h.post(h.bob, "banter, and the capital of France?")
	h.waitBot(1)
	p, ins := h.lastPrompt(), h.lastInstructions()
	if !strings.Contains(p, "Each person's message in the burst, all to be answered:\n- alice (msg ") ||
		!strings.Contains(p, "): banter, what's 2+2?\n- bob (msg ") {
		t.Errorf("prompt does not list each author's question:\n%s", p)
	}
	if !strings.Contains(ins, "answer each of them, by name") {
		t.Errorf("instructions do not ask to address each person:\n%s", ins)
	}

	// One author's burst: no such list.
	h.post(h.alice, "banter, one")
	h.post(h.alice, "banter, two")
	h.waitBot(2)
	if p := h.lastPrompt(); strings.Contains(p, "Each person's message") {
		t.Errorf("a one-author burst lists its authors:\n%s", p)
	}
}

// TestCommandTopicAboveHistory: the topic of "!banter(Persona) topic" is in the prompt, above
// the history (the design's "topic over history").
func TestCommandTopicAboveHistory(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.bob, "lovely weather")
	h.post(h.alice, "!banter(pirate) shipwrecks of the Caribbean")
	h.waitBot(1)
	p := h.lastPrompt()
	topic := strings.Index(p, "Topic alice asked you about (it matters more than the history below): shipwrecks of the Caribbean")
	history := strings.Index(p, "Recent conversation in the channel")
	if topic < 0 || history < 0 || topic > history {
		t.Errorf("topic at %d, history at %d: want the topic above the history:\n%s", topic, history, p)
	}
}

// TestOwnMessagesInHistoryOff: with context.includeOwnMessagesInHistory false the bot's own
// earlier lines are not shown in the recent conversation; on (the default), they are.
func TestOwnMessagesInHistoryOff(t *testing.T) {
	h := newHarness(t, nil, toolReply("", "reply", "", "My unmistakable answer."))
	h.post(h.alice, "banter, first question")
	h.waitBot(1)
	h.post(h.bob, "banter, second question")
	h.waitBot(2)
	if p := h.lastPrompt(); !strings.Contains(p, "My unmistakable answer.") {
		t.Errorf("on: the bot's own line is missing from the history:\n%s", p)
	}
	h.reconfigure(func(c *config.Config) { c.Context.IncludeOwnMessagesInHistory = false })
	h.post(h.alice, "banter, third question")
	h.waitBot(3)
	p := h.lastPrompt()
	if strings.Contains(p, "My unmistakable answer.") {
		t.Errorf("off: the bot's own line is shown:\n%s", p)
	}
	if !strings.Contains(p, "second question") {
		t.Errorf("off: the others' lines are missing:\n%s", p)
	}
}
