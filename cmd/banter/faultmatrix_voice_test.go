package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// Voice rows of the fault matrix: `banter run` in a voice channel (DAVE on) with one member who
// asks the bot something by name; the fault is injected before the member speaks, right after,
// or once the bot's reply is heard. Each addressed utterance must end in a defined, logged
// state:
//
//   - answered: the bot logged the reply spoken for it (stt_pipeline_reply_spoken, or
//     realtime_reply_spoken for a realtime turn, which carries the transcript) and the member heard the reply: at least minHeard frames of the bot's
//     audio, decrypted end to end (DAVE), arrived at the member during the run;
//   - explained: a line carrying its transcript says it was cut, skipped, denied or failed; or a
//     failure of its speaker's transcription; or the end of the voice session the utterance was
//     spoken to (the first voice_session_end after it, with no voice_session_start between).
//
// A reply logged as spoken that the member did not hear is neither.

// minHeard is how many frames (20 ms) of the bot's reply the member must hear for an answer:
// the shortest reply used is about a second (50 frames).
const minHeard = 10

var voiceExplained = []string{"stt_pipeline_reply_interrupted", "stt_pipeline_reply_denied",
	"stt_pipeline_reply_skipped", "voice_turn_failed", "voice_transcript_dropped"}

// voiceBot is a botProcess with a voice server and a member in the voice channel.
type voiceBot struct {
	*botProcess
	vs      *voicesim.Server
	vc      discordsim.ChannelID
	member  *voicesim.Member
	samples []int16
}

func (v *voiceBot) botID() string { return string(v.dsim.BotID()) }

// startVoiceBot starts banter with voice.mode mode.
func startVoiceBot(t *testing.T, ctx context.Context, mode string) *voiceBot {
	t.Helper()
	vs, err := voicesim.New(voicesim.Options{DAVE: true})
	if err != nil {
		t.Fatal(err)
	}
	v := &voiceBot{vs: vs}
	b := startBot(t, ctx, []discordsim.Option{discordsim.WithVoiceSim(vs)},
		fmt.Sprintf("  voiceCaFile: %s\n", vs.CAFile()), "voice:\n  joinGreetingWindowSeconds: 0\n  mode: "+mode+"\n", func(b *botProcess) {
			v.vc = b.dsim.CreateVoiceChannel(b.guild, "Voice")
		})
	v.botProcess = b
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
	g, cancel := guard(ctx)
	defer cancel()
	if !b.logs.wait(g, func() bool {
		return slices.ContainsFunc(b.dsim.Commands(""), func(c discordsim.Command) bool { return c.Name == "join" })
	}) {
		t.Fatalf("voice commands never registered:\n%s", b.logs.String())
	}
	return v
}

// voiceState is where the bot's voice session stands: "up" (a session, the bot in the voice
// server's channel, the channel's DAVE group holding the bot and the member with nothing
// outstanding), "down" (no session, not in the channel), or "" (on its way up or down).
func (v *voiceBot) voiceState() string {
	starts, ends := v.logs.count(0, "voice_session_start"), v.logs.count(0, "voice_session_end")
	st, ok := v.dsim.VoiceStateOf(v.guild, v.dsim.BotID())
	inChannel := ok && st.Channel == v.vc
	inServer := slices.Contains(v.vs.Users(string(v.guild), string(v.vc)), v.botID())
	dave := v.vs.DAVE(string(v.guild), string(v.vc))
	switch {
	case starts > ends && inChannel && inServer && len(dave.Members) == 2 && !dave.Busy:
		return "up"
	case starts == ends && !inChannel && !inServer:
		return "down"
	}
	return ""
}

// ensureJoined waits until the bot's voice session is up, asking it to join (!join) once it is
// down (a previous row may have ended it: the end settles first).
func (v *voiceBot) ensureJoined(ctx context.Context) error {
	asked := false
	if !v.logs.wait(ctx, func() bool {
		switch v.voiceState() {
		case "up":
			return true
		case "down":
			if !asked {
				asked = true
				if _, err := v.dsim.Post(ctx, v.alice, v.ch, "!join"); err != nil {
					asked = false
				}
			}
		}
		return false
	}) {
		return fmt.Errorf("the bot's voice session never came up (asked to join: %v): DAVE %+v", asked, v.vs.DAVE(string(v.guild), string(v.vc)))
	}
	return nil
}

// voiceRun is one utterance: where the log and what the member heard stood when it began.
type voiceRun struct {
	marker string
	off    int // log offset
	heard0 int // frames of the bot the member had heard
}

