package text_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// The content filter (permissions.blockedUserIds, safety.banWords) applies at every entry into
// the model's context, not only at ingest: a REST lookup, the startup backfill, a catch-up,
// and what the store held before a configuration reload.

// notStored fails the test when the bot's store holds message id.
func (h *harness) notStored(id discordsim.MessageID, why string) {
	h.t.Helper()
	if m, err := h.st.Message(h.ctx, string(id)); !errors.Is(err, store.ErrNotFound) {
		h.t.Errorf("%s: message %s is stored (%+v, %v)", why, id, m, err)
	}
}

// lastPrompt is the prompt of the latest reply-model request.
func (h *harness) lastPrompt() string {
	h.t.Helper()
	return h.lastGeneration().Prompt
}

// TestFilteredMessageNeverBecomesAnAnchor: a reply (addressing the bot) to a message ingest
// refused is not shown by way of the REST lookup of the anchor, nor stored by it.
func TestFilteredMessageNeverBecomesAnAnchor(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mutate  func(h *harness) func(*config.Config)
		reason  string
	}{
		{"ban word", "the frobnitz plan is on", func(*harness) func(*config.Config) {
			return func(c *config.Config) { c.Safety.BanWords = []string{"frobnitz"} }
		}, "ban_word"},
		{"blocked user", "the secret plan is on", func(h *harness) func(*config.Config) {
			return func(c *config.Config) { c.Permissions.BlockedUserIDs = []string{string(h.bob)} }
		}, "blocked_user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.reconfigure(tt.mutate(h))
			bad := h.post(h.bob, tt.content)
			h.waitLog(`"msg":"message_ignored"`, `"reason":"`+tt.reason+`"`, string(bad.ID))
			trig := h.post(h.alice, mention(h.dsim.BotID())+" what do you make of this?", discordsim.ReplyTo(bad.ID))
			if r := h.waitBot(1); r.ReplyTo() != trig.ID {
				t.Errorf("reply references %q, want the trigger %q", r.ReplyTo(), trig.ID)
			}
			p := h.lastPrompt()
			if strings.Contains(p, "plan is on") || strings.Contains(p, "is replying to this message") {
				t.Errorf("the refused message reached the prompt as an anchor:\n%s", p)
			}
			h.notStored(bad.ID, "the anchor lookup")
		})
	}
}

// TestReloadHidesWhatWasStoredBefore: messages stored before a reload that blocks their author
// or bans a word they hold are kept out of the cluster, the reply chain and the
// direct-address classifier's context.
func TestReloadHidesWhatWasStoredBefore(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.LLM.DirectAddressClassifier.Enabled = true
		c.LLM.DirectAddressClassifier.Model = "gpt-5-nano"
	}, openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-nano"}, Reply: openaisim.Reply{Text: "0.9"}})
	carol := h.dsim.CreateUser("carol")
	h.dsim.AddMember(h.guild, carol)

	// bob asks the bot about the frobnitz; alice will reply to its answer later.
	q := h.post(h.bob, "banter, is the frobnitz ready?")
	b1 := h.waitBot(1)
	if b1.ReplyTo() != q.ID {
		t.Fatalf("answer references %q", b1.ReplyTo())
	}
	c1, err := h.dsim.Post(h.ctx, carol, h.general, "carol's private musings")
	if err != nil {
		t.Fatal(err)
	}
	h.waitStored(c1.ID, "saved", func(store.Message) bool { return true })
	h.waitStored(q.ID, "saved", func(store.Message) bool { return true })

	h.reconfigure(func(c *config.Config) {
		c.Safety.BanWords = []string{"frobnitz"}
		c.Permissions.BlockedUserIDs = []string{string(carol)}
	})
	// A DirectReply: the chain (bob's question, the bot's answer, alice's reply) and the
	// channel around it.
	m := h.post(h.alice, "and when will it ship?", discordsim.ReplyTo(b1.ID))
	if r := h.waitBot(2); r.ReplyTo() != m.ID {
		t.Fatalf("DirectReply answer references %q", r.ReplyTo())
	}
	p := h.lastPrompt()
	if strings.Contains(p, "frobnitz") || strings.Contains(p, "private musings") {
		t.Errorf("a message hidden by the reload reached the reply chain or cluster:\n%s", p)
	}
	if !strings.Contains(p, "[msg "+string(b1.ID)) || !strings.Contains(p, "and when will it ship?") {
		t.Errorf("the chain lost its live messages:\n%s", p)
	}
	// The classifier's context.
	amb := h.post(h.alice, "I wonder what banter thinks about all this")
	h.waitLog(`"msg":"reply_admission"`, string(amb.ID), `"reason":"llm_direct_address"`)
	var asked []openaisim.Recorded
	for _, rq := range h.osim.Requests() {
		if rq.Model == "gpt-5-nano" {
			asked = append(asked, rq)
		}
	}
	if len(asked) == 0 {
		t.Fatal("the classifier was not asked")
	}
	cp := asked[len(asked)-1].Prompt
	if !strings.Contains(cp, "and when will it ship?") {
		t.Errorf("the classifier's context lacks the recent conversation:\n%s", cp)
	}
	if strings.Contains(cp, "frobnitz") || strings.Contains(cp, "private musings") {
		t.Errorf("a message hidden by the reload reached the classifier:\n%s", cp)
	}
}

