package voice_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/voice"
)

// keptWorld is a world whose service keeps its command-joined sessions in a SQLite store, with
// the commands wired as cmd/banter wires them and alice in the voice channel.
func keptWorld(t *testing.T) (*world, *store.SQLite) {
	t.Helper()
	st := tempStore(t)
	return keptWorldOn(t, st), st
}

// keptWorldOn is keptWorld keeping its sessions in kept.
func keptWorldOn(t *testing.T, kept store.VoiceSessions) *world {
	t.Helper()
	return keptWorldWith(t, worldOptions{kept: kept})
}

// keptWorldWith is keptWorld with options (o.kept keeps the sessions).
func keptWorldWith(t *testing.T, o worldOptions) *world {
	t.Helper()
	w := newWorldWith(t, o, nil, genRule("Hello."))
	w.sess.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) { w.svc.HandleMessage(w.ctx, s, m.Message) })
	w.sess.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		w.svc.HandleInteraction(w.ctx, s, ic.Interaction)
	})
	if _, err := w.sess.ApplicationCommandBulkOverwrite(w.botID, "", w.svc.Commands()); err != nil {
		t.Fatal(err)
	}
	return w
}

// kept returns the store's records as "guild/channel/requester".
func kept(t *testing.T, st store.VoiceSessions) []string {
	t.Helper()
	vs, err := st.KeptVoiceSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.GuildID+"/"+v.ChannelID+"/"+v.RequestedBy)
	}
	return out
}

// commandJoin has alice, in the voice channel, type !join and waits for the answer.
func (w *world) commandJoin(t *testing.T) {
	t.Helper()
	for voice.VoiceChannelOf(w.sess.State, string(w.guild), string(w.users["alice"])) != string(w.vc) {
		select { // the bot learns alice's voice state from the gateway
		case <-w.ctx.Done():
			t.Fatal("alice's voice state never reached the bot")
		case <-time.After(20 * time.Millisecond):
		}
	}
	q, err := w.dsim.Post(w.ctx, w.users["alice"], w.text, "!join")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitMessage(w.ctx, w.dsim, func(m discordsim.Message) bool {
		return m.Reference != nil && m.Reference.MessageID == q.ID && strings.HasPrefix(m.Content, "Joined")
	}); err != nil {
		t.Fatalf("!join: %v", err)
	}
}

