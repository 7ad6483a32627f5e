package text_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/store"
)

// TestDirectReplyShowsTheChannel: a DirectReply shows the reply chain, then what else was said
// in the channel around it, each message once.
func TestDirectReplyShowsTheChannel(t *testing.T) {
	h := newHarness(t, nil)
	q := h.post(h.alice, "banter, what should we eat tonight?")
	b1 := h.waitBot(1)
	side := h.post(h.bob, "I vote pineapple pizza")
	m := h.post(h.alice, "what do you think of bob's idea?", discordsim.ReplyTo(b1.ID))
	if r := h.waitBot(2); r.ReplyTo() != m.ID {
		t.Fatalf("reply references %q, want %q", r.ReplyTo(), m.ID)
	}
	p := h.lastPrompt()
	chain, around, ok := strings.Cut(p, "What else was said in the channel around it")
	if !ok {
		t.Fatalf("DirectReply prompt lacks the channel after the chain:\n%s", p)
	}
	for _, id := range []discordsim.MessageID{q.ID, b1.ID, m.ID} {
		if !strings.Contains(chain, "[msg "+string(id)) {
			t.Errorf("chain lacks %s:\n%s", id, p)
		}
	}
	if !strings.Contains(around, "[msg "+string(side.ID)) || !strings.Contains(around, "pineapple") {
		t.Errorf("the channel section lacks bob's message:\n%s", p)
	}
	for _, id := range []discordsim.MessageID{q.ID, b1.ID, m.ID, side.ID} {
		if n := strings.Count(p, "[msg "+string(id)+" "); n != 1 {
			t.Errorf("message %s shown %d times, want once:\n%s", id, n, p)
		}
	}
}

// TestRecentAnchorShownOnce: the message a trigger replies to is shown as the anchor and not
// again in the recent conversation.
func TestRecentAnchorShownOnce(t *testing.T) {
	h := newHarness(t, nil)
	a := h.post(h.bob, "let's get tacos")
	trig := h.post(h.alice, mention(h.dsim.BotID())+" good plan?", discordsim.ReplyTo(a.ID))
	if r := h.waitBot(1); r.ReplyTo() != trig.ID {
		t.Fatalf("reply references %q", r.ReplyTo())
	}
	p := h.lastPrompt()
	if !strings.Contains(p, "alice is replying to this message:\n[msg "+string(a.ID)) {
		t.Errorf("anchor not shown first:\n%s", p)
	}
	if n := strings.Count(p, "[msg "+string(a.ID)+" "); n != 1 {
		t.Errorf("anchor shown %d times, want once:\n%s", n, p)
	}
}

// TestThreadPromptNamesThreadAndStaysInIt: a turn in a thread names the parent channel and the
// thread, and shows the thread's conversation, not the parent's.
func TestThreadPromptNamesThreadAndStaysInIt(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.bob, "parent channel gossip about swordfish")
	thread, err := h.dsim.CreateThread(h.general, h.alice, "side chat")
	if err != nil {
		t.Fatal(err)
	}
	say := func(u discordsim.UserID, content string) discordsim.Message {
		t.Helper()
		m, err := h.dsim.Post(h.ctx, u, thread, content)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := say(h.bob, "thread talk about origami")
	trig := say(h.alice, "banter, can you fold a crane?")
	if r := h.waitBot(1); r.ReplyTo() != trig.ID || r.ChannelID != thread {
		t.Fatalf("reply %+v, want a reply to %s in the thread", r, trig.ID)
	}
	p := h.lastPrompt()
	if !strings.Contains(p, `Channel: #general, thread "side chat"`) {
		t.Errorf("prompt does not name the thread:\n%s", p)
	}
	if !strings.Contains(p, "[msg "+string(first.ID)) {
		t.Errorf("prompt lacks the thread's conversation:\n%s", p)
	}
	if strings.Contains(p, "swordfish") {
		t.Errorf("the parent channel's conversation reached the thread's prompt:\n%s", p)
	}
	st := h.waitStored(trig.ID, "saved", func(store.Message) bool { return true })
	if st.ThreadID != string(thread) {
		t.Errorf("stored thread id %q, want %q", st.ThreadID, thread)
	}
}

