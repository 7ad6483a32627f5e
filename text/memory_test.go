package text_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/memory"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/storetest"
)

// newExtractor is the harness's memory extractor and embedder on the same model client (nil
// with memory off).
func (h *harness) newExtractor(cfg *config.Config, st store.Store, client *llm.Client, logger *slog.Logger) (*memory.Extractor, *memory.Embedder) {
	if !cfg.Memory.Enabled {
		return nil, nil
	}
	em, err := memory.NewEmbedder(h.cfg.Load, st, client, logger, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	ex, err := memory.New(memory.Options{Config: h.cfg.Load, Store: st, Model: client, Logger: logger, Embedder: em})
	if err != nil {
		h.t.Fatal(err)
	}
	return ex, em
}

// memoryOn turns memory on with batches of one message and the memory model answered by rule.
func memoryOn(c *config.Config) {
	c.Memory.Enabled, c.Memory.BatchMessages, c.MemoryLLM.Model = true, 1, "memory-model"
}

// slashMemory runs /memory SUB as u in #general and returns the answer's text and flags.
func (h *harness) slashMemory(u discordsim.UserID, sub string, opts ...discordsim.CommandOption) (string, int) {
	h.t.Helper()
	ix, err := h.dsim.InvokeCommand(u, h.general, "memory", discordsim.CommandOption{Name: sub, Type: 1, Options: opts})
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := simtest.WaitInteractionResponse(h.ctx, h.dsim, ix.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	var data struct {
		Content string `json:"content"`
		Flags   int    `json:"flags"`
	}
	json.Unmarshal(resp.Data, &data)
	return data.Content, data.Flags
}

// TestMemoryCommands: /memory show lists a member's facts of this guild only, privately;
// forget removes one by its number; pause stops extraction until resume; the prefix form
// answers in the channel and its command message is never stored.
func TestMemoryCommands(t *testing.T) {
	h := newHarness(t, memoryOn, openaisim.Rule{Match: openaisim.Match{Model: "memory-model"}, Respond: func(r openaisim.Request) openaisim.Reply {
		return openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: `{"facts":[]}`}}}
	}})
	ctx := context.Background()
	guild := string(h.guild)
	for i, st := range []string{"alice plays chess", "alice has a cat named Miso"} {
		h.st.AddFact(ctx, store.Fact{GuildID: guild, SubjectID: string(h.alice), Statement: st, CreatedAt: time.Date(2026, 11, 1, i, 0, 0, 0, time.UTC)})
	}
	h.st.AddFact(ctx, store.Fact{GuildID: "another-guild", SubjectID: string(h.alice), Statement: "alice lives elsewhere"})

	text, flags := h.slashMemory(h.alice, "show")
	if flags&64 == 0 || !strings.Contains(text, "1. alice has a cat named Miso") || !strings.Contains(text, "2. alice plays chess") || strings.Contains(text, "elsewhere") {
		t.Errorf("show = %q (flags %d)", text, flags)
	}
	text, _ = h.slashMemory(h.alice, "forget", discordsim.CommandOption{Name: "number", Type: 4, Value: 1})
	if !strings.Contains(text, "Forgotten") {
		t.Errorf("forget = %q", text)
	}
	if text, _ = h.slashMemory(h.alice, "show"); strings.Contains(text, "Miso") || !strings.Contains(text, "1. alice plays chess") {
		t.Errorf("show after forget = %q", text)
	}
	if text, _ = h.slashMemory(h.bob, "forget", discordsim.CommandOption{Name: "number", Type: 4, Value: 1}); !strings.Contains(text, "no fact number 1") {
		t.Errorf("bob forgetting alice's fact: %q", text)
	}

	h.slashMemory(h.bob, "pause")
	h.waitLog(`"msg":"memory_paused"`, `"user_id":"`+string(h.bob)+`"`)
	paused := h.post(h.bob, "my secret word is plutonium")
	h.waitStored(paused.ID, "stored", func(store.Message) bool { return true })
	h.slashMemory(h.bob, "resume")
	h.waitLog(`"msg":"memory_resumed"`, `"user_id":"`+string(h.bob)+`"`)
	resumed := h.post(h.bob, "I like trains")
	h.waitLog(`"msg":"memory_extracted"`, string(resumed.ID))
	for _, r := range h.requestsOf("memory-model") {
		if strings.Contains(r.LastUserText, "plutonium") {
			t.Errorf("a paused member's words reached the memory model: %s", r.LastUserText)
		}
	}

	cmd := h.post(h.alice, "!banter memory forget-me")
	reply := h.waitBot(1)
	if reply.ReplyTo() != cmd.ID || !strings.Contains(reply.Content, "I forgot 1 fact about you") {
		t.Errorf("prefix forget-me answered %q (to %s)", reply.Content, reply.ReplyTo())
	}
	if _, err := h.st.Message(ctx, string(cmd.ID)); err == nil {
		t.Error("the command message was stored")
	}
	if fs, _ := h.st.Facts(ctx, store.FactQuery{GuildID: "another-guild"}); len(fs) != 1 {
		t.Errorf("forget-me reached another guild: %+v", fs)
	}
}

