package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestKill9BetweenCatchUpWriteAndPipeline: three members' messages posted while banter was not
// running, in a channel where it speaks up on its own (each message its own turn), then one
// addressed to it. The startup catch-up stores the three in one write, then feeds them through
// the pipeline; the model holds the reply to the first, and `banter run` is killed with SIGKILL
// there: the three are stored, none handled to its end (the addressed one is queued behind
// them, its turn open, or not read yet). The process started next on the same database must
// take the three up again (catch_up from=unhandled taken_up=3, not a start after the newest
// stored message, which passed them over) and answer each of the four once.
func TestKill9BetweenCatchUpWriteAndPipeline(t *testing.T) {
	ctx := context.Background()
	arrived := make(chan struct{})
	var once sync.Once
	var ids []discordsim.MessageID
	o := newOSBot(t, ctx, banterBinary(t), `  replyCoalesceMaxMessages: 1
permissions:
  allowInitiativeReplies: true
  initiativeChannelIds: ["$CHANNEL"]
llm:
  maxRetries: 0
  timeoutSeconds: 300
`, func(b *botProcess) {
		// The first model request (the first message's turn) hangs until the client gives up
		// (here: is killed); its arrival is signalled.
		hold := openaisim.Rule{Name: "hold", Fault: openaisim.Fault{Timeout: true}, Times: 1,
			Respond: func(openaisim.Request) openaisim.Reply { once.Do(func() { close(arrived) }); return openaisim.Reply{} }}
		if err := b.osim.AddRule(hold); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			m, err := b.dsim.Post(ctx, b.bob, b.ch, fmt.Sprintf("catchupseen chatter %d about the weekend", i))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		ids = append(ids, b.postIn(t, ctx, b.ch, "catchupseen: and what do you think?"))
	})
	g, cancel := guard(ctx)
	defer cancel()
	select {
	case <-arrived: // the page is stored; the pipeline is generating the first message's reply
	case <-g.Done():
		t.Fatalf("no model request for the caught-up messages:\n%s", o.logs.String())
	}
	if err := o.end(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if n := len(botMessages(o.dsim, o.ch)); n != 0 {
		t.Fatalf("the killed process posted %d messages, want none", n)
	}

	off := o.logs.Len()
	o.start(t, ctx)
	o.waitCaughtUp(t, ctx, off, o.ch)
	for _, l := range o.logs.since(off) {
		if l.msg() == "catch_up" && l.str("channel_id") == string(o.ch) {
			if l.str("from") != "unhandled" || l["taken_up"] != float64(3) {
				t.Fatalf("the restarted catch-up started from=%s taken_up=%v, want from=unhandled taken_up=3: the stored, "+
					"unhandled messages were passed over\n%s", l.str("from"), l["taken_up"], o.logs.String())
			}
		}
	}
	sent := func() map[string]int {
		n := map[string]int{}
		for _, l := range o.logs.since(0) {
			if l.msg() == "sent_message" || l.msg() == "sent_reply" {
				n[l.str("message_id")]++
			}
		}
		return n
	}
	g2, cancel2 := guard(ctx)
	defer cancel2()
	if !o.logs.wait(g2, func() bool { return len(sent()) >= len(ids) }) {
		t.Fatalf("the messages taken up were not all answered: %v\n%s", sent(), o.logs.String())
	}
	if err := o.stop(); err != nil {
		t.Errorf("bot: %v", err)
	}
	got := sent()
	for _, id := range ids {
		if got[string(id)] != 1 {
			t.Errorf("message %s answered %d times, want once", id, got[string(id)])
		}
	}
	if n := len(botMessages(o.dsim, o.ch)); n != len(ids) {
		t.Errorf("the bot posted %d messages, want %d (one answer each)\n%s", n, len(ids), o.logs.String())
	}
}

// botMessages returns the bot's messages in channel ch.
func botMessages(d *discordsim.Server, ch discordsim.ChannelID) []discordsim.Message {
	var out []discordsim.Message
	for _, m := range d.Messages(ch) {
		if m.Author == d.BotID() {
			out = append(out, m)
		}
	}
	return out
}
