package voice

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/discord/bots"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/internal/logbuf"
	"github.com/banterbot/banter/sim/discord/voicesim"
)

// The users of the speaker tests' guild.
const (
	hwGuild  = "100000000000000001"
	hwAlice  = "100000000000000010" // a person, a member in the gateway state
	hwDJ     = "100000000000000011" // a music bot, a member in the gateway state
	hwTTS    = "100000000000000012" // a bot known by its voice state's member only
	hwNewBot = "100000000000000013" // a bot only REST knows
)

// heardWorld is one voice session's receive side over a gateway state, without a voice
// connection: the test feeds each speaker's frames and runs its ticks itself.
type heardWorld struct {
	t       *testing.T
	s       *session
	reg     *prometheus.Registry
	cfg     atomic.Pointer[config.Config]
	logs    *logbuf.Buffer
	fetches atomic.Int32
}

func newHeardWorld(t *testing.T, mutate func(*config.Config)) *heardWorld {
	t.Helper()
	hw := &heardWorld{t: t, reg: prometheus.NewRegistry(), logs: &logbuf.Buffer{}}
	st := discordgo.NewState()
	user := func(id string, bot bool) *discordgo.User { return &discordgo.User{ID: id, Username: id, Bot: bot} }
	if err := st.GuildAdd(&discordgo.Guild{ID: hwGuild,
		Members: []*discordgo.Member{{GuildID: hwGuild, User: user(hwAlice, false)}, {GuildID: hwGuild, User: user(hwDJ, true)}},
		VoiceStates: []*discordgo.VoiceState{{UserID: hwTTS, ChannelID: "7", Member: &discordgo.Member{User: user(hwTTS, true)}},
			{UserID: hwNewBot, ChannelID: "7"}},
	}); err != nil {
		t.Fatal(err)
	}
	fetch := func(_ context.Context, _, userID string) (*discordgo.Member, error) {
		hw.fetches.Add(1)
		if userID != hwNewBot {
			return nil, errors.New("HTTP 404 Not Found: Unknown Member")
		}
		return &discordgo.Member{User: user(hwNewBot, true)}, nil
	}
	cfg := config.Default()
	cfg.Voice.Speculation.Enabled = false // nothing transcribed at pauses: no model here
	cfg.Voice.Endpointing.CompleteSilenceMs, cfg.Voice.Endpointing.TrailingSilenceMs = 0, 0
	if mutate != nil {
		mutate(cfg)
	}
	hw.cfg.Store(cfg)
	svc := &Service{opts: Options{Config: hw.cfg.Load, Now: time.Now, AudioMetrics: audio.NewMetrics(hw.reg), Metrics: NewMetrics(hw.reg)},
		bots: bots.New(func(string) *discordgo.State { return st }, fetch)}
	s := &session{svc: svc, guildID: hwGuild, speakers: map[string]*speaker{}, metrics: svc.opts.Metrics}
	s.lg = slog.New(slog.NewJSONHandler(hw.logs, nil))
	s.ctx, s.cancel = context.WithCancel(context.Background())
	t.Cleanup(func() { s.cancel(); s.wg.Wait() })
	hw.s = s
	return hw
}

// reconfigure changes the configuration the session reads from the next tick on.
func (hw *heardWorld) reconfigure(mutate func(*config.Config)) {
	c := *hw.cfg.Load()
	mutate(&c)
	hw.cfg.Store(&c)
}

// speaker makes userID's speaker as a new stream would, waiting for its REST lookup if it
// started one. The frames channel is the test's.
func (hw *heardWorld) speaker(userID string) (*speaker, chan dvoice.Frame) {
	hw.t.Helper()
	ch := make(chan dvoice.Frame, 1)
	sp := hw.s.newSpeaker(userID, ch)
	if sp == nil {
		hw.t.Fatal("no speaker")
	}
	hw.s.wg.Wait() // the lookup, if any
	hw.s.speakers[userID] = sp
	return sp, ch
}

// speak feeds frames one tick each and reports whether the speaker was ever mid-utterance
// (its speaking indicator, what room-aware coalescing reads) and whether another member
// saw it so (othersActive).
func (hw *heardWorld) speak(sp *speaker, ch chan dvoice.Frame, frames [][]byte, seq *uint16) (active, othersSaw bool) {
	hw.t.Helper()
	for _, f := range frames {
		*seq++
		ch <- dvoice.Frame{UserID: sp.userID, SSRC: 7, Sequence: *seq, Timestamp: uint32(*seq) * 960, Opus: f}
		if !sp.tick() {
			hw.t.Fatal("the speaker left")
		}
		active = active || sp.active.Load()
		othersSaw = othersSaw || hw.s.othersActive("someone else")
	}
	return active, othersSaw
}

