package voice_test

import (
	"context"
	"slices"
	"strings"
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
	w := newWorldWith(t, worldOptions{kept: st}, nil, genRule("Hello."))
	w.sess.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) { w.svc.HandleMessage(w.ctx, s, m.Message) })
	w.sess.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		w.svc.HandleInteraction(w.ctx, s, ic.Interaction)
	})
	if _, err := w.sess.ApplicationCommandBulkOverwrite(w.botID, "", w.svc.Commands()); err != nil {
		t.Fatal(err)
	}
	return w, st
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
// alone, kicked or moved out by a moderator: disconnected) and stays after a shutdown, which
// ends it "shutdown" (logged and counted).
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
		{"moved_by_a_moderator", "disconnected", func(t *testing.T, w *world) {
			other := w.dsim.CreateVoiceChannel(w.guild, "Elsewhere")
			if err := w.dsim.MoveVoice(w.guild, discordsim.UserID(w.botID), other); err != nil {
				t.Fatal(err)
			}
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
