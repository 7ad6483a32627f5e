package main

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/post"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/world"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestKill9BetweenReplyParts: a reply too long for one Discord message goes out in three
// parts; `banter run` is killed with SIGKILL after the first part is posted, while the
// simulator holds the create of the second. The process started again on the same config and
// database finds the open turn already answered in part, and posts the rest of the same reply:
// every part once, in order, and nothing else.
func TestKill9BetweenReplyParts(t *testing.T) {
	ctx := context.Background()
	para := func(name string) string {
		return name + ": " + strings.TrimSpace(strings.Repeat(name+" words go on. ", 100))
	}
	reply := strings.Join([]string{para("first"), para("second"), para("third")}, "\n\n")
	parts := post.Split(reply, post.MaxLen)
	if len(parts) != 3 {
		t.Fatalf("the reply splits into %d parts, want 3", len(parts))
	}
	o := newOSBot(t, ctx, banterBinary(t), "", nil)
	o.waitCaughtUp(t, ctx, 0, o.ch)
	if err := o.osim.AddRule(openaisim.Rule{Name: "long", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses,
		InputPattern: "kill9_between_parts"}, Reply: openaisim.Reply{Text: reply}}); err != nil {
		t.Fatal(err)
	}
	// The first part's create goes through, the second's is held (until the kill: the bot
	// would give the attempt up after discord.sendAttemptTimeoutSeconds, 10 s).
	o.dsim.PassNext(discordsim.RouteMessageCreate, 1)
	o.dsim.HangNext(discordsim.RouteMessageCreate, 1)
	id := o.postIn(t, ctx, o.ch, "kill9_between_parts: tell me everything")
	g, cancel := guard(ctx)
	defer cancel()
	if _, err := simtest.WaitMessage(g, o.dsim, func(m discordsim.Message) bool { return m.ReplyTo() == id }); err != nil {
		t.Fatalf("no first part: %v\n%s", err, o.logs.String())
	}
	if err := o.dsim.Await(g, func() bool { return o.dsim.Holding() == 1 }); err != nil {
		t.Fatalf("the second part's create never came: %v\n%s", err, o.logs.String())
	}
	o.killAndRecover(t, ctx, id, nil)
	var got []string
	for _, m := range o.dsim.Messages(o.ch) {
		if m.Author == o.dsim.BotID() {
			got = append(got, m.Content)
		}
	}
	if !slices.Equal(got, parts) {
		t.Errorf("the bot posted %d messages, want the reply's %d parts once each, in order", len(got), len(parts))
		for i, c := range got {
			t.Logf("message %d: %.40q…", i, c)
		}
		t.Logf("bot log:\n%s", o.logs.String())
	}
}

// TestKill9AfterChannelMessage: an addressed turn in an initiative channel answered as a
// channel message (activity.initiativeReplyShare 0: no reply reference to its trigger); the
// create takes effect and `banter run` is killed with SIGKILL before its answer arrives, so the
// turn stays open. Past Discord's nonce window (the simulator's clock moved 6 minutes on), the
// process started again must recognise the answer by its text and not post a second one.
func TestKill9AfterChannelMessage(t *testing.T) {
	ctx := context.Background()
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	o := newOSBot(t, ctx, banterBinary(t), "  initiativeReplyShare: 0\npermissions:\n  initiativeChannelIds: [\"$CHANNEL\"]\n", nil,
		discordsim.WithClock(clock))
	o.waitCaughtUp(t, ctx, 0, o.ch)
	if err := o.osim.AddRule(openaisim.Rule{Name: "answer", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses,
		InputPattern: "kill9_after_channel_message"}, Reply: openaisim.Reply{Text: "Sailing is a fine idea."}}); err != nil {
		t.Fatal(err)
	}
	// The create takes effect, then its answer waits (until the kill closes the connection).
	o.dsim.SetRESTLatency(discordsim.RouteMessageCreate, 10*time.Minute)
	id := o.postIn(t, ctx, o.ch, "kill9_after_channel_message: should I take up sailing?")
	g, cancel := guard(ctx)
	defer cancel()
	mine := func(m discordsim.Message) bool { return m.Author == o.dsim.BotID() && m.ChannelID == o.ch }
	if _, err := simtest.WaitMessage(g, o.dsim, mine); err != nil {
		t.Fatalf("no answer: %v\n%s", err, o.logs.String())
	}
	o.killAndRecover(t, ctx, id, func() {
		o.dsim.SetRESTLatency(discordsim.RouteMessageCreate, 0)
		offset.Store(int64(world.NonceWindow + time.Minute))
	})
	var got []string
	for _, m := range o.dsim.Messages(o.ch) {
		if mine(m) {
			got = append(got, m.Content)
		}
	}
	if len(got) != 1 {
		t.Errorf("the bot posted %d messages, want its one answer: %q\n%s", len(got), got, o.logs.String())
	}
}

// killAndRecover kills the process with SIGKILL, runs meanwhile (nil: nothing) while it is
// down, starts it again on the same database, waits until it has recovered the open turn of
// message id, and stops it.
func (o *osBot) killAndRecover(t *testing.T, ctx context.Context, id discordsim.MessageID, meanwhile func()) {
	t.Helper()
	if err := o.end(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if meanwhile != nil {
		meanwhile()
	}
	off := o.logs.Len()
	o.start(t, ctx)
	o.waitLine(t, ctx, off, 1, "turn_recovered", map[string]string{"message_id": string(id)})
	if err := o.stop(); err != nil {
		t.Errorf("bot: %v", err)
	}
}