// ignoredPackets is banter_voice_packets_ignored_total{reason}.
func (hw *heardWorld) ignoredPackets(reason string) float64 {
	hw.t.Helper()
	mfs, err := hw.reg.Gather()
	if err != nil {
		hw.t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "banter_voice_packets_ignored_total" && m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// speechFrames is the start of a spoken question as Opus frames (20 ms each).
func speechFrames(t *testing.T, n int) [][]byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/hey-banter-weather.wav")
	if err != nil {
		t.Fatal(err)
	}
	pcm, _, err := wav.Decode(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := voicesim.EncodePCM(pcm)
	if err != nil {
		t.Fatal(err)
	}
	return frames[:n]
}

// TestWhoIsHeard: which speaker is heard, from the user's bot flag (the gateway state's member,
// the member on its voice state, or REST) and voice.hearBots, voice.hearBotIds and
// permissions.blockedUserIds. A speaker who is not heard gets no Listener, none of its packets
// reaches a jitter buffer, they are counted by reason and logged once, and it is never
// mid-utterance for room-aware coalescing however much it speaks.
func TestWhoIsHeard(t *testing.T) {
	frames := speechFrames(t, 75) // 1.5 s: "hey banter, what's…", the utterance still open
	for _, tt := range []struct {
		name    string
		cfg     func(*config.Config)
		user    string
		want    hearMode
		lookups int32
	}{
		{"person", nil, hwAlice, heard, 0},
		{"bot member", nil, hwDJ, unheardBot, 0},
		{"bot on its voice state", nil, hwTTS, unheardBot, 0},
		{"bot known by REST", nil, hwNewBot, unheardBot, 1},
		{"hearBots", func(c *config.Config) { c.Voice.HearBots = true }, hwDJ, heard, 0},
		{"hearBotIds", func(c *config.Config) { c.Voice.HearBotIDs = []string{hwDJ} }, hwDJ, heard, 0},
		{"hearBotIds, another bot", func(c *config.Config) { c.Voice.HearBotIDs = []string{hwDJ} }, hwTTS, unheardBot, 0},
		{"blocked person", func(c *config.Config) { c.Permissions.BlockedUserIDs = []string{hwAlice} }, hwAlice, blockedUser, 0},
		{"blocked bot, bots heard", func(c *config.Config) {
			c.Voice.HearBots, c.Permissions.BlockedUserIDs = true, []string{hwDJ}
		}, hwDJ, blockedUser, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hw := newHeardWorld(t, tt.cfg)
			sp, ch := hw.speaker(tt.user)
			var seq uint16
			active, othersSaw := hw.speak(sp, ch, frames, &seq)
			if sp.mode != tt.want || hw.fetches.Load() != tt.lookups {
				t.Fatalf("mode %v after %d REST lookups, want %v after %d", sp.mode, hw.fetches.Load(), tt.want, tt.lookups)
			}
			decoded := accepted(t, hw.reg)
			if tt.want == heard {
				if !active || !othersSaw || decoded != float64(len(frames)) || hw.ignoredPackets("bot")+hw.ignoredPackets("blocked_user") != 0 {
					t.Errorf("heard: active %v, seen by others %v, %v packets decoded, want all %d and none ignored", active, othersSaw, decoded, len(frames))
				}
				return
			}
			// A bot known by REST may have got a Listener while it was unknown (when its lookup
			// had not answered by the time newSpeaker chose its mode); any other unheard speaker
			// never gets one.
			if (sp.l != nil && tt.lookups == 0) || active || othersSaw || decoded != 0 {
				t.Errorf("not heard: Listener %v, active %v, seen by others %v, %v packets decoded", sp.l != nil, active, othersSaw, decoded)
			}
			if n := hw.ignoredPackets(tt.want.String()); n != float64(len(frames)) {
				t.Errorf("%v packets counted ignored (%s), want %d", n, tt.want, len(frames))
			}
			if n := hw.logs.Count(`"msg":"voice_speaker_ignored"`, tt.user, `"reason":"`+tt.want.String()+`"`); n != 1 {
				t.Errorf("voice_speaker_ignored logged %d times, want once", n)
			}
		})
	}
}

// TestHearBotsLive: the configuration applies from the speaker's next packets: a bot turned
// heard gets its Listener then and is decoded from there; turned unheard again mid-utterance,
// the utterance is dropped untranscribed (this session has no model to transcribe it with), it
// stops being mid-utterance at once, and it is logged again.
func TestHearBotsLive(t *testing.T) {
	hw := newHeardWorld(t, nil)
	sp, ch := hw.speaker(hwDJ)
	frames := speechFrames(t, 75)
	var seq uint16
	hw.speak(sp, ch, frames[:20], &seq)
	if sp.l != nil || hw.ignoredPackets("bot") != 20 || accepted(t, hw.reg) != 0 {
		t.Fatalf("unheard: Listener %v, %v ignored, %v decoded", sp.l != nil, hw.ignoredPackets("bot"), accepted(t, hw.reg))
	}
	hw.reconfigure(func(c *config.Config) { c.Voice.HearBots = true })
	if active, _ := hw.speak(sp, ch, frames[20:], &seq); !active || sp.l == nil || accepted(t, hw.reg) != 55 {
		t.Fatalf("heard: active %v, Listener %v, %v decoded, want the 55 packets since", active, sp.l != nil, accepted(t, hw.reg))
	}
	if !sp.active.Load() {
		t.Fatal("the bot is not mid-utterance: the test cannot show the cut")
	}
	hw.reconfigure(func(c *config.Config) { c.Voice.HearBots = false })
	if active, _ := hw.speak(sp, ch, frames[:10], &seq); active || len(sp.chunks) != 0 {
		t.Errorf("unheard again: active %v, %d chunks kept", active, len(sp.chunks))
	}
	if hw.ignoredPackets("bot") != 30 || accepted(t, hw.reg) != 55 {
		t.Errorf("%v ignored, %v decoded; want 30 and 55", hw.ignoredPackets("bot"), accepted(t, hw.reg))
	}
	if n := hw.logs.Count(`"msg":"voice_speaker_ignored"`, hwDJ); n != 2 {
		t.Errorf("voice_speaker_ignored logged %d times, want twice (once each time it stopped being heard)", n)
	}
}
