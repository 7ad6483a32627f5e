package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// voiceBanter is `banter run` serving a guild with a voice server (DAVE on), the bot in its voice
// channel with alice, who typed !join.
type voiceBanter struct {
	dsim   *discordsim.Server
	vs     *voicesim.Server
	osim   *openaisim.Server
	guild  discordsim.GuildID
	text   discordsim.ChannelID
	vc     discordsim.ChannelID
	alice  discordsim.UserID
	member *voicesim.Member // alice in the voice channel (startVoiceBanter)
	logs   *logbuf.Buffer
	ctx    context.Context // bounds every wait (a failure guard)
	dsn    string          // the bot's SQLite store
}

// startVoiceBanter starts `banter run` with extraConfig added to its configuration and returns
// once its voice session with alice, a simulated member, has started. Cleanups stop it.
func startVoiceBanter(t *testing.T, extraConfig string, rules ...openaisim.Rule) *voiceBanter {
	t.Helper()
	v := launchVoiceBanter(t, 60*time.Second, extraConfig, rules...)
	member, err := v.dsim.JoinVoiceMember(v.ctx, v.alice, v.vc, voicesim.MemberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(member.Leave)
	v.member = member
	v.joinBot(t)
	return v
}

// launchVoiceBanter starts `banter run` with extraConfig added to its configuration and returns
// once it is fully started, alice a member of its guild but not in voice yet; every wait ends
// after timeout. Cleanups stop it.
func launchVoiceBanter(t *testing.T, timeout time.Duration, extraConfig string, rules ...openaisim.Rule) *voiceBanter {
	t.Helper()
	v := &voiceBanter{vs: voicetest.Serve(t, voicesim.WithDAVE()), osim: openaitest.Serve(t, openaisim.WithRules(rules...)),
		logs: &logbuf.Buffer{}}
	v.dsim = simtest.Serve(t, discordsim.WithVoiceSim(v.vs))
	v.guild = v.dsim.CreateGuild("g")
	v.text = v.dsim.CreateTextChannel(v.guild, "general")
	v.vc = v.dsim.CreateVoiceChannel(v.guild, "Voice")
	v.alice = v.dsim.CreateUser("alice")
	v.dsim.AddMember(v.guild, v.alice)

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	// $GEMINI_URL in extraConfig is the simulator's Gemini face (a kind gemini provider's baseUrl).
	extraConfig = strings.ReplaceAll(extraConfig, "$GEMINI_URL", "http"+strings.TrimPrefix(v.osim.GeminiURL(), "ws"))
	v.dsn = filepath.Join(dir, "banter.db")
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\n  voiceCaFile: %s\nmetrics:\n  listen: 127.0.0.1:0\nstore:\n  dsn: %s\n%s",
		v.dsim.APIBaseURL(), v.vs.CAFile(), v.dsn, extraConfig)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DISCORD_TOKEN": v.dsim.Token(), "OPENAI_BASE_URL": v.osim.BaseURL(), "OPENAI_API_KEY": "sk-test",
		"GEMINI_API_KEY": "gk-test"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, env{args: []string{"run", "-config", cfgPath}, stdout: io.Discard, stderr: v.logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	var stop context.CancelFunc
	v.ctx, stop = context.WithTimeout(ctx, timeout)
	t.Cleanup(stop)
	if err := simtest.WaitReady(v.ctx, v.dsim, v.dsim.BotID()); err != nil {
		t.Fatalf("bot never logged in: %v\n%s", err, v.logs.String())
	}
	// Fully started once the slash commands (text's and voice's) are registered.
	v.until(t, "voice commands registered", func() bool {
		return slices.ContainsFunc(v.dsim.Commands(""), func(c discordsim.Command) bool { return c.Name == "join" })
	})
	return v
}

// joinBot has alice, in the voice channel, type !join, and returns once the bot's voice
// session has started.
func (v *voiceBanter) joinBot(t *testing.T) {
	t.Helper()
	if _, err := v.dsim.Post(v.ctx, v.alice, v.text, "!join"); err != nil {
		t.Fatal(err)
	}
	v.until(t, "the bot in the voice channel", func() bool {
		st, ok := v.dsim.VoiceStateOf(v.guild, v.dsim.BotID())
		return ok && st.Channel == v.vc
	})
	// Speak once the bot's voice connection (and DAVE group) is up.
	v.waitLog(t, `"msg":"voice_session_start"`)
}

// until waits for cond, looked at every 20 ms.
func (v *voiceBanter) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-v.ctx.Done():
			t.Fatalf("waiting for %s: %v\n%s", what, v.ctx.Err(), v.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitLog waits for a log line holding every one of subs.
func (v *voiceBanter) waitLog(t *testing.T, subs ...string) {
	t.Helper()
	v.until(t, fmt.Sprintf("a log line with %q", subs), func() bool {
		return slices.ContainsFunc(strings.Split(v.logs.String(), "\n"), func(l string) bool {
			for _, s := range subs {
				if !strings.Contains(l, s) {
					return false
				}
			}
			return true
		})
	})
}

// events returns the log records named name, in order.
func (v *voiceBanter) events(name string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(v.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == name {
			out = append(out, m)
		}
	}
	return out
}

// voiceFixture is a recorded utterance of voice/testdata (48 kHz stereo), cut to its voiced part.
func voiceFixture(t *testing.T, name string) []int16 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "voice", "testdata", name+".wav"))
	if err != nil {
		t.Fatal(err)
	}
	samples, format, err := wav.Decode(nil, data)
	if err != nil || format.Rate != 48000 || format.Channels != 2 {
		t.Fatalf("fixture %s: %v %+v", name, err, format)
	}
	const win = 960 // 10 ms of 48 kHz stereo
	loud := func(w []int16) bool {
		var sum float64
		for _, s := range w {
			sum += float64(s) * float64(s)
		}
		return math.Sqrt(sum/float64(len(w)))/32768 > math.Pow(10, -45.0/20) // -45 dBFS
	}
	first, last := -1, -1
	for off := 0; off+win <= len(samples); off += win {
		if !loud(samples[off : off+win]) {
			continue
		}
		if first < 0 {
			first = off
		}
		last = off + win
	}
	if first < 0 {
		t.Fatalf("fixture %s is silent", name)
	}
	return samples[first:last]
}