// BenchmarkMessageToSendMemory is BenchmarkMessageToSend with memory off and on, in one run:
// on, every message is also extracted and embedded (batches of 8 on the same simulated model
// latency, search by meaning on) and every turn's prompt reads the facts of a guild holding 500
// (recall by participants and words: the asker's facts, and those sharing a word with the
// message). The two bots run side by side and are measured in alternating rounds (which goes
// first swaps every round), so drift of the machine's load falls on both; after each round of
// the memory bot its extraction is waited for, so none of its work spills into the other's
// round. x-memory-off is the ratio of the medians.
//
//	go test -run '^$' -bench MessageToSendMemory -benchtime 500x ./text
func BenchmarkMessageToSendMemory(b *testing.B) {
	n := max(b.N, 50)
	const rounds = 10
	per := max(n/rounds, 10)
	off, on := memoryBot(b, false), memoryBot(b, true)
	var roff, ron loadResult
	for r := range rounds {
		bots := []*memoryBench{off, on}
		if r%2 == 1 {
			bots[0], bots[1] = on, off
		}
		for _, m := range bots {
			res := runLoad(b, m.h.dsim, m.h.osim, m.chans, m.alice, per)
			if m.h.mem != nil {
				m.h.mem.Flush() // its batches done before the other bot's round
			}
			m.res.overheads = append(m.res.overheads, res.overheads...)
			m.res.coalesced += res.coalesced
		}
	}
	roff, ron = off.res, on.res
	b.StopTimer()
	moff, mon := roff.quantile(0.5), ron.quantile(0.5)
	b.ReportMetric(float64(moff.Microseconds())/1000, "off-median-ms")
	b.ReportMetric(float64(mon.Microseconds())/1000, "on-median-ms")
	b.ReportMetric(float64(mon)/float64(max(moff, time.Microsecond)), "x-memory-off")
}

// memoryBench is one bot of BenchmarkMessageToSendMemory and what it measured.
type memoryBench struct {
	h     *harness
	chans []discordsim.ChannelID
	alice discordsim.UserID
	res   loadResult
}

func memoryBot(b *testing.B, on bool) *memoryBench {
	embedRule := openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointEmbeddings}, Latency: openaisim.Latency{TimeToFirstToken: benchModel}}
	memRule := openaisim.Rule{Match: openaisim.Match{Model: "memory-model"}, Latency: openaisim.Latency{TimeToFirstToken: benchModel},
		Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: `{"facts":[]}`}}}}
	h := newHarnessWith(b, true, benchLimits, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 0
		c.Activity.MaxPromptsPerHour = 100000
		c.Activity.ExplicitReservePromptsPerHour = 0
		if on {
			c.Memory.Enabled, c.MemoryLLM.Model, c.Embeddings.Enabled = true, "memory-model", true
		}
	}, memRule, embedRule, benchRule)
	g, chans, alice := benchGuild(h.dsim)
	if on {
		// 500 facts of 40 members, a tenth of them alice's (the asker: her facts are read every
		// turn), in the forms people state them.
		kinds, names := []string{"cat", "dog", "parrot", "rabbit", "turtle"}, []string{"Miso", "Rex", "Kiwi", "Luna", "Tofu", "Mango"}
		for i := range 500 {
			subject, name := fmt.Sprintf("9%017d", i%40), fmt.Sprintf("member%d", i%40)
			if i%10 == 0 {
				subject, name = string(alice), "alice"
			}
			if _, err := h.st.AddFact(context.Background(), store.Fact{GuildID: string(g), SubjectID: subject, SubjectName: name,
				Statement: fmt.Sprintf("%s has a %s named %s%d", name, kinds[i%len(kinds)], names[i%len(names)], i), SourceIDs: []string{fmt.Sprint(i)}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return &memoryBench{h: h, chans: chans, alice: alice}
}

// noFacts answers every extraction with no facts.
func noFacts() openaisim.Rule {
	return openaisim.Rule{Match: openaisim.Match{Model: "memory-model"}, Respond: func(openaisim.Request) openaisim.Reply {
		return openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: `{"facts":[]}`}}}
	}}
}