// TestBackfillStoresWhatIngestWould: a channel's history fetched from REST when the bot first
// answers there keeps the newest context.historyLimit messages, without other bots, blocked
// users or ban words (none of them stored either).
func TestBackfillStoresWhatIngestWould(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Context.HistoryLimit = 4 })
	carol := h.dsim.CreateUser("carol")
	h.dsim.AddMember(h.guild, carol)
	other := h.dsim.CreateBotUser("otherbot")
	h.dsim.AddMember(h.guild, other)
	random := h.dsim.CreateTextChannel(h.guild, "random")
	// The bot does not read #random yet: what is said there is not stored.
	h.reconfigure(func(c *config.Config) { c.Permissions.AllowedChannelIDs = []string{string(h.general)} })
	say := func(u discordsim.UserID, content string) discordsim.Message {
		t.Helper()
		m, err := h.dsim.Post(h.ctx, u, random, content)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	old := say(h.alice, "ancient history beyond the limit")
	bad := say(h.bob, "the frobnitz is loose")
	blocked := say(carol, "carol was here")
	robot := say(other, "beep boop")
	keep := say(h.alice, "what a day")
	// The positive event after them: a message in #general is handled, so the #random ones
	// before it were too (gateway events are handled in order).
	marker := h.post(h.alice, "hello general")
	h.waitStored(marker.ID, "saved", func(store.Message) bool { return true })
	h.notStored(keep.ID, "before #random was allowed")

	h.reconfigure(func(c *config.Config) {
		c.Permissions.AllowedChannelIDs = nil
		c.Safety.BanWords = []string{"frobnitz"}
		c.Permissions.BlockedUserIDs = []string{string(carol)}
	})
	trig := say(h.alice, mention(h.dsim.BotID())+" catch up?")
	if r := h.waitBot(1); r.ReplyTo() != trig.ID {
		t.Fatalf("reply references %q", r.ReplyTo())
	}
	h.waitLog(`"msg":"history_backfilled"`, `"fetched":4`, `"stored":1`, `"ignored":2`)
	p := h.lastPrompt()
	if !strings.Contains(p, "what a day") {
		t.Errorf("backfilled history missing from the prompt:\n%s", p)
	}
	for _, leak := range []string{"ancient history", "frobnitz", "carol was here", "beep boop"} {
		if strings.Contains(p, leak) {
			t.Errorf("prompt shows %q (beyond historyLimit or filtered):\n%s", leak, p)
		}
	}
	h.waitStored(keep.ID, "backfilled", func(store.Message) bool { return true })
	for _, m := range []discordsim.Message{old, bad, blocked, robot} {
		h.notStored(m.ID, "the backfill")
	}
}

