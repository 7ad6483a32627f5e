package text_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/store"
)

func TestIngestStoresSyncsAndFilters(t *testing.T) {
	h := newHarness(t, nil)
	other := h.dsim.CreateBotUser("otherbot")
	h.dsim.AddMember(h.guild, other)
	thread, err := h.dsim.CreateThread(h.general, h.alice, "side chat")
	if err != nil {
		t.Fatal(err)
	}

	m := h.post(h.alice, "first draft")
	reply := h.post(h.bob, "nice", discordsim.ReplyTo(m.ID))
	botMsg, err := h.dsim.Post(h.ctx, other, h.general, "beep boop banter")
	if err != nil {
		t.Fatal(err)
	}
	inThread, err := h.dsim.Post(h.ctx, h.alice, thread, "in the thread")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.dsim.Edit(h.ctx, m.ID, "final draft"); err != nil {
		t.Fatal(err)
	}
	if err := h.dsim.Delete(h.ctx, reply.ID); err != nil {
		t.Fatal(err)
	}

	waitStored := func(id discordsim.MessageID, ok func(store.Message) bool) store.Message {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if got, err := h.st.Message(h.ctx, string(id)); err == nil && ok(got) {
				return got
			}
			time.Sleep(10 * time.Millisecond)
		}
		got, err := h.st.Message(h.ctx, string(id))
		t.Fatalf("message %s not stored as expected: %+v %v", id, got, err)
		return got
	}
	got := waitStored(m.ID, func(s store.Message) bool { return s.Content == "final draft" })
	if got.AuthorName != "alice" || got.EditedAt.IsZero() || got.GuildID != string(h.guild) {
		t.Errorf("stored %+v", got)
	}
	got = waitStored(reply.ID, func(s store.Message) bool { return s.Deleted })
	if got.ReplyToID != string(m.ID) {
		t.Errorf("reply_to not stored: %+v", got)
	}
	got = waitStored(inThread.ID, func(store.Message) bool { return true })
	if got.ThreadID != string(thread) {
		t.Errorf("thread not stored: %+v", got)
	}
	if _, err := h.st.Message(h.ctx, string(botMsg.ID)); err == nil {
		t.Error("another bot's message was stored")
	}
	// The bot's own messages are stored and flagged.
	h.post(h.alice, "banter, hello")
	own := h.waitBot(1)
	// Two saves race (the gateway's echo, then or before the sender's record with the persona).
	got = waitStored(own.ID, func(s store.Message) bool { return s.IsSelf && s.Persona != "" })
	if got.Persona != "default" {
		t.Errorf("own message persona = %q", got.Persona)
	}
}

func TestBlockedUsersAndChannelAllowList(t *testing.T) {
	h := newHarness(t, nil)
	random := h.dsim.CreateTextChannel(h.guild, "random")
	thread, err := h.dsim.CreateThread(h.general, h.bob, "thread")
	if err != nil {
		t.Fatal(err)
	}
	h.reconfigure(func(c *config.Config) {
		c.Permissions.BlockedUserIDs = []string{string(h.bob)}
		c.Permissions.AllowedChannelIDs = []string{string(h.general)}
	})
	h.post(h.bob, "banter, answer me!")
	if _, err := h.dsim.Post(h.ctx, h.alice, random, "banter, over here"); err != nil {
		t.Fatal(err)
	}
	tm, err := h.dsim.Post(h.ctx, h.alice, thread, "banter, in a thread of an allowed channel")
	if err != nil {
		t.Fatal(err)
	}
	r := h.waitBot(1)
	if r.ReplyTo() != tm.ID {
		t.Errorf("first reply went to %q, want the thread message %q", r.ReplyTo(), tm.ID)
	}
	// A later message in #general is answered next: the gateway's events are handled in order,
	// so bob's and #random's were dropped before it.
	later := h.post(h.alice, "banter, still there?")
	if r := h.waitBot(2); r.ReplyTo() != later.ID {
		t.Errorf("second reply went to %q, want %q", r.ReplyTo(), later.ID)
	}
	if n := len(h.botMessages()); n != 2 {
		t.Errorf("bot answered %d messages, want the thread one and the later one", n)
	}
}

