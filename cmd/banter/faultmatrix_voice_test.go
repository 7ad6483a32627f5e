package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// Voice rows of the fault matrix: `banter run` in a voice channel (DAVE on) with one member who
// asks the bot something by name; the fault is injected right after the member stops talking,
// while the bot transcribes, generates or speaks. Each addressed utterance must end in a defined,
// logged state: spoken (answered), or cut, skipped, failed or the session ended (explained).

// voiceAnswered and voiceExplained are the log events that end an addressed voice turn.
var (
	voiceAnswered  = []string{`"msg":"stt_pipeline_reply_spoken"`}
	voiceExplained = []string{`"msg":"stt_pipeline_reply_interrupted"`, `"msg":"stt_pipeline_reply_denied"`,
		`"msg":"stt_pipeline_reply_skipped"`, `"msg":"voice_turn_failed"`, `"msg":"voice_transcript_dropped"`,
		`"msg":"voice_session_end"`, `"msg":"voice_listener_failed"`}
)

// voiceBot is a botProcess with a voice server and a member in the voice channel.
type voiceBot struct {
	*botProcess
	vs      *voicesim.Server
	guild   discordsim.GuildID
	vc      discordsim.ChannelID
	member  *voicesim.Member
	samples []int16
}

func startVoiceBot(t *testing.T, ctx context.Context) *voiceBot {
	t.Helper()
	vs, err := voicesim.New(voicesim.Options{DAVE: true})
	if err != nil {
		t.Fatal(err)
	}
	v := &voiceBot{vs: vs}
	b := startBot(t, ctx, []discordsim.Option{discordsim.WithVoiceSim(vs)},
		fmt.Sprintf("  voiceCaFile: %s\n", vs.CAFile()), "voice:\n  joinGreetingWindowSeconds: 0\n", func(b *botProcess) {
			v.vc = b.dsim.CreateVoiceChannel(b.guild, "Voice")
		})
	v.botProcess, v.guild = b, b.guild
	stop := b.stop
	b.stop = func() error {
		if v.member != nil {
			v.member.Leave()
		}
		err := stop()
		vs.Close()
		return err
	}
	speech, err := os.ReadFile(filepath.Join("testdata", "hey-banter-weather.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if v.samples, _, err = wav.Decode(nil, speech); err != nil {
		t.Fatal(err)
	}
	if v.member, err = b.dsim.JoinVoiceMember(ctx, b.alice, v.vc, voicesim.MemberOptions{}); err != nil {
		t.Fatal(err)
	}
	// Fully started once the voice service has registered its slash commands.
	for !slices.ContainsFunc(b.dsim.Commands(""), func(c discordsim.Command) bool { return c.Name == "join" }) {
		select {
		case <-ctx.Done():
			t.Fatalf("voice commands never registered:\n%s", b.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return v
}

// ensureJoined asks the bot to join (!join) until its voice session is up.
func (v *voiceBot) ensureJoined(ctx context.Context) error {
	if st, ok := v.dsim.VoiceStateOf(v.guild, v.dsim.BotID()); ok && st.Channel == v.vc &&
		v.count(`"msg":"voice_session_start"`) > v.count(`"msg":"voice_session_end"`) {
		return nil
	}
	starts := v.count(`"msg":"voice_session_start"`)
	if _, err := v.dsim.Post(ctx, v.alice, v.ch, "!join"); err != nil {
		return err
	}
	for v.count(`"msg":"voice_session_start"`) <= starts {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the bot did not join voice: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// count is how many log lines hold fragment.
func (v *voiceBot) count(fragment string) int { return strings.Count(v.logs.String(), fragment) }

func (v *voiceBot) countAll(fragments []string) int {
	n := 0
	for _, f := range fragments {
		n += v.count(f)
	}
	return n
}

// voiceFault is one voice row: inject runs once the member has finished speaking.
type voiceFault struct {
	name   string
	runs   int
	before func(v *voiceBot) error // before the member speaks (model faults)
	inject func(v *voiceBot) error // right after
}

func voiceFaults() []voiceFault {
	bot := func(v *voiceBot) string { return string(v.dsim.BotID()) }
	closeWith := func(code int) func(v *voiceBot) error {
		return func(v *voiceBot) error { return v.vs.CloseVoice(bot(v), code) }
	}
	return []voiceFault{
		{name: "voice_none", runs: 1},
		{name: "voice_ws_close_4006", runs: 1, inject: closeWith(4006)},
		{name: "voice_ws_close_4009", runs: 1, inject: closeWith(4009)},
		{name: "voice_ws_close_4014", runs: 1, inject: closeWith(4014)},
		{name: "voice_ws_close_4015", runs: 1, inject: closeWith(4015)},
		{name: "voice_ws_drop", runs: 1, inject: func(v *voiceBot) error { return v.vs.DropVoice(bot(v)) }},
		{name: "voice_udp_silent_3s", runs: 1, inject: func(v *voiceBot) error {
			for _, dir := range []voicesim.Direction{voicesim.ToServer, voicesim.FromServer} {
				v.vs.SetFaults(bot(v), dir, voicesim.Faults{LossPercent: 100})
			}
			time.AfterFunc(3*time.Second, func() {
				for _, dir := range []voicesim.Direction{voicesim.ToServer, voicesim.FromServer} {
					v.vs.SetFaults(bot(v), dir, voicesim.Faults{})
				}
			})
			return nil
		}},
		{name: "voice_generation_500", runs: 1, before: func(v *voiceBot) error {
			return v.osim.AddRule(openaisim.Rule{Name: "gen-fail", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
				Fault: openaisim.Fault{Status: 500}, Times: 2})
		}},
		{name: "voice_tts_cut", runs: 1, before: func(v *voiceBot) error {
			return v.osim.AddRule(openaisim.Rule{Name: "tts-cut", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech},
				Fault: openaisim.Fault{TruncateAfterEvents: 2}, Times: 1})
		}},
	}
}

// voiceOutcome finds how the utterance tagged marker ended: a reply spoken for it, a logged
// failure, cut or skip naming it, or the session's end (more voice_session_end lines than ends).
func (v *voiceBot) voiceOutcome(marker string, ends int) string {
	logs := v.logs.String()
	outcome := ""
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, marker) {
			continue
		}
		for _, f := range voiceAnswered {
			if strings.Contains(line, f) {
				return "answered"
			}
		}
		for _, f := range voiceExplained {
			if strings.Contains(line, f) {
				outcome = "explained"
			}
		}
	}
	if outcome == "" && strings.Count(logs, `"msg":"voice_session_end"`) > ends {
		outcome = "explained"
	}
	return outcome
}

// runVoiceRows runs the voice rows on v and returns them.
func runVoiceRows(t *testing.T, ctx context.Context, v *voiceBot) []row {
	var rows []row
	for _, f := range voiceFaults() {
		r := row{name: f.name, runs: f.runs}
		for run := 0; run < f.runs; run++ {
			joinCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := v.ensureJoined(joinCtx)
			cancel()
			if err != nil {
				t.Fatalf("%s: %v\n%s", f.name, err, v.logs.String())
			}
			// The row's model fault first (rules match in order), then a short answer, so that
			// speaking it takes little time.
			v.osim.ResetRules()
			if f.before != nil {
				if err := f.before(v); err != nil {
					t.Fatalf("%s: %v", f.name, err)
				}
			}
			if err := v.osim.AddRule(openaisim.Rule{Name: "short", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
				Reply: openaisim.Reply{Text: "Sunny, I'd say."}}); err != nil {
				t.Fatal(err)
			}
			marker := fmt.Sprintf("(%s run %d)", f.name, run)
			ends := v.count(`"msg":"voice_session_end"`)
			v.osim.QueueTranscripts("hey banter, what's the weather like today? " + marker)
			if err := v.member.PlayPCM(ctx, v.samples); err != nil {
				t.Fatalf("%s: play: %v", f.name, err)
			}
			if f.inject != nil {
				if err := retryInject(ctx, func() error { return f.inject(v) }); err != nil {
					t.Fatalf("%s: inject: %v\n%s", f.name, err, v.logs.String())
				}
			}
			r.addressed++
			outcome := ""
			for guard := time.Now().Add(60 * time.Second); outcome == "" && time.Now().Before(guard); {
				outcome = v.voiceOutcome(marker, ends)
				time.Sleep(20 * time.Millisecond)
			}
			switch outcome {
			case "answered":
				r.answered++
			case "explained":
				r.explained++
			default:
				r.unexplained++
				t.Errorf("%s run %d: the addressed utterance ended in no logged state", f.name, run)
			}
			// The next run starts once the bot is quiet (or gone).
			for guard := time.Now().Add(30 * time.Second); time.Now().Before(guard); time.Sleep(20 * time.Millisecond) {
				if flags, ok := v.vs.Speaking(string(v.guild), string(v.dsim.BotID())); !ok || flags == 0 {
					break
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}
