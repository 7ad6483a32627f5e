package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestRunVoiceIgnoresMusicBot runs `banter run` in a voice channel (DAVE on) with a member,
// alice, and a music bot, dj, that plays a song (music with a singer) the whole time. While
// banter answers alice's question, the song neither starts a turn nor interrupts the reply,
// which plays to its end; every packet of dj's is counted as ignored and dj is logged once.
// Then the config file is edited (banter reloads it live) to hear dj, by voice.hearBots or
// by its id in voice.hearBotIds, and dj's next verse is heard: a turn of dj's. dj is a member
// of the guild before banter starts (it comes in GUILD_CREATE), or joins the guild after
// (banter learns what it is from its VOICE_STATE_UPDATE: no GUILD_MEMBER_ADD without
// GUILD_MEMBERS).
func TestRunVoiceIgnoresMusicBot(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	for _, tt := range []struct {
		name        string
		memberFirst bool // dj is a member before banter starts
		hear        func(dj string) string
	}{
		{"hearBots", true, func(string) string { return "  hearBots: true\n" }},
		{"hearBotIds", false, func(dj string) string { return "  hearBotIds: [\"" + dj + "\"]\n" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			runMusicBot(t, ctx, tt.memberFirst, tt.hear)
		})
	}
}

// musicRun is one run of TestRunVoiceIgnoresMusicBot.
type musicRun struct {
	*botProcess
	vs          *voicesim.Server
	vc          discordsim.ChannelID
	dj          discordsim.UserID
	alice, band *voicesim.Member
}

func runMusicBot(t *testing.T, ctx context.Context, memberFirst bool, hear func(dj string) string) {
	vs, err := voicesim.New(voicesim.Options{DAVE: true})
	if err != nil {
		t.Fatal(err)
	}
	r := &musicRun{vs: vs}
	voiceCfg := "voice:\n  joinGreetingWindowSeconds: 0\n"
	r.botProcess = startBot(t, ctx, []discordsim.Option{discordsim.WithVoiceSim(vs)},
		fmt.Sprintf("  voiceCaFile: %s\n", vs.CAFile()), voiceCfg, func(b *botProcess) {
			r.vc = b.dsim.CreateVoiceChannel(b.guild, "Voice")
			if memberFirst {
				r.dj = b.dsim.CreateBotUser("dj")
				if err := b.dsim.AddMember(b.guild, r.dj); err != nil {
					t.Fatal(err)
				}
			}
		})
	defer func() {
		for _, m := range []*voicesim.Member{r.band, r.alice} {
			if m != nil {
				m.Leave()
			}
		}
		if err := r.stop(); err != nil {
			t.Errorf("run: %v", err)
		}
		vs.Close()
	}()
	if !memberFirst {
		r.dj = r.dsim.CreateBotUser("dj")
		if err := r.dsim.AddMember(r.guild, r.dj); err != nil {
			t.Fatal(err)
		}
	}
	g, stop := guard(ctx)
	defer stop()
	vocals := r.join(t, g)

	// The music bot plays all along.
	var played sync.WaitGroup
	songCtx, stopSong := context.WithCancel(g)
	defer func() { stopSong(); played.Wait() }()
	track := voicesim.Music(12*time.Second, 1, vocals)
	played.Go(func() {
		for songCtx.Err() == nil {
			_ = r.band.PlayPCM(songCtx, track)
		}
	})

	// alice asks; the reply plays to its end over the song.
	djTurn := `"turn_id":"u` + string(r.dj) + `-`
	marker := "(music bot)"
	r.osim.QueueTranscripts("hey banter, what's the weather like today? " + marker)
	if err := r.osim.AddRule(openaisim.Rule{Name: "answer", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
		Reply: openaisim.Reply{Text: longReply}}); err != nil {
		t.Fatal(err)
	}
	if err := r.alice.PlayPCM(g, vocals); err != nil {
		t.Fatal(err)
	}
	var end logLine
	if !r.logs.wait(g, func() bool {
		for _, l := range r.logs.since(0) {
			if strings.HasPrefix(l.msg(), "stt_pipeline_reply_") && strings.Contains(l.str("transcript"), marker) {
				end = l
				return true
			}
		}
		return false
	}) {
		t.Fatalf("alice's question was not answered:\n%s", r.logs.String())
	}
	ignored := r.ignoredPackets(t, g)
	switch {
	case end.msg() != "stt_pipeline_reply_spoken":
		t.Errorf("the reply ended %s, want played to its end (stt_pipeline_reply_spoken)", end.msg())
	case r.logs.count(0, "voice_barge_in") != 0:
		t.Errorf("a barge-in during the music bot's song")
	case strings.Contains(r.logs.String(), djTurn):
		t.Errorf("a turn of the music bot's:\n%s", r.logs.String())
	case ignored < 150:
		// A second of intro, then the verse: it came while banter spoke.
		t.Errorf("%v packets of the music bot ignored when the reply ended: the song did not overlap it", ignored)
	}
	if n := r.speakerIgnored(); n != 1 {
		t.Errorf("voice_speaker_ignored for the music bot logged %d times, want once", n)
	}

	// Heard once the config says so: live, from its next packets on. A turn of the music bot's
	// ends (the default classifier cannot tell what it wants: denied, most likely).
	reloads := r.logs.count(0, "config_reloaded")
	if err := os.WriteFile(r.cfgPath, append(r.config(t), []byte(hear(string(r.dj)))...), 0o600); err != nil {
		t.Fatal(err)
	}
	if !r.logs.wait(g, func() bool { return r.logs.count(0, "config_reloaded") > reloads }) {
		t.Fatalf("the edited config was not reloaded:\n%s", r.logs.String())
	}
	if !r.logs.wait(g, func() bool { return r.djTurnEnded() }) {
		t.Fatalf("the music bot was not heard after the reload:\n%s", r.logs.String())
	}
}

