package voice_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/discord/bots"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// botMember adds a bot user (a music bot) to the guild after the bot's session started, so
// that what banter learns of it comes with its VOICE_STATE_UPDATE (no GUILD_MEMBER_ADD without
// the GUILD_MEMBERS intent), joins it to the voice channel and waits until the bot's gateway
// state knows it for a bot.
func (w *world) botMember(name string) (*voicesim.Member, string) {
	w.t.Helper()
	u := w.dsim.CreateBotUser(name)
	if err := w.dsim.AddMember(w.guild, u); err != nil {
		w.t.Fatal(err)
	}
	w.users[name] = u
	m := w.member(name)
	for bots.InState(w.sess.State, string(w.guild), string(u)) != bots.Bot {
		select {
		case <-w.ctx.Done():
			w.t.Fatalf("the bot's gateway state never learned that %s is a bot", name)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return m, string(u)
}

// forget takes the member off the user's voice state in the bot's gateway state, as a voice
// state without its member (GUILD_CREATE's are partial) leaves it: the state no longer says
// what the user is.
func (w *world) forget(userID string) {
	w.t.Helper()
	st := w.sess.State
	g, err := st.Guild(string(w.guild))
	if err != nil {
		w.t.Fatal(err)
	}
	st.Lock()
	for i, vs := range g.VoiceStates {
		if vs.UserID == userID {
			partial := *vs
			partial.Member = nil
			g.VoiceStates[i] = &partial
		}
	}
	st.Unlock()
	// The member its VOICE_STATE_UPDATE carried, which discord.NewSession keeps in the state.
	if err := st.MemberRemove(&discordgo.Member{GuildID: string(w.guild), User: &discordgo.User{ID: userID}}); err != nil && !errors.Is(err, discordgo.ErrStateNotFound) {
		w.t.Fatal(err)
	}
	if k := bots.InState(st, string(w.guild), userID); k != bots.Unknown {
		w.t.Fatalf("the state still knows %s: %v", userID, k)
	}
}

// song is d of music with a singer: the spoken question as its vocals, every few seconds.
func song(t testing.TB, d time.Duration) []int16 {
	return voicesim.Music(d, 1, speech(t, "hey-banter-weather"))
}

// playLoop has m play pcm again and again until the returned stop is called.
func playLoop(ctx context.Context, m *voicesim.Member, pcm []int16) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			_ = m.PlayPCM(ctx, pcm)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// TestMusicBotNotHeard: a music bot plays a song (a voice over music) in the channel. Through
// the real voice connection (its SSRC mapped to its user by op 5, the user looked up as a bot)
// none of its packets is decoded: they are counted as ignored, logged once, and no turn comes
// of them. Once the configuration hears it (hearBots, or its id in hearBotIds; live), its next
// packets are decoded and its verses become turns. A bot the gateway state does not know is
// looked up over REST once.
func TestMusicBotNotHeard(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		forget bool // the gateway state does not know the bot: REST does
		hear   func(c *config.Config, dj string)
	}{
		{"hearBots", false, func(c *config.Config, _ string) { c.Voice.HearBots = true }},
		{"hearBotIds, known by REST", true, func(c *config.Config, dj string) { c.Voice.HearBotIDs = []string{dj} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, nil, openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
				Reply: openaisim.Reply{Transcript: "hey banter, what's the weather like today?"}}, genRule("Sunny."))
			dj, djID := w.botMember("dj")
			if tt.forget {
				w.forget(djID)
			}
			w.join()
			track := song(t, 6*time.Second)
			frames, err := voicesim.EncodePCM(track)
			if err != nil {
				t.Fatal(err)
			}
			if err := dj.PlayPCM(w.ctx, track); err != nil {
				t.Fatal(err)
			}
			// Every packet it sent reaches the bot (loopback, no loss injected) and is dropped there.
			sent := float64(len(frames) + 5 - int(dj.Stats().DAVENotReady)) // 5: the talk spurt's silence frames
			w.waitMetric("banter_voice_packets_ignored_total", "bot", sent)
			if n := decodedPackets(t, w); n != 0 {
				t.Errorf("%v packets of the music bot reached a jitter buffer", n)
			}
			if n := w.logs.Count(`"msg":"voice_speaker_ignored"`, `"user_id":"`+djID+`"`, `"reason":"bot"`); n != 1 {
				t.Errorf("voice_speaker_ignored logged %d times, want once", n)
			}
			if n := w.logs.Count(`"turn_id":"u` + djID + `-`); n != 0 {
				t.Errorf("%d log lines of turns of the music bot", n)
			}
			lookups := 0
			for _, r := range w.dsim.RESTLog() {
				if r.Method == "GET" && strings.HasSuffix(r.Path, "/members/"+djID) {
					lookups++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tt.forget]; lookups != want {
				t.Errorf("%d REST lookups of the music bot, want %d", lookups, want)
			}

			w.reconfigure(func(c *config.Config) { tt.hear(c, djID) })
			stop := playLoop(w.ctx, dj, track)
			defer stop()
			w.waitLog(`"turn_id":"u` + djID + `-`) // a verse heard, transcribed and taken as a turn
			if decodedPackets(t, w) == 0 {
				t.Error("a turn of the music bot, but none of its packets was decoded")
			}
		})
	}
}

