package text_test

import (
	"strconv"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/store"
)

// TestOpenTurnsAfterRestart: a turn a crashed process left open (admitted, its message stored,
// no outcome) is answered by the next process, once; one already answered (a crash after the
// send, before the close) is closed without a second reply; one older than
// text.catchUpMaxAgeMinutes, or whose message is gone, is explained in the log by id.
func TestOpenTurnsAfterRestart(t *testing.T) {
	tests := []struct {
		name string
		// answeredLive: the bot answers it before the crash (the turn is then reopened).
		answeredLive bool
		deleted      bool
		age          time.Duration // how long the bot stays down
		wantLog      []string
		wantReplies  int
	}{
		{name: "requeued", wantLog: []string{`"msg":"turn_recovered"`, `"result":"requeued"`}, wantReplies: 1},
		{name: "already answered", answeredLive: true, wantLog: []string{`"msg":"turn_recovered"`, `"result":"already_answered"`}, wantReplies: 1},
		{name: "expired", age: 20 * time.Minute, wantLog: []string{`"msg":"message_ignored"`, `"reason":"open_turn_expired"`}},
		{name: "gone", deleted: true, wantLog: []string{`"msg":"message_ignored"`, `"reason":"open_turn_gone"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			var m discordsim.Message
			if tt.answeredLive {
				m = h.post(h.alice, mention(h.dsim.BotID())+" answer me once")
				h.waitBot(1)
				h.waitLog(`"msg":"sent_reply"`, string(m.ID))
			}
			h.shutdown()
			if !tt.answeredLive {
				m = h.post(h.alice, mention(h.dsim.BotID())+" answer me once") // as if seen and stored before a crash
			}
			st, err := store.Open(h.ctx, h.dbPath)
			if err != nil {
				t.Fatal(err)
			}
			rec := store.Message{ID: string(m.ID), ChannelID: string(m.ChannelID), GuildID: string(h.guild),
				AuthorID: string(m.Author), Content: m.Content, CreatedAt: m.Timestamp}
			if err := st.SaveMessage(h.ctx, rec); err != nil {
				t.Fatal(err)
			}
			if err := st.OpenTurn(h.ctx, store.Turn{MessageID: rec.ID, ChannelID: rec.ChannelID, GuildID: rec.GuildID,
				AdmittedAt: m.Timestamp}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			if tt.deleted {
				if err := h.dsim.Delete(h.ctx, m.ID); err != nil {
					t.Fatal(err)
				}
			}
			h.clock.Advance(tt.age)
			h.start()
			h.waitLog(append(tt.wantLog, string(m.ID))...)
			if tt.wantReplies > 0 {
				h.waitBot(tt.wantReplies)
			}
			h.shutdown() // nothing more can be posted
			replies := 0
			for _, r := range h.botMessages() {
				if r.ReplyTo() == m.ID {
					replies++
				}
			}
			if replies != tt.wantReplies {
				t.Errorf("%d replies to the open turn's message, want %d", replies, tt.wantReplies)
			}
			open, err := reopen(t, h).OpenTurns(h.ctx, string(h.guild))
			if err != nil || len(open) != 0 {
				t.Errorf("open turns after recovery: %v, %v; want none", open, err)
			}
		})
	}
}

// reopen opens the harness's database (the bot stopped), closed at cleanup.
func reopen(t *testing.T, h *harness) *store.SQLite {
	st, err := store.Open(h.ctx, h.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestCatchUpPagesPastTheStaleRange: after downtime with more missed messages than the stale
// pages read (5 × 100), the rest of the messages older than text.catchUpMaxAgeMinutes is
// skipped with the range logged, and the catch-up pages on within the bound: an addressed
// message 121 messages into it is answered.
func TestCatchUpPagesPastTheStaleRange(t *testing.T) {
	h := newHarness(t, nil)
	h.post(h.alice, mention(h.dsim.BotID())+" hello")
	h.waitBot(1)
	h.shutdown()
	for i := range 610 {
		h.post(h.bob, "old filler "+strconv.Itoa(i))
	}
	h.clock.Advance(20 * time.Minute)
	for i := range 120 {
		h.post(h.bob, "new filler "+strconv.Itoa(i))
	}
	asked := h.post(h.alice, mention(h.dsim.BotID())+" still there after all that?")
	h.start()
	if r := h.waitBot(2); r.ReplyTo() != asked.ID {
		t.Errorf("reply references %q, want %q", r.ReplyTo(), asked.ID)
	}
	h.waitLog(`"msg":"catch_up_skipped"`, `"reason":"older_than_max_age"`)
	h.waitLog(`"msg":"catch_up"`, `"from":"stored"`, `"stale":500`, `"new":621`, `"skipped":true`, `"truncated":false`)
}