// outcome is how the utterance ended so far: "answered", "explained", "spoken" (logged as
// spoken, not heard, yet) or "".
func (v *voiceBot) outcome(r voiceRun) string {
	spoken, explained, sessionEnd, started := false, false, false, false
	guild := string(v.guild)
	for _, line := range v.logs.since(r.off) {
		msg := line.msg()
		if line.str("guild_id") == guild {
			switch msg {
			case "voice_session_start":
				started = true
			case "voice_session_end":
				// The session the utterance was spoken to: the first to end after it, unless
				// another started in between (then the one that ended never heard it).
				sessionEnd = sessionEnd || !started
			}
		}
		switch {
		case strings.Contains(line.str("transcript"), r.marker):
			if msg == "stt_pipeline_reply_spoken" || msg == "realtime_reply_spoken" {
				spoken = true
			} else if slices.Contains(voiceExplained, msg) {
				explained = true
			}
		case msg == "voice_turn_failed" && line.str("stage") == "stt" && line.str("user_id") == string(v.alice) && !started:
			explained = true // its transcription failed (there is no transcript to name it)
		}
	}
	switch {
	case spoken && len(v.member.Heard(v.botID())) >= r.heard0+minHeard:
		return "answered"
	case explained || sessionEnd:
		return "explained"
	case spoken:
		return "spoken"
	}
	return ""
}

// voiceFault is one voice row.
type voiceFault struct {
	name string
	runs int
	// reply is what the model answers (default a short sentence).
	reply string
	// rules are model faults, matched before the answer.
	rules []openaisim.Rule
	// before runs before the member speaks, inject right after it spoke or, with
	// whileSpeaking, once the member hears the bot's reply. The returned function, if any,
	// runs when the run is over (it must stop whatever inject started).
	before        func(ctx context.Context, v *voiceBot) error
	inject        func(ctx context.Context, v *voiceBot) (func(), error)
	whileSpeaking bool
	// check asserts more once the run is over.
	check func(t *testing.T, v *voiceBot, r voiceRun)
}

const longReply = "Sunny this morning, with a light breeze from the west. Clouds roll in after lunch. " +
	"By the evening it may rain, so take an umbrella."

func closeWith(code int) func(context.Context, *voiceBot) (func(), error) {
	return func(_ context.Context, v *voiceBot) (func(), error) { return nil, v.vs.CloseVoice(v.botID(), code) }
}

func voiceFaults() []voiceFault {
	return []voiceFault{
		{name: "voice_none", runs: 1},
		{name: "voice_ws_close_4006", runs: 1, inject: closeWith(4006)},
		{name: "voice_ws_close_4009", runs: 1, inject: closeWith(4009)},
		{name: "voice_ws_close_4014", runs: 1, inject: closeWith(4014)},
		{name: "voice_ws_close_4015", runs: 1, inject: closeWith(4015)},
		{name: "voice_ws_drop", runs: 1, inject: func(_ context.Context, v *voiceBot) (func(), error) { return nil, v.vs.DropVoice(v.botID()) }},
		{name: "voice_ws_close_4015_speaking", runs: 1, reply: longReply, whileSpeaking: true, inject: closeWith(4015)},
		{name: "voice_ws_close_4006_speaking", runs: 1, reply: longReply, whileSpeaking: true, inject: closeWith(4006)},
		{name: "voice_ws_close_4014_speaking", runs: 1, reply: longReply, whileSpeaking: true, inject: closeWith(4014)},
		{name: "voice_udp_silent", runs: 1, inject: udpSilent},
		{name: "voice_generation_500", runs: 1, rules: []openaisim.Rule{{Name: "gen-fail",
			Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Fault: openaisim.Fault{Status: 500}, Times: 2}}},
		{name: "voice_generation_cut", runs: 1, rules: []openaisim.Rule{{Name: "gen-cut",
			Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Text: longReply},
			Fault: openaisim.Fault{TruncateAfterEvents: 12}, Times: 1}}},
		{name: "voice_tts_cut", runs: 1, rules: []openaisim.Rule{{Name: "tts-cut",
			Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech}, Fault: openaisim.Fault{TruncateAfterEvents: 2}, Times: 1}}},
		{name: "voice_dave_transition_stuck", runs: 1, before: daveTransitionStuck, check: func(t *testing.T, v *voiceBot, r voiceRun) {
			if v.logs.count(0, "dave_transition_timeout") == 0 {
				t.Errorf("voice_dave_transition_stuck: no dave_transition_timeout logged")
			}
		}},
	}
}

// realtimeFaults run on a bot with voice.mode realtime (brain strategy: the realtime model
// voices the reply).
func realtimeFaults() []voiceFault {
	return []voiceFault{
		{name: "realtime_none", runs: 1},
		{name: "realtime_socket_drop", runs: 1, rules: []openaisim.Rule{{Name: "rt-drop",
			Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}, Fault: openaisim.Fault{DropAfterEvents: 6}, Times: 1}}},
	}
}