// TestKeptSessionRecord: a session joined by !join is recorded (guild, channel, who asked) when
// it starts; its record goes when the session ends for a reason that means "stay out" (/leave,
// alone, kicked or disconnected by a moderator: disconnected) and stays after a shutdown, which
// ends it "shutdown" (logged and counted). A move by a moderator does not end it: the record
// follows the session (TestMovedByModerator).
func TestKeptSessionRecord(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, reason string
		end          func(t *testing.T, w *world)
		kept         bool
	}{
		{"leave", "left", func(t *testing.T, w *world) {
			if _, err := w.dsim.InvokeCommand(w.users["alice"], w.text, "leave"); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"alone", "alone", func(t *testing.T, w *world) {
			if err := w.dsim.LeaveVoice(w.users["alice"], w.vc); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"kicked", "disconnected", func(t *testing.T, w *world) {
			if err := w.vsim.CloseVoice(w.botID, 4014); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"disconnected_by_a_moderator", "disconnected", func(t *testing.T, w *world) {
			w.moderator(t)(map[string]any{"channel_id": nil})
		}, false},
		{"shutdown", "shutdown", func(t *testing.T, w *world) {
			ctx, cancel := context.WithTimeout(w.ctx, guard)
			defer cancel()
			if err := w.svc.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, st := keptWorld(t)
			// Below what validation allows in a file (10 s), to keep the test short; set before
			// the session starts reading it.
			w.cfg.Voice.InactivityLeaveSeconds = 1
			w.member("alice")
			w.commandJoin(t)
			record := string(w.guild) + "/" + string(w.vc) + "/" + string(w.users["alice"])
			if got := kept(t, st); !slices.Equal(got, []string{record}) {
				t.Fatalf("after !join: records %v, want %v", got, []string{record})
			}
			tt.end(t, w)
			w.waitLog(`"msg":"voice_session_end"`, `"reason":"`+tt.reason+`"`)
			if n := metricValue(t, w.reg, "banter_voice_session_ends_total", tt.reason); n != 1 {
				t.Errorf("session ends (%s) = %v, want 1", tt.reason, n)
			}
			got := kept(t, st)
			if tt.kept != (len(got) == 1) {
				t.Errorf("after the session ended %q: records %v (kept: want %v)", tt.reason, got, tt.kept)
			}
		})
	}
}

// TestRejoinKeptSession: Rejoin joins a kept session of a guild the process owns, leaving its
// record as it was; the kept sessions of guilds it does not own are left to their process.
func TestRejoinKeptSession(t *testing.T) {
	t.Parallel()
	w, st := keptWorld(t)
	w.member("alice")
	ctx := context.Background()
	rec := store.VoiceSession{GuildID: string(w.guild), ChannelID: string(w.vc), RequestedBy: "someone", JoinedAt: time.Now().Add(-time.Minute)}
	if err := st.KeepVoiceSession(ctx, rec); err != nil {
		t.Fatal(err)
	}
	w.svc.Rejoin(w.ctx, func(string) bool { return false })
	w.waitLog(`"msg":"voice_rejoin_done"`, `"records":0`)
	if ch := w.svc.Channel(string(w.guild)); ch != "" {
		t.Fatalf("rejoined %s in a guild of another process", ch)
	}
	w.svc.Rejoin(w.ctx, func(g string) bool { return g == string(w.guild) })
	w.waitLog(`"msg":"voice_rejoin"`, `"result":"rejoined"`, `"channel_id":"`+string(w.vc)+`"`)
	if ch := w.svc.Channel(string(w.guild)); ch != string(w.vc) {
		t.Errorf("after Rejoin the session is in %q, want %s", ch, w.vc)
	}
	if n := metricValue(t, w.reg, "banter_voice_rejoins_total", "rejoined"); n != 1 {
		t.Errorf("rejoins (rejoined) = %v, want 1", n)
	}
	if got, want := kept(t, st), []string{rec.GuildID + "/" + rec.ChannelID + "/someone"}; !slices.Equal(got, want) {
		t.Errorf("records after the rejoin: %v, want %v", got, want)
	}
}

// heldDrop is the real store with its first record drop held (entered, then waiting for
// release): the end of a session stays in progress, its session still the guild's, while the
// test acts.
type heldDrop struct {
	store.VoiceSessions
	held             atomic.Bool
	entered, release chan struct{}
}

func (h *heldDrop) DropVoiceSession(ctx context.Context, guildID, channelID string, since time.Time) error {
	if h.held.CompareAndSwap(false, true) {
		close(h.entered)
		select {
		case <-h.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return h.VoiceSessions.DropVoiceSession(ctx, guildID, channelID, since)
}

// TestJoinAsSessionEnds: a session joined by !join ends on its own (alone) and, while it is
// still ending (its record being dropped), alice comes back and types !join in the same
// channel. The !join waits for the end (voice_join_waiting) and joins afresh: once the old
// session's end is logged, the bot is in the channel on a live session that answers her, and
// the record names the new session. (Before, the !join found the ending session, answered
// "Joined" and did nothing, and the ending session then left the channel.)
func TestJoinAsSessionEnds(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	held := &heldDrop{VoiceSessions: st, entered: make(chan struct{}), release: make(chan struct{})}
	w := keptWorldOn(t, held)
	w.cfg.Voice.InactivityLeaveSeconds = 1 // below what a file allows (10 s): a short test
	alice := w.member("alice")
	w.commandJoin(t)
	first := kept(t, st)

	alice.Leave()
	if err := w.dsim.LeaveVoice(w.users["alice"], w.vc); err != nil {
		t.Fatal(err)
	}
	select { // the session ends alone: its record's drop is held
	case <-held.entered:
	case <-w.ctx.Done():
		t.Fatal("the session never ended")
	}
	alice = w.member("alice")
	for voice.VoiceChannelOf(w.sess.State, string(w.guild), string(w.users["alice"])) != string(w.vc) {
		select {
		case <-w.ctx.Done():
			t.Fatal("alice's voice state never reached the bot")
		case <-time.After(20 * time.Millisecond):
		}
	}
	q, err := w.dsim.Post(w.ctx, w.users["alice"], w.text, "!join")
	if err != nil {
		t.Fatal(err)
	}
	answered := func(m discordsim.Message) bool {
		return m.Reference != nil && m.Reference.MessageID == q.ID && strings.HasPrefix(m.Content, "Joined")
	}
	// The !join is either waiting for the end or (the fault) answered already.
	for w.logs.Count(`"msg":"voice_join_waiting"`, `"reason":"session_ending"`) == 0 &&
		!slices.ContainsFunc(w.dsim.SentSince(0), answered) {
		select {
		case <-w.ctx.Done():
			t.Fatal("the !join was neither waiting nor answered")
		case <-time.After(20 * time.Millisecond):
		}
	}
	close(held.release)
	if _, err := simtest.WaitMessage(w.ctx, w.dsim, answered); err != nil {
		t.Fatalf("!join: %v", err)
	}
	w.waitLog(`"msg":"voice_session_end"`, `"reason":"alone"`)

	if ch := w.svc.Channel(string(w.guild)); ch != string(w.vc) {
		t.Fatalf("after the old session's end the bot's session is in %q, want %s", ch, w.vc)
	}
	if got := kept(t, st); !slices.Equal(got, first) {
		t.Errorf("records after the !join: %v, want %v", got, first)
	}
	var starts int
	for _, ev := range w.logs.Events("voice_session_start") {
		if ev["channel_id"] == string(w.vc) {
			starts++
		}
	}
	if starts != 2 {
		t.Errorf("%d sessions started, want 2 (the first, then the !join's)", starts)
	}
	// The new session is live: it answers alice.
	for {
		st := w.vsim.DAVE(string(w.guild), string(w.vc))
		if st.Version == 1 && st.Established && !st.Busy && len(st.Members) == 2 {
			break
		}
		select {
		case <-w.ctx.Done():
			t.Fatalf("DAVE group not ready: %+v", st)
		case <-time.After(10 * time.Millisecond):
		}
	}
	before := len(alice.Heard(w.botID))
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	if err := alice.WaitHeard(w.ctx, w.botID, before+10); err != nil {
		t.Fatalf("the new session did not answer: %v", err)
	}
}
