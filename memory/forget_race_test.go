package memory

import (
	"context"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/storetest"
)

// Work in flight when a member runs /memory forget-me must not write them back afterwards
// (docs/memory.md, "What forget-me guarantees"): an extraction whose answer comes back after
// it, a voice transcript queued before it and stored after it.

// answerHeld scripts the next extraction answer, held by the gate.
func (h *harness) answerHeld(args string) {
	h.t.Helper()
	if err := h.sim.AddRule(openaisim.Rule{Name: "memory held", Match: openaisim.Match{Model: "memory-model"}, Times: 1,
		Latency: openaisim.Latency{TimeToFirstToken: openaitest.HeldDelay},
		Reply:   openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: recordFactsName, Arguments: args}}}}); err != nil {
		h.t.Fatal(err)
	}
}

// forgetMe does what /memory forget-me does (text/memory_commands.go): drop the member's
// pending messages, then forget them in the store.
func (h *harness) forgetMe(guild, user string) {
	h.t.Helper()
	h.ex.Drop(guild, user)
	if _, err := h.st.ForgetMember(context.Background(), guild, user, time.Now()); err != nil {
		h.t.Fatal(err)
	}
}

// leftOf fails the test for every row of the database holding one of needles.
func (h *harness) leftOf(needles ...string) {
	h.t.Helper()
	hits, err := storetest.Scan(context.Background(), h.drv, h.dsn, needles)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, hit := range hits {
		h.t.Errorf("%s still holds %q after forget-me: %s", hit.Table, hit.Needle, hit.Row)
	}
}

const alice = "424242424242" // a member who runs forget-me

func forEachStore(t *testing.T, test func(t *testing.T, driver string)) {
	for _, d := range []string{"sqlite", "postgres"} {
		t.Run(d, func(t *testing.T) { test(t, d) })
	}
}

// TestForgetMeWhileExtracting: a batch holding alice's message is with the memory model when
// she runs forget-me; its answer, coming back after, names facts about her and facts one of
// whose sources is her message (beside another member's). None of them is stored; bob's own
// fact is; nothing of hers is left anywhere in the database, embeddings included.
func TestForgetMeWhileExtracting(t *testing.T) {
	forEachStore(t, func(t *testing.T, driver string) {
		g := openaitest.NewGate()
		h := newHarnessOn(t, 2, driver, g.Option())
		h.withEmbedder()
		h.answerHeld(`{"facts":[
			{"subject":"` + alice + `","statement":"Alice has a cat named Miso","source_message_ids":["1"],"supersedes":0,"same_as":0},
			{"subject":"` + alice + `","statement":"Alice plays in a band with Bob","source_message_ids":["1","2"],"supersedes":0,"same_as":0},
			{"subject":"server","statement":"The server has a garage band","source_message_ids":["1","2"],"supersedes":0,"same_as":0},
			{"subject":"u2","statement":"Bob plays bass","source_message_ids":["2"],"supersedes":0,"same_as":0}]}`)
		h.say("1", "g1", alice, "Alice", "I have a cat named Miso, and Bob is in my garage band")
		h.say("2", "g1", "u2", "Bob", "yes I play bass in it")
		g.Arrived(context.Background()) // the batch is with the model
		h.forgetMe("g1", alice)
		g.Release()
		h.ex.Flush()
		if got := h.current("g1"); got != "Bob plays bass" {
			t.Errorf("facts after forget-me = %q, want bob's only", got)
		}
		h.leftOf(alice, "Miso", "garage band")
	})
}

// TestForgetMeBeforeCaptureLands: a voice transcript alice said before forget-me, still
// queued when it ran, is not stored when its turn comes (nor extracted); what she says after
// forget-me is remembered as usual.
func TestForgetMeBeforeCaptureLands(t *testing.T) {
	forEachStore(t, func(t *testing.T, driver string) {
		h := newHarnessOn(t, 100, driver)
		ctx := context.Background()
		said := time.Now().Add(-time.Second) // queued before the forget-me below
		h.forgetMe("g1", alice)
		m := store.Message{ID: "voice-1", ChannelID: store.VoiceChannelID("vc"), GuildID: "g1", AuthorID: alice, AuthorName: "Alice",
			Content: "my cat Miso sleeps all day", CreatedAt: said}
		if stored, err := h.ex.Capture(ctx, m); stored || err != nil {
			t.Errorf("Capture of words said before forget-me = %v, %v; want not stored, no error", stored, err)
		}
		h.ex.Flush()
		if n := len(h.memoryRequests()); n != 0 {
			t.Errorf("%d extraction calls for words said before forget-me", n)
		}
		h.leftOf(alice, "Miso")

		later := store.Message{ID: "voice-2", ChannelID: store.VoiceChannelID("vc"), GuildID: "g1", AuthorID: alice, AuthorName: "Alice",
			Content: "I got a dog named Rex", CreatedAt: time.Now().Add(time.Minute)}
		if stored, err := h.ex.Capture(ctx, later); !stored || err != nil {
			t.Errorf("Capture after forget-me = %v, %v; want stored", stored, err)
		}
	})
}