// udpSilent drops every UDP packet to and from the bot until the bot's reply has lost
// minHeard frames in the silence (an event, not a duration), then lets packets flow again.
func udpSilent(ctx context.Context, v *voiceBot) (func(), error) {
	dropped0 := v.vs.Stats().FaultDropped
	for _, dir := range []voicesim.Direction{voicesim.ToServer, voicesim.FromServer} {
		v.vs.SetFaults(v.botID(), dir, voicesim.Faults{LossPercent: 100})
	}
	lift := func() {
		for _, dir := range []voicesim.Direction{voicesim.ToServer, voicesim.FromServer} {
			v.vs.SetFaults(v.botID(), dir, voicesim.Faults{})
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.logs.wait(ctx, func() bool { return v.vs.Stats().FaultDropped >= dropped0+minHeard })
		lift()
	}()
	return func() { cancel(); <-done }, nil
}

// daveTransitionStuck makes the bot start a fresh voice connection (close 4006) whose first
// DAVE transition never completes: its op 22 is withheld. The bot has no sender key until its
// TransitionTimeout executes the transition; its reply's first frame waits for the key.
func daveTransitionStuck(ctx context.Context, v *voiceBot) error {
	guild, vc := string(v.guild), string(v.vc)
	withheld := v.vs.DAVE(guild, vc).Stats.Withheld
	v.vs.WithholdDAVE(guild, vc, v.botID(), voicesim.OpDAVEExecuteTransition, 1)
	if err := v.vs.CloseVoice(v.botID(), 4006); err != nil {
		return err
	}
	if !v.logs.wait(ctx, func() bool { return v.vs.DAVE(guild, vc).Stats.Withheld > withheld }) {
		return fmt.Errorf("the bot's new connection never reached its DAVE transition: %+v", v.vs.DAVE(guild, vc))
	}
	return nil
}

// runVoiceBot starts a voice bot in mode, runs the rows on it and stops it.
func runVoiceBot(t *testing.T, ctx context.Context, mode string, faults []voiceFault) []row {
	v := startVoiceBot(t, ctx, mode)
	defer func() {
		if err := v.stop(); err != nil {
			t.Errorf("voice bot (%s): run returned %v", mode, err)
		}
	}()
	var rows []row
	for _, f := range faults {
		r := row{name: f.name, runs: f.runs}
		for run := 0; run < f.runs; run++ {
			r.tally(v.runVoice(t, ctx, f, run))
		}
		rows = append(rows, r)
	}
	return rows
}

// runVoice runs one utterance of row f and returns its outcome.
func (v *voiceBot) runVoice(t *testing.T, ctx context.Context, f voiceFault, run int) string {
	g, cancel := guard(ctx)
	defer cancel()
	if err := v.ensureJoined(g); err != nil {
		t.Fatalf("%s: %v\n%s", f.name, err, v.logs.String())
	}
	// The row's model faults first (rules match in order), then the answer.
	v.osim.ResetRules()
	for _, rule := range f.rules {
		if err := v.osim.AddRule(rule); err != nil {
			t.Fatal(err)
		}
	}
	reply := f.reply
	if reply == "" {
		reply = "Sunny, I'd say."
	}
	if err := v.osim.AddRule(openaisim.Rule{Name: "answer", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
		Reply: openaisim.Reply{Text: reply}}); err != nil {
		t.Fatal(err)
	}
	if f.before != nil {
		if err := f.before(g, v); err != nil {
			t.Fatalf("%s: %v\n%s", f.name, err, v.logs.String())
		}
	}
	r := voiceRun{marker: fmt.Sprintf("(%s run %d)", f.name, run), off: v.logs.Len(), heard0: len(v.member.Heard(v.botID()))}
	v.osim.QueueTranscripts("hey banter, what's the weather like today? " + r.marker)
	if err := v.member.PlayPCM(g, v.samples); err != nil {
		t.Fatalf("%s: play: %v", f.name, err)
	}
	if f.inject != nil {
		if f.whileSpeaking {
			if err := v.member.WaitHeard(g, v.botID(), r.heard0+5); err != nil {
				t.Fatalf("%s: the bot's reply never reached the member: %v\n%s", f.name, err, v.logs.String())
			}
		}
		var undo func()
		if err := retryInject(g, func() (err error) { undo, err = f.inject(g, v); return err }); err != nil {
			t.Fatalf("%s: inject: %v\n%s", f.name, err, v.logs.String())
		}
		if undo != nil {
			defer undo()
		}
	}
	outcome := ""
	v.logs.wait(g, func() bool {
		outcome = v.outcome(r)
		return outcome == "answered" || outcome == "explained"
	})
	// A reply logged as spoken may still be reaching the member: wait for its frames (an
	// event), then decide.
	if outcome == "spoken" {
		if err := v.member.WaitHeard(g, v.botID(), r.heard0+minHeard); err == nil {
			outcome = v.outcome(r)
		}
	}
	if outcome != "answered" && outcome != "explained" {
		t.Errorf("%s run %d: the addressed utterance ended in no defined state (%q; member heard %d frames of the bot)\n%s",
			f.name, run, outcome, len(v.member.Heard(v.botID()))-r.heard0, v.logs.String()[r.off:])
	}
	if f.check != nil {
		f.check(t, v, r)
	}
	// The next run starts once the bot is quiet (or gone).
	v.logs.wait(g, func() bool {
		flags, ok := v.vs.Speaking(string(v.guild), v.botID())
		return !ok || flags == 0
	})
	return outcome
}