func TestQueueShedsUnaddressedFirst(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Activity.QueueCapacity = 2
		c.Activity.ReplyCoalesceWindowSeconds = 1
		c.Activity.ReplyCoalesceMaxMessages = 100
	})
	h.initiativeIn(h.general)
	a := h.post(h.bob, "chatter one")
	h.post(h.bob, "chatter two")
	c := h.post(h.alice, "banter, important question")
	d := h.post(h.alice, "banter, second important question")
	h.waitLog(`"msg":"turn_shed"`, string(a.ID), `"addressed":false`)
	r := h.waitBot(1)
	if r.ReplyTo() != d.ID {
		t.Errorf("answered %q, want the latest addressed %q", r.ReplyTo(), d.ID)
	}
	line := h.waitLog(`"msg":"sent_reply"`)
	if !strings.Contains(line, string(c.ID)) {
		t.Errorf("addressed turn %s missing from the batch: %s", c.ID, line)
	}
}

func TestSlashPersonaCommand(t *testing.T) {
	h := newHarness(t, nil)
	ix, err := h.dsim.InvokeCommand(h.alice, h.general, "persona",
		discordsim.CommandOption{Name: "preferred_name", Type: 3, Value: "Ali"},
		discordsim.CommandOption{Name: "pronouns", Type: 3, Value: "she/her"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := simtest.WaitInteractionResponse(h.ctx, h.dsim, ix.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Content string `json:"content"`
		Flags   int    `json:"flags"`
	}
	json.Unmarshal(resp.Data, &data)
	if !strings.Contains(data.Content, "goes by Ali") || data.Flags&64 == 0 {
		t.Errorf("persona response = %+v", data)
	}
	// The persona reaches the model's participants block.
	h.post(h.alice, "banter, who am I?")
	h.waitBot(1)
	p := h.generations()[0].Prompt
	if !strings.Contains(p, "goes by Ali; pronouns she/her") {
		t.Errorf("participants block lacks the persona:\n%s", p)
	}
}

// TestShutdownRacingIntake feeds addressed turns while Shutdown runs: every turn is either
// answered before Shutdown returns or shed as shutting_down, never started after it.
func TestShutdownRacingIntake(t *testing.T) {
	h := newHarness(t, nil)
	const n = 24
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		ids[i] = strconv.FormatInt(1310000000000000000+int64(i)<<22, 10)
		wg.Go(func() {
			if i%2 == 1 {
				time.Sleep(time.Duration(i) * 100 * time.Microsecond)
			}
			h.svc.HandleMessageCreate(&discordgo.Message{ID: ids[i], ChannelID: string(h.general),
				GuildID: string(h.guild), Content: "banter, question " + ids[i],
				Author: &discordgo.User{ID: string(h.alice), Username: "alice"}})
		})
	}
	time.Sleep(time.Millisecond)
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	if err := h.svc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	logs := h.logs.String()
	if strings.Contains(logs, `"msg":"reply_failed"`) || strings.Contains(logs, `"msg":"send_failed"`) {
		t.Errorf("a turn was worked on after Shutdown returned:\n%s", h.tail())
	}
	for _, id := range ids {
		answered := false
		shed := false
		for _, line := range strings.Split(logs, "\n") {
			answered = answered || strings.Contains(line, `"msg":"sent_`) && strings.Contains(line, id)
			shed = shed || strings.Contains(line, `"msg":"turn_shed"`) && strings.Contains(line, `"reason":"shutting_down"`) && strings.Contains(line, id)
		}
		if !answered && !shed {
			t.Errorf("turn %s neither answered nor shed:\n%s", id, h.tail())
		}
	}
}