// TestStaleCatchUpStoresWhatIngestWould: messages missed while no process ran the bot and too
// old to answer are stored by the catch-up, except those ingest would have refused.
func TestStaleCatchUpStoresWhatIngestWould(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Safety.BanWords = []string{"frobnitz"} })
	carol := h.dsim.CreateUser("carol")
	h.dsim.AddMember(h.guild, carol)
	before := h.post(h.alice, "before the outage")
	h.waitStored(before.ID, "saved", func(store.Message) bool { return true })
	h.shutdown()
	h.reconfigure(func(c *config.Config) { c.Permissions.BlockedUserIDs = []string{string(carol)} })
	bad := h.post(h.bob, "frobnitz while you were away")
	blocked, err := h.dsim.Post(h.ctx, carol, h.general, "carol while you were away")
	if err != nil {
		t.Fatal(err)
	}
	clean := h.post(h.alice, "alice while you were away")
	h.clock.Advance(20 * time.Minute) // older than a catch-up answers: stored only
	h.start()
	h.waitLog(`"msg":"catch_up"`, `"reason":"guild_create"`, `"stale":3`)
	h.waitStored(clean.ID, "caught up", func(store.Message) bool { return true })
	h.notStored(bad.ID, "the catch-up (ban word)")
	h.notStored(blocked.ID, "the catch-up (blocked user)")
}

// TestReloadDropsQueuedTurn: a turn waiting in the queue when a reload bans a word it holds is
// not answered, nor shown with the rest of its burst.
func TestReloadDropsQueuedTurn(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 60 // the burst closes at two messages
		c.Activity.ReplyCoalesceMaxMessages = 2
	})
	queued := h.post(h.alice, "banter, what about the frobnitz?")
	h.waitLog(`"msg":"reply_admission"`, string(queued.ID), `"phase":"enqueue"`, `"allow":true`)
	h.reconfigure(func(c *config.Config) { c.Safety.BanWords = []string{"frobnitz"} })
	next := h.post(h.alice, "banter, never mind, how are you?")
	if r := h.waitBot(1); r.ReplyTo() != next.ID {
		t.Errorf("reply references %q, want %q", r.ReplyTo(), next.ID)
	}
	h.waitLog(`"msg":"message_ignored"`, `"reason":"ban_word"`, `"source":"queue"`, string(queued.ID))
	if p := h.lastPrompt(); strings.Contains(p, "frobnitz") {
		t.Errorf("the banned turn reached the prompt:\n%s", p)
	}
}

// TestBackfillSkipsMemoryCommands: a memory prefix command is answered and not stored; when the
// channel's history is fetched later (the bot's first turn there in this process), neither the
// command nor the bot's answer to it is stored either.
func TestBackfillSkipsMemoryCommands(t *testing.T) {
	h := newHarness(t, nil)
	cmd := h.post(h.alice, "!banter memory show")
	answer := h.waitBot(1)
	if answer.ReplyTo() != cmd.ID {
		t.Fatalf("the command's answer replies to %q", answer.ReplyTo())
	}
	chat := h.post(h.bob, "what a day")
	trig := h.post(h.alice, mention(h.dsim.BotID())+" catch up?")
	if r := h.waitBot(2); r.ReplyTo() != trig.ID {
		t.Fatalf("reply references %q", r.ReplyTo())
	}
	h.waitLog(`"msg":"history_backfilled"`, `"ignored":2`)
	h.waitStored(chat.ID, "backfilled", func(store.Message) bool { return true })
	h.notStored(cmd.ID, "the backfill (a memory command)")
	h.notStored(answer.ID, "the backfill (the answer to a memory command)")
}
