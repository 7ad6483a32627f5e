package text_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
)

// TestQueueShedReasonsAndSwamped: with the queue full, a new unaddressed turn is shed
// (queue_full); an addressed one displaces the oldest unaddressed turn
// (displaced_by_addressed); with no unaddressed turn left it is queued past the capacity, and
// past 4 × capacity it is answered at once with the "swamped" notice (turn_swamped). Each shed
// is counted by reason. The coalescing window is long, so nothing leaves the queue until
// shutdown, which answers the backlog in one reply.
func TestQueueShedReasonsAndSwamped(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.QueueCapacity = 2
		c.Activity.ReplyCoalesceWindowSeconds = 60
		c.Activity.ReplyCoalesceMaxMessages = 100
	})
	h.initiativeIn(h.general)
	u1 := h.post(h.bob, "chatter one")
	u2 := h.post(h.bob, "chatter two")
	u3 := h.post(h.bob, "chatter three")
	h.waitLog(`"msg":"turn_shed"`, `"reason":"queue_full"`, string(u3.ID), `"addressed":false`)
	var addressed []discordsim.MessageID
	for i := range 8 { // 2 displace u1 and u2, then 6 more fill the backlog to 4 × 2
		addressed = append(addressed, h.post(h.alice, fmt.Sprintf("banter, question %d?", i)).ID)
	}
	h.waitLog(`"msg":"turn_shed"`, `"reason":"displaced_by_addressed"`, string(u1.ID))
	h.waitLog(`"msg":"turn_shed"`, `"reason":"displaced_by_addressed"`, string(u2.ID))
	over := h.post(h.alice, "banter, are you keeping up?")
	h.waitLog(`"msg":"turn_swamped"`, string(over.ID), `"queue_depth":8`)
	r := h.waitBot(1)
	if r.ReplyTo() != over.ID || !strings.Contains(r.Content, "swamped") {
		t.Errorf("got %q replying to %q, want the swamped notice replying to %q", r.Content, r.ReplyTo(), over.ID)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"banter_text_turns_shed_total", map[string]string{"addressed": "false", "reason": "queue_full"}, 1},
		{"banter_text_turns_shed_total", map[string]string{"addressed": "false", "reason": "displaced_by_addressed"}, 2},
		{"banter_text_turns_shed_total", map[string]string{"addressed": "true", "reason": "queue_full"}, 0},
		{"banter_text_replies_total", map[string]string{"outcome": "swamped"}, 1},
	} {
		if got := h.metric(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	// Shutdown lets the queued work finish: the backlog of 8 addressed turns is one reply.
	h.shutdown()
	if got := h.waitAccounted(addressed, 0); got["answered"] != len(addressed) {
		t.Errorf("queued addressed turns after shutdown: %v, want all %d answered", got, len(addressed))
	}
	if n := len(h.botMessages()); n != 2 {
		t.Errorf("bot sent %d messages, want the notice and one reply for the backlog", n)
	}
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"turn_shed"`) && strings.Contains(line, `"addressed":true`) {
			t.Errorf("addressed turn shed: %s", line)
		}
	}
}
