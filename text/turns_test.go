package text_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

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

// orderStore records, for the catch-up race test, whether the live message was saved before
// the catch-up's start had been read from the store.
type orderStore struct {
	store.Store
	mu        sync.Mutex
	onRecent  func() // run once, at the first RecentMessages of the watched channel
	channel   string
	live      string // the live message's content
	startRead bool   // the watched channel's newest stored message has been read
	handled   bool   // the GUILD_CREATE's handlers have all run
	saved     chan struct{}
	liveFirst bool // the live message was saved before that
}

func (o *orderStore) RecentMessages(ctx context.Context, channelID string, before time.Time, n int) ([]store.Message, error) {
	o.mu.Lock()
	first := channelID == o.channel && !o.startRead && o.onRecent != nil
	hook := o.onRecent
	o.mu.Unlock()
	if first {
		hook()
	}
	msgs, err := o.Store.RecentMessages(ctx, channelID, before, n)
	o.mu.Lock()
	if channelID == o.channel {
		o.startRead = true
	}
	o.mu.Unlock()
	return msgs, err
}

func (o *orderStore) SaveMessage(ctx context.Context, m store.Message) error {
	o.mu.Lock()
	if m.Content == o.live {
		o.liveFirst = !o.startRead
		close(o.saved)
	}
	o.mu.Unlock()
	return o.Store.SaveMessage(ctx, m)
}

// TestCatchUpStartIsReadBeforeLiveMessages: after downtime, the catch-up of a channel starts
// from the newest message stored when the guild came back (GUILD_CREATE), read before any
// later event is handled: a member who speaks right after the restart does not move the start
// past the message addressed to the bot while it was down, which is answered.
func TestCatchUpStartIsReadBeforeLiveMessages(t *testing.T) {
	h := newHarness(t, nil)
	old := h.post(h.bob, "morning all")
	h.waitStored(old.ID, "saved", func(store.Message) bool { return true })
	h.shutdown()
	missed := h.post(h.alice, mention(h.dsim.BotID())+" are you there?")
	os := &orderStore{channel: string(h.general), live: "back again", saved: make(chan struct{})}
	os.onRecent = func() {
		// Right after the guild comes back, before its catch-up has read anything, bob speaks.
		if _, err := h.dsim.Post(h.ctx, h.bob, h.general, os.live); err != nil {
			t.Error(err)
			return
		}
		os.mu.Lock()
		late := os.handled
		os.mu.Unlock()
		if late {
			// Read after the GUILD_CREATE was handled (on a goroutine of its own): the event
			// goroutine is free, and handles bob's message first.
			select {
			case <-os.saved:
			case <-h.ctx.Done():
			}
		}
	}
	h.onSession = func(sess *discordgo.Session) {
		sess.AddHandler(func(_ *discordgo.Session, _ *discordgo.GuildCreate) {
			os.mu.Lock()
			os.handled = true
			os.mu.Unlock()
		})
	}
	h.wrapStore = func(st store.Store) store.Store { os.Store = st; return os }
	h.start()
	h.waitLog(`"msg":"sent_reply"`, string(missed.ID))
	os.mu.Lock()
	defer os.mu.Unlock()
	if os.liveFirst {
		t.Error("the live message was stored before the catch-up's start was read")
	}
}