// TestMusicBotNeverBargesIn: a music bot's song plays over the bot's reply. Unheard, the reply
// plays to its end; heard (its id in hearBotIds), the same song interrupts it: the singer is a
// voice, and barge-in is for voices.
func TestMusicBotNeverBargesIn(t *testing.T) {
	t.Parallel()
	reply := "Let me tell you all about the weather. In the morning there is fog over the hills. " +
		"By noon the sun comes out and it gets quite warm. In the evening clouds roll in from the west. " +
		// Long enough that the song's verse overlaps it by several seconds even when a loaded
		// machine starts the song late (150 packets are asserted below).
		"Overnight the wind picks up and brings a little rain. Tomorrow starts grey but clears by lunch."
	for _, heard := range []bool{false, true} {
		t.Run(fmt.Sprintf("heard=%v", heard), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, func(c *config.Config) { c.Voice.BargeIn.Policy = "anyone" },
				openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
					Reply: openaisim.Reply{Transcript: "hey banter, what's the weather like today?"}},
				openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, InputPattern: "weather"},
					Reply: openaisim.Reply{Text: reply}})
			alice := w.member("alice")
			dj, djID := w.botMember("dj")
			if heard {
				w.reconfigure(func(c *config.Config) { c.Voice.HearBotIDs = []string{djID} })
			}
			w.join()
			w.play(alice, "hey-banter-weather")
			if err := alice.WaitHeard(w.ctx, w.botID, 25); err != nil { // the bot is answering
				t.Fatal(err)
			}
			stop := playLoop(w.ctx, dj, song(t, 12*time.Second))
			defer stop()
			if heard {
				w.waitLog(`"msg":"voice_barge_in"`, `"user_id":"`+djID+`"`)
				return
			}
			w.waitLog(`"msg":"stt_pipeline_reply_`)
			if n := w.logs.Count(`"msg":"voice_barge_in"`); n != 0 {
				t.Errorf("%d barge-ins during the music bot's song", n)
			}
			if w.logs.Count(`"msg":"stt_pipeline_reply_spoken"`) != 1 {
				t.Error("the reply was not played to its end")
			}
			// The song's first verse (after a second of intro) came while the bot spoke.
			if n := metricValue(t, w.reg, "banter_voice_packets_ignored_total", "bot"); n < 150 {
				t.Errorf("only %v packets of the song before the reply ended: its verse did not overlap the reply", n)
			}
		})
	}
}

// waitMetric waits until the counter name{label value} reaches at least want.
func (w *world) waitMetric(name, label string, want float64) {
	w.t.Helper()
	for metricValue(w.t, w.reg, name, label) < want {
		select {
		case <-w.ctx.Done():
			w.t.Fatalf("%s{%s} = %v, want %v", name, label, metricValue(w.t, w.reg, name, label), want)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// decodedPackets is every packet offered to a jitter buffer (banter_audio_packets_total).
func decodedPackets(t testing.TB, w *world) float64 {
	t.Helper()
	mfs, err := w.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "banter_audio_packets_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