// TestForgetMeWhileReplying: alice asks banter something; while its reply is with the model
// she runs /memory forget-me. banter still answers her on Discord, but its reply (derived from
// her words) is not stored after forget-me, neither from the send nor from its gateway echo;
// a message of hers said before forget-me and delivered only after it (a late gateway event:
// the clock set back) is neither stored nor answered; what she says after is stored as usual.
// Nothing of hers is left in the database.
func TestForgetMeWhileReplying(t *testing.T) {
	gate := openaitest.NewGate()
	held := toolReply("Miso", "reply", "", "Poor Miso! A vet visit sounds wise.")
	held.Latency = openaisim.Latency{TimeToFirstToken: openaitest.HeldDelay}
	h := newHarnessSims(t, false, nil, []openaisim.Option{gate.Option()}, func(c *config.Config) { memoryOn(c) }, noFacts(), held)
	ctx := context.Background()
	asked := h.post(h.alice, "bants, my cat Miso is sick, what should I do?")
	if !gate.Arrived(h.ctx) {
		t.Fatalf("the reply never reached the model; logs:\n%s", h.tail())
	}
	if text, _ := h.slashMemory(h.alice, "forget-me"); !strings.Contains(text, "I forgot") {
		t.Fatalf("forget-me = %q", text)
	}
	gate.Release()
	reply := h.waitBot(1)
	if reply.ReplyTo() != asked.ID {
		t.Errorf("the reply answers %s, want her question %s", reply.ReplyTo(), asked.ID)
	}
	if h.settled(reply.ID, "ingest") {
		t.Error("banter's reply to her words, sent after forget-me, was stored")
	}
	h.clock.Advance(-time.Minute) // a message she sent before forget-me, delivered only now
	late := h.post(h.alice, "also Miso hates the carrier")
	if h.settled(late.ID, "ingest") {
		t.Error("her message from before forget-me was stored after it")
	}
	h.clock.Advance(2 * time.Minute)
	after := h.post(h.alice, "I adopted a dog named Rex")
	h.waitStored(after.ID, "after forget-me", func(store.Message) bool { return true })
	if n := len(h.botMessages()); n != 1 {
		t.Errorf("banter sent %d messages, want its one reply (not to the late message)", n)
	}
	hits, err := storetest.Scan(ctx, "sqlite", h.dbPath, []string{"Miso", "vet visit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range hits {
		t.Errorf("%s still holds %q after forget-me: %s", hit.Table, hit.Needle, hit.Row)
	}
	// Her id is only on what she said after forget-me.
	hits, _ = storetest.Scan(ctx, "sqlite", h.dbPath, []string{string(h.alice)})
	for _, hit := range hits {
		if !strings.Contains(hit.Row, string(after.ID)) && !strings.Contains(hit.Row, "Rex") {
			t.Errorf("%s still holds her id: %s", hit.Table, hit.Row)
		}
	}
}

// TestForgetMeThenHistory: Discord still has alice's messages after her forget-me; when a new
// process fetches the channel's history again (its catch-up, the first turn's backfill), her
// messages from before are not stored again.
func TestForgetMeThenHistory(t *testing.T) {
	h := newHarness(t, memoryOn, noFacts(), toolReply("hello", "reply", "", "Hi bob!"))
	said := h.post(h.alice, "my cat Miso loves the windowsill")
	h.waitStored(said.ID, "before forget-me", func(store.Message) bool { return true })
	if text, _ := h.slashMemory(h.alice, "forget-me"); !strings.Contains(text, "I forgot") {
		t.Fatalf("forget-me = %q", text)
	}
	h.restart()
	asked := h.post(h.bob, "bants, hello there")
	if r := h.waitBot(1); r.ReplyTo() != asked.ID {
		t.Fatalf("the reply answers %s, want %s", r.ReplyTo(), asked.ID)
	}
	if h.settled(said.ID, "") {
		t.Error("her message from before forget-me was stored again from Discord's history")
	}
	hits, err := storetest.Scan(context.Background(), "sqlite", h.dbPath, []string{"Miso", string(h.alice)})
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range hits {
		t.Errorf("%s holds %q after forget-me and a history fetch: %s", hit.Table, hit.Needle, hit.Row)
	}
}

// settled waits until message id is stored or its save refused (memory_write_refused by op, or
// by any with op "") and reports whether it is stored.
func (h *harness) settled(id discordsim.MessageID, op string) bool {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a failure guard, not a timing assertion
	for {
		if _, err := h.st.Message(h.ctx, string(id)); err == nil {
			return true
		}
		for _, line := range strings.Split(h.logs.String(), "\n") {
			if strings.Contains(line, `"msg":"memory_write_refused"`) && (op == "" || strings.Contains(line, `"op":"`+op+`"`)) && strings.Contains(line, string(id)) {
				return false
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("message %s neither stored nor refused; logs:\n%s", id, h.tail())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestForgetMeDropsQueuedTurns: alice asks banter twice; while the first reply is with the
// model (the second turn waiting in the channel's queue behind it) she runs /memory
// forget-me. The first is still answered (it was being answered); the second, said before
// forget-me, is not: dropped when the attempt takes it (message_ignored reason=forgotten,
// counted), and no prompt-ledger row or turn naming it is written after forget-me.
func TestForgetMeDropsQueuedTurns(t *testing.T) {
	gate := openaitest.NewGate()
	held := toolReply("Miso", "reply", "", "Poor Miso! A vet visit sounds wise.")
	held.Latency = openaisim.Latency{TimeToFirstToken: openaitest.HeldDelay}
	h := newHarnessSims(t, false, nil, []openaisim.Option{gate.Option()}, func(c *config.Config) { memoryOn(c) },
		noFacts(), toolReply("carrier", "reply", "", "A soft carrier is easier."), held)
	first := h.post(h.alice, "bants, my cat Miso is sick, what should I do?")
	if !gate.Arrived(h.ctx) {
		t.Fatalf("the reply never reached the model; logs:\n%s", h.tail())
	}
	queued := h.post(h.alice, "bants, and should I buy a carrier?")
	h.waitStored(queued.ID, "queued", func(store.Message) bool { return true })
	if text, _ := h.slashMemory(h.alice, "forget-me"); !strings.Contains(text, "I forgot") {
		t.Fatalf("forget-me = %q", text)
	}
	gate.Release()
	if r := h.waitBot(1); r.ReplyTo() != first.ID {
		t.Errorf("the reply answers %s, want the question being answered %s", r.ReplyTo(), first.ID)
	}
	h.shutdown() // waits for the attempt that takes the queued turn
	for _, m := range h.botMessages() {
		if m.ReplyTo() == queued.ID {
			t.Errorf("the queued turn was answered after forget-me: %q", m.Content)
		}
	}
	hits, err := storetest.Scan(context.Background(), "sqlite", h.dbPath, []string{string(h.alice), string(queued.ID)})
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range hits {
		t.Errorf("%s holds %s after forget-me: %s", hit.Table, hit.Needle, hit.Row)
	}
	h.waitLog(`"msg":"message_ignored"`, `"reason":"forgotten"`, `"source":"queue"`, string(queued.ID))
	if n := h.metric("banter_text_turns_shed_total", map[string]string{"addressed": "true", "reason": "forgotten"}); n != 1 {
		t.Errorf("forgotten turns counted: %v, want 1", n)
	}
}
