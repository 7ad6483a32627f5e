package text_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

// outcome is what became of an addressed message: answered by a reply of its own, answered
// together with others (turn_coalesced), or dropped with a logged reason.
func (h *harness) outcome(id discordsim.MessageID) string {
	for _, m := range h.botMessages() {
		if m.ReplyTo() == id {
			return "answered"
		}
	}
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if !strings.Contains(line, `"`+string(id)+`"`) {
			continue
		}
		switch {
		case strings.Contains(line, `"msg":"turn_coalesced"`):
			return "answered"
		case strings.Contains(line, `"msg":"turn_shed"`), strings.Contains(line, `"msg":"reply_rate_limited"`),
			strings.Contains(line, `"msg":"send_lost"`):
			return "explained"
		}
	}
	return ""
}

// waitAccounted waits until every id has an outcome (or the guard deadline passes) and
// returns the counts by outcome ("" for unaccounted).
func (h *harness) waitAccounted(ids []discordsim.MessageID, guard time.Duration) map[string]int {
	h.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		counts := map[string]int{}
		for _, id := range ids {
			counts[h.outcome(id)]++
		}
		if counts[""] == 0 || time.Now().After(deadline) {
			return counts
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBurstNeverShedsAddressed: 200 messages within 10 s (of the simulators' clock), half of
// them addressed, with Discord's per-channel send limit of 5 per 5 s: the 100 addressed turns
// overflow the queue (capacity 16), every one is answered (alone or coalesced into a reply) and
// none is shed. (Unaddressed turns are not admitted here, initiative being off, so the queue
// drains before the harness shuts down; shedding them first is TestQueueShedsUnaddressedFirst.)
func TestBurstNeverShedsAddressed(t *testing.T) {
	h := newHarnessWith(t, false, []discordsim.Option{discordsim.WithRouteLimit(discordsim.RouteMessageCreate, 5, 5*time.Second)},
		func(c *config.Config) { c.Activity.QueueCapacity = 16 })
	var addressed []discordsim.MessageID
	for i := range 200 {
		h.clock.Advance(50 * time.Millisecond)
		if i%2 == 0 {
			addressed = append(addressed, h.post(h.alice, fmt.Sprintf("%s question %d?", mention(h.dsim.BotID()), i)).ID)
		} else {
			h.post(h.bob, fmt.Sprintf("chatter %d", i))
		}
	}
	counts := h.waitAccounted(addressed, 60*time.Second)
	if counts[""] > 0 || counts["explained"] > 0 {
		t.Errorf("addressed turns: %v (want all 100 answered)", counts)
	}
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"turn_shed"`) && strings.Contains(line, `"addressed":true`) {
			t.Errorf("addressed turn shed: %s", line)
		}
	}
}

// TestNoTypingWhenRateLimited: at the prompts-per-hour cap an addressed turn is declined
// (reply_rate_limited) and shows no typing indicator.
func TestNoTypingWhenRateLimited(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.MaxPromptsPerHour = 2
		c.Activity.ExplicitReservePromptsPerHour = 0
		c.Activity.PerUserPromptShare = 1 // the channel's cap, not alice's share, is what is reached
	})
	for i := range 2 {
		h.post(h.alice, fmt.Sprintf("%s question %d", mention(h.dsim.BotID()), i))
		h.waitBot(i + 1)
	}
	typingBefore := h.botTyping()
	var limited []discordsim.MessageID
	for i := range 5 {
		limited = append(limited, h.post(h.alice, fmt.Sprintf("%s more %d", mention(h.dsim.BotID()), i)).ID)
	}
	for _, id := range limited {
		h.waitLog(`"msg":"reply_rate_limited"`, string(id))
	}
	if n := h.botTyping() - typingBefore; n != 0 {
		t.Errorf("%d typing indicators for 5 rate-limited turns, want 0", n)
	}
}

func (h *harness) botTyping() int {
	n := 0
	for _, e := range h.dsim.Typing() {
		if e.User == h.dsim.BotID() && e.Channel == h.general {
			n++
		}
	}
	return n
}

// TestCatchUpAfterInvalidSession: discordgo answers op 9 with a new Identify, so a message
// posted before the new session is READY never arrives over the gateway; the catch-up after
// READY fetches it and it is answered, once.
func TestCatchUpAfterInvalidSession(t *testing.T) {
	h := newHarnessWith(t, false, []discordsim.Option{discordsim.WithIdentifySpacing(identifyHold)}, nil)
	first := h.post(h.alice, mention(h.dsim.BotID())+" hello?")
	if r := h.waitBot(1); r.ReplyTo() != first.ID {
		t.Fatalf("first reply references %q", r.ReplyTo())
	}
	readies := h.dsim.CountGateway(discordsim.GatewayIdentified)
	simtest.WaitHeartbeat(t, h.dsim) // a fault before it meets discordgo's heartbeat race
	if err := h.dsim.ForceInvalidSession(false); err != nil {
		t.Fatal(err)
	}
	missed := h.post(h.alice, mention(h.dsim.BotID())+" did you miss this one?") // no session: not delivered
	h.clock.Advance(identifyHold)                                                // the bot may identify again
	if _, err := simtest.WaitGateway(h.ctx, h.dsim, discordsim.GatewayIdentified, readies+1); err != nil {
		t.Fatal(err)
	}
	if r := h.waitBot(2); r.ReplyTo() != missed.ID {
		t.Errorf("second reply references %q, want the missed message %q", r.ReplyTo(), missed.ID)
	}
	h.waitLog(`"msg":"catch_up"`, `"reason":"ready"`, `"new":1`)
	// A later message is answered once: neither the catch-up nor the gateway doubles it.
	later := h.post(h.alice, mention(h.dsim.BotID())+" and now?")
	if r := h.waitBot(3); r.ReplyTo() != later.ID {
		t.Errorf("third reply references %q", r.ReplyTo())
	}
	if n := len(h.botMessages()); n != 3 {
		t.Errorf("bot sent %d messages, want 3", n)
	}
}

// TestCatchUpAfterResumeHandlesOnce: after a dropped connection the resume replays what was
// missed and the catch-up fetches it too; the message is answered once.
func TestCatchUpAfterResumeHandlesOnce(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.alice, mention(h.dsim.BotID())+" hello?")
	h.waitBot(1)
	resumes := h.dsim.CountGateway(discordsim.GatewayResumed)
	simtest.WaitHeartbeat(t, h.dsim) // a fault before it meets discordgo's heartbeat race
	if err := h.dsim.DropGateway(); err != nil {
		t.Fatal(err)
	}
	missed := h.post(h.alice, mention(h.dsim.BotID())+" still there?")
	if _, err := simtest.WaitGateway(h.ctx, h.dsim, discordsim.GatewayResumed, resumes+1); err != nil {
		t.Fatal(err)
	}
	h.waitLog(`"msg":"catch_up"`, `"reason":"resumed"`)
	if r := h.waitBot(2); r.ReplyTo() != missed.ID {
		t.Errorf("reply references %q, want %q", r.ReplyTo(), missed.ID)
	}
	h.post(h.alice, mention(h.dsim.BotID())+" ping")
	h.waitBot(3)
	replies := 0
	for _, m := range h.botMessages() {
		if m.ReplyTo() == missed.ID {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("missed message answered %d times, want 1", replies)
	}
}

// TestReplySurvivesServerErrors: Discord answering 500 or 503 to the reply's create does not
// lose the reply (discordgo alone retries only 502); a create that took effect but whose answer
// was lost is not posted twice (nonce + enforce_nonce).
func TestReplySurvivesServerErrors(t *testing.T) {
	h := newHarness(t, nil)
	h.dsim.FailNext(discordsim.RouteMessageCreate, 1, http.StatusInternalServerError)
	first := h.post(h.alice, mention(h.dsim.BotID())+" one?")
	if r := h.waitBot(1); r.ReplyTo() != first.ID {
		t.Fatalf("reply references %q, want %q", r.ReplyTo(), first.ID)
	}
	h.dsim.FailNextAfterCommit(discordsim.RouteMessageCreate, 1, http.StatusServiceUnavailable)
	second := h.post(h.alice, mention(h.dsim.BotID())+" two?")
	if r := h.waitBot(2); r.ReplyTo() != second.ID {
		t.Fatalf("reply references %q, want %q", r.ReplyTo(), second.ID)
	}
	h.waitLog(`"msg":"sent_reply"`, string(second.ID))
	third := h.post(h.alice, mention(h.dsim.BotID())+" three?")
	h.waitBot(3)
	replies := 0
	for _, m := range h.botMessages() {
		if m.ReplyTo() == second.ID {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("the reply whose answer was lost was posted %d times, want 1", replies)
	}
	if r := h.botMessages()[2]; r.ReplyTo() != third.ID {
		t.Errorf("third reply references %q", r.ReplyTo())
	}
}

// TestLostSendNamesEveryCoalescedTurn: two addressed messages answered together (one reply),
// and Discord refuses every attempt to post it: the loss is logged under both turns' ids (the
// second with coalesced_into naming the first), so neither turn goes unexplained.
func TestLostSendNamesEveryCoalescedTurn(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 3 // long enough for both posts to share a batch
	})
	h.dsim.FailNext(discordsim.RouteMessageCreate, 1000, http.StatusServiceUnavailable)
	first := h.post(h.alice, mention(h.dsim.BotID())+" first question?")
	second := h.post(h.alice, mention(h.dsim.BotID())+" and a second one?")
	h.waitLog(`"msg":"turn_coalesced"`, string(first.ID), `"into":"`+string(second.ID)+`"`)
	h.waitLog(`"msg":"send_lost"`, `"turn_id":"`+string(second.ID)+`"`)
	h.waitLog(`"msg":"send_lost"`, `"turn_id":"`+string(first.ID)+`"`, `"coalesced_into":"`+string(second.ID)+`"`)
	if got := h.waitAccounted([]discordsim.MessageID{first.ID, second.ID}, 0); got["explained"]+got["answered"] != 2 {
		t.Errorf("outcomes %v, want both turns accounted for", got)
	}
}