// TestChannelIsolation: nothing of one channel reaches a prompt for another, even when a
// message references the other channel's message without naming its channel.
func TestChannelIsolation(t *testing.T) {
	h := newHarness(t, nil)
	random := h.dsim.CreateTextChannel(h.guild, "random")
	secret := h.post(h.bob, "the password is swordfish")
	h.waitStored(secret.ID, "saved", func(store.Message) bool { return true })
	trig, err := h.dsim.Post(h.ctx, h.alice, random, mention(h.dsim.BotID())+" what's new?")
	if err != nil {
		t.Fatal(err)
	}
	if r := h.waitBot(1); r.ReplyTo() != trig.ID {
		t.Fatalf("reply references %q", r.ReplyTo())
	}
	if p := h.lastPrompt(); strings.Contains(p, "swordfish") {
		t.Errorf("#general reached a prompt for #random:\n%s", p)
	}

	// A reference with no channel id (Discord's forwards and some clients' events) to the
	// #general message, in #random: not an anchor, nor a reply chain.
	self := h.sess.State.User
	at := h.clock.Now()
	id := strconv.FormatInt((at.UnixMilli()-1420070400000)<<22, 10)
	h.svc.HandleMessageCreate(&discordgo.Message{ID: id, ChannelID: string(random), GuildID: string(h.guild),
		Content: "<@" + self.ID + "> is this right?", Timestamp: at,
		Author:           &discordgo.User{ID: string(h.alice), Username: "alice"},
		Mentions:         []*discordgo.User{self},
		MessageReference: &discordgo.MessageReference{MessageID: string(secret.ID)}})
	h.waitLog(`"msg":"reply_admission"`, id, `"allow":true`)
	h.waitBot(2)
	p := h.lastPrompt()
	if strings.Contains(p, "swordfish") || strings.Contains(p, "is replying to this message") {
		t.Errorf("a reference to #general brought its message into #random's prompt:\n%s", p)
	}
	if !strings.Contains(p, "is this right?") {
		t.Errorf("the prompt is not the one for the crafted message:\n%s", p)
	}
}

// TestMaxCharsPerMessage: each message shown is cut to context.maxCharsPerMessage characters,
// the cut marked.
func TestMaxCharsPerMessage(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Context.MaxCharsPerMessage = 50 })
	long := strings.Repeat("a", 40) + "ß" + strings.Repeat("b", 9) + "TAIL-THAT-MUST-GO"
	m := h.post(h.bob, long)
	h.post(h.alice, "banter, summarise that")
	h.waitBot(1)
	p := h.lastPrompt()
	want := strings.Repeat("a", 40) + "ß" + strings.Repeat("b", 9) + "…"
	if !strings.Contains(p, "[msg "+string(m.ID)) || !strings.Contains(p, want) {
		t.Errorf("prompt lacks the message cut to 50 characters (%q):\n%s", want, p)
	}
	if strings.Contains(p, "TAIL-THAT-MUST-GO") {
		t.Errorf("message not cut:\n%s", p)
	}
}

// TestTokenBudgetDropsOldestClusterFirst: past context.tokenBudget the oldest lines of the
// channel go first; the reply chain and the triggers stay.
func TestTokenBudgetDropsOldestClusterFirst(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Context.TokenBudget = 500
		c.Context.MaxCharsPerMessage = 400
	})
	q := h.post(h.alice, "banter, start a story")
	b1 := h.waitBot(1)
	var filler []discordsim.Message
	for i := range 6 { // ~110 estimated tokens each: 6 of them overflow 500 with the chain
		filler = append(filler, h.post(h.bob, strconv.Itoa(i)+" "+strings.Repeat("word ", 78)))
	}
	m := h.post(h.alice, "and then?", discordsim.ReplyTo(b1.ID))
	if r := h.waitBot(2); r.ReplyTo() != m.ID {
		t.Fatalf("reply references %q", r.ReplyTo())
	}
	p := h.lastPrompt()
	for _, id := range []discordsim.MessageID{q.ID, b1.ID, m.ID} {
		if !strings.Contains(p, "[msg "+string(id)) {
			t.Errorf("the chain lost %s to the budget:\n%s", id, p)
		}
	}
	if !strings.Contains(p, "[msg "+string(filler[len(filler)-1].ID)) {
		t.Errorf("the newest channel line was dropped:\n%s", p)
	}
	if strings.Contains(p, "[msg "+string(filler[0].ID)) {
		t.Errorf("the oldest channel line was kept past the budget:\n%s", p)
	}
	shown := 0
	for _, f := range filler {
		if strings.Contains(p, "[msg "+string(f.ID)) {
			shown++
		}
	}
	if shown == len(filler) || shown == 0 {
		t.Errorf("%d of %d channel lines shown; the budget should keep some, not all", shown, len(filler))
	}
}