// join starts the members in voice (alice and the music bot), has banter join with !join and
// waits until the channel's DAVE group holds all three. It returns alice's question, 48 kHz
// stereo, which is also the song's vocals.
func (r *musicRun) join(t *testing.T, ctx context.Context) []int16 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "hey-banter-weather.wav"))
	if err != nil {
		t.Fatal(err)
	}
	vocals, _, err := wav.Decode(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !r.logs.wait(ctx, func() bool {
		return slices.ContainsFunc(r.dsim.Commands(""), func(c discordsim.Command) bool { return c.Name == "join" })
	}) {
		t.Fatalf("voice commands never registered:\n%s", r.logs.String())
	}
	if r.alice, err = r.dsim.JoinVoiceMember(ctx, r.botProcess.alice, r.vc, voicesim.MemberOptions{}); err != nil {
		t.Fatal(err)
	}
	if r.band, err = r.dsim.JoinVoiceMember(ctx, r.dj, r.vc, voicesim.MemberOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.dsim.Post(ctx, r.botProcess.alice, r.ch, "!join"); err != nil {
		t.Fatal(err)
	}
	if !r.logs.wait(ctx, func() bool {
		d := r.vs.DAVE(string(r.guild), string(r.vc))
		return r.logs.count(0, "voice_session_start") == 1 && d.Established && !d.Busy && len(d.Members) == 3
	}) {
		t.Fatalf("banter's voice session never came up: DAVE %+v\n%s", r.vs.DAVE(string(r.guild), string(r.vc)), r.logs.String())
	}
	return vocals
}

// djTurnEnded reports whether a turn of the music bot's has ended, however it ended (answered,
// denied, skipped, its transcript dropped, failed): one of its utterances was heard.
func (r *musicRun) djTurnEnded() bool {
	for _, l := range r.logs.since(0) {
		if !strings.HasPrefix(l.str("turn_id"), "u"+string(r.dj)+"-") {
			continue
		}
		if m := l.msg(); strings.HasPrefix(m, "stt_pipeline_reply_") || m == "voice_transcript_dropped" || m == "voice_turn_failed" {
			return true
		}
	}
	return false
}

// config is the bot's config file as it is.
func (r *musicRun) config(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(r.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// speakerIgnored counts voice_speaker_ignored lines for the music bot with reason bot.
func (r *musicRun) speakerIgnored() int {
	n := 0
	for _, l := range r.logs.since(0) {
		if l.msg() == "voice_speaker_ignored" && l.str("user_id") == string(r.dj) && l.str("reason") == "bot" {
			n++
		}
	}
	return n
}

// ignoredPackets reads banter_voice_packets_ignored_total{reason="bot"} from banter's /metrics.
func (r *musicRun) ignoredPackets(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	addr := ""
	for _, l := range r.logs.since(0) {
		if l.msg() == "metrics_listening" {
			addr = l.str("addr")
		}
	}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("metrics at %q: %v", addr, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), `banter_voice_packets_ignored_total{reason="bot"} `); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}
