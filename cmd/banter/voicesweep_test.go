package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// What the member of the pause sweep says, and what banter should answer.
const (
	sweepHalf   = "hey banter, what's the weather like?" // the complete-sounding first half
	sweepWhole  = "hey banter, what's the weather like in Paris tomorrow?"
	sweepMore   = "in Paris tomorrow?" // the continuation, heard alone
	sweepAnswer = "Sunny in Paris tomorrow."
	// sweepHeard is the whole as banter's transcription session hears it: the first half in the
	// span committed at the pause, the rest in the span committed at the end.
	sweepHeard = sweepHalf + " " + sweepMore
)

// sweepSTT is the speech to text of the pause sweep: a transcriber that hears the first half in
// the audio up to where the continuation starts and the whole beyond it, so that a turn ended
// in the pause is transcribed as the first half alone, and an utterance after the first of a
// round (the continuation, had the pause split the question) as the continuation alone.
type sweepSTT struct {
	mu       sync.Mutex
	cont     time.Duration // where the continuation starts in the audio of the round's first utterance
	sessions int           // transcription sessions opened this round
}

// round starts a round whose continuation starts cont into the first utterance's audio.
func (s *sweepSTT) round(cont time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cont, s.sessions = cont, 0
}

// upTo is what the first d of the round's first utterance holds.
func (s *sweepSTT) upTo(d time.Duration) string {
	if d <= s.cont {
		return sweepHalf
	}
	return sweepWhole
}

// rules answer uploads with the words of their length, and each span of a transcription session
// with the words its end adds to those of its start (a later session: the continuation).
func (s *sweepSTT) rules() []openaisim.Rule {
	return []openaisim.Rule{
		{Name: "sweep-stt", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
			Respond: func(r openaisim.Request) openaisim.Reply {
				s.mu.Lock()
				defer s.mu.Unlock()
				return openaisim.Reply{Transcript: s.upTo(r.Audio)}
			}},
		{Name: "sweep-span", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeTranscription},
			Respond: func(r openaisim.Request) openaisim.Reply {
				s.mu.Lock()
				defer s.mu.Unlock()
				if r.AudioOffset == 0 {
					s.sessions++
				}
				w := ""
				switch {
				case s.sessions > 1 && r.AudioOffset == 0:
					w = sweepMore
				case s.sessions == 1:
					all := strings.Fields(s.upTo(r.AudioOffset + r.Audio))
					before := 0
					if r.AudioOffset > 0 {
						before = len(strings.Fields(s.upTo(r.AudioOffset)))
					}
					w = strings.Join(all[min(before, len(all)):], " ")
				}
				return openaisim.Reply{Transcript: w, NoSpeech: w == ""}
			}},
	}
}

// sweepTurnEvents are the log events that end a turn (or take one back) in a voice session.
var sweepTurnEvents = []string{"stt_pipeline_reply_spoken", "stt_pipeline_reply_interrupted", "stt_pipeline_reply_denied",
	"stt_pipeline_reply_skipped", "voice_turn_failed", "voice_false_end"}

// sweepRound is what one pause gave.
type sweepRound struct {
	pause              time.Duration
	wrongSpurts        int     // talk spurts of the bot the member heard begin before its end of voice
	wrongFrames        int     // bot packets the member received before its end of voice
	answers            int     // stt_pipeline_reply_spoken of the round
	ms                 float64 // the member's end of voice → the first bot audio it received
	transcript, spoken any     // the answered turn's
	silenceMs, firstMs any     // banter's end silence as heard, its end of turn → first packet
}

// TestRunVoiceDiscordJSPauseSweep is issue 30's measurement from outside, as its reviewers made
// it: an unmodified @discordjs/voice member (interop/voice/client.mjs, @snazzah/davey doing
// DAVE, the audio encoded by the library's Opus and sent by its AudioPlayer, silence included)
// joins the voice channel with the grant the Discord simulator gives it, banter (`banter run`
// with the shipped turn-taking) joins it there, and the member says "hey banter, what's the
// weather like?", pauses P and goes on "in Paris tomorrow?", for P of 400, 500, 600 and 700 ms.
// For each: no bot audio reaches the member before its end of voice, one answer, to the whole
// question, no false end; the end of voice → first bot audio the member received is logged.
func TestRunVoiceDiscordJSPauseSweep(t *testing.T) {
	question, goOn := voiceFixture(t, "hey-banter-weather"), voiceFixture(t, "mike-hear-me")
	v, alice, stt := startSweep(t, 4*time.Minute, sweepArm{})
	var rounds []sweepRound
	for _, ms := range []time.Duration{400, 500, 600, 700} {
		// the fixtures start at their first loud 10 ms: the utterance's audio starts with the
		// 200 ms of pre-roll before its first speech frame (audio/vad PreRoll), the stream's
		// silence before it
		rounds = append(rounds, v.sweep(t, alice, stt, question, goOn, ms*time.Millisecond, 200*time.Millisecond))
	}
	t.Logf("pause | wrong starts (spurts/frames) | answers | end of voice → first bot audio at the member | banter: silence_ms, first_packet_ms")
	for _, r := range rounds {
		t.Logf("%v | %d/%d | %d | %.1f ms | %v, %v", r.pause, r.wrongSpurts, r.wrongFrames, r.answers, r.ms, r.silenceMs, r.firstMs)
	}
}

// sweepArm is how banter runs a sweep: more of its voice section (YAML lines under voice:;
// "" the shipped turn-taking) and whether the simulated providers take BenchmarkSpeculative's
// latencies (speech to text 150 ms, first token 200 ms, first speech byte 120 ms; else none).
type sweepArm struct {
	name      string
	voiceYAML string
	latencies bool
}

// startSweep launches banter (`banter run`, no join greeting, the turn-taking of arm) with the
// sweep's transcriber and answers, and has an unmodified discord.js member, alice, join the
// voice channel with banter and settle DAVE with it; timeout bounds the whole test.
func startSweep(t *testing.T, timeout time.Duration, arm sweepArm) (*voiceBanter, *djsMember, *sweepSTT) {
	t.Helper()
	node, dir := interopNode(t)
	var sttLat, genLat, ttsLat openaisim.Latency
	if arm.latencies {
		sttLat = openaisim.Latency{TimeToFirstToken: openaitest.BenchSTTLatency}
		genLat = openaisim.Latency{TimeToFirstToken: openaitest.BenchTTFTLatency}
		ttsLat = openaisim.Latency{TTSFirstByte: openaitest.BenchTTSLatency}
	}
	gen := func(pattern string) openaisim.Match {
		return openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(true), InputPattern: pattern}
	}
	stt := &sweepSTT{}
	rules := stt.rules()
	for i := range rules {
		rules[i].Latency = sttLat
	}
	v := launchVoiceBanter(t, timeout, "voice:\n  joinGreetingWindowSeconds: 0\n"+arm.voiceYAML, append(rules,
		openaisim.Rule{Match: gen(`like\?$`), Latency: genLat, Reply: openaisim.Reply{Text: "Let me tell you all about the weather. " +
			"In the morning there is fog over the hills. By noon the sun comes out and it gets quite warm."}},
		openaisim.Rule{Match: gen("Paris"), Latency: genLat, Reply: openaisim.Reply{Text: sweepAnswer}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech}, Latency: ttsLat})...)
	grant, err := v.dsim.JoinVoice(v.alice, v.vc)
	if err != nil {
		t.Fatal(err)
	}
	alice := startDJSMember(t, v.ctx, node, dir, v.vs.Endpoint(), v.vs.CAFile(), grant, v.dsim.BotID())
	v.joinBot(t)
	v.waitDAVE(t, alice)
	return v, alice, stt
}

// waitDAVE waits for the channel's DAVE group to hold the bot and alice, settled, with the
// member's session in its epoch.
func (v *voiceBanter) waitDAVE(t *testing.T, alice *djsMember) {
	t.Helper()
	want := []string{string(v.dsim.BotID()), string(v.alice)}
	slices.Sort(want)
	v.until(t, "the DAVE group of the bot and alice", func() bool {
		st := v.vs.DAVE(string(v.guild), string(v.vc))
		got := slices.Clone(st.Members)
		slices.Sort(got)
		if !st.Established || st.Busy || !slices.Equal(got, want) {
			return false
		}
		d := alice.dave()
		return d.Version == 1 && d.Ready && d.Epoch == int64(st.Epoch)
	})
}

// sweep has alice say the question, pause (digital silence) and goOn, and checks what she
// heard. preRoll is the audio the first utterance's audio holds before the question's start:
// the first utterance's transcript is the question alone up to the end of the pause.
func (v *voiceBanter) sweep(t *testing.T, alice *djsMember, stt *sweepSTT, question, goOn []int16, pause, preRoll time.Duration) sweepRound {
	t.Helper()
	r := sweepRound{pause: pause}
	failed := t.Failed()
	stt.round(preRoll + time.Duration(len(question)/2)*time.Second/48000 + pause)
	logFrom := len(v.logs.String())
	before := map[string]int{}
	for _, name := range sweepTurnEvents {
		before[name] = len(v.events(name))
	}
	alice.send("play " + writeRawPCM(t, slices.Concat(question, make([]int16, 2*48000*int(pause/time.Millisecond)/1000), goOn)))
	bot := string(v.dsim.BotID())
	end := alice.wait("the end of alice's audio", func(e djsEvent) bool {
		if e.User == bot && e.Event == "speaking" && e.Speaking {
			r.wrongSpurts++
		}
		if e.User == bot && e.Event == "opus" {
			r.wrongFrames++
		}
		return e.Event == "spoken"
	})
	first := alice.wait("the bot's answer", func(e djsEvent) bool { return e.User == bot && e.audio() })
	r.ms = first.T - end.T
	v.until(t, "an answer spoken", func() bool {
		return len(v.events("stt_pipeline_reply_spoken")) > before["stt_pipeline_reply_spoken"]
	})
	alice.quiet()
	spoken := v.events("stt_pipeline_reply_spoken")[before["stt_pipeline_reply_spoken"]:]
	r.answers = len(spoken)
	ev := spoken[0]
	r.transcript, r.spoken, r.silenceMs, r.firstMs = ev["transcript"], ev["spoken"], ev["silence_ms"], ev["first_packet_ms"]
	if r.wrongSpurts != 0 || r.wrongFrames != 0 {
		t.Errorf("pause %v: alice heard %d talk spurts, %d packets of the bot before her end of voice", pause, r.wrongSpurts, r.wrongFrames)
	}
	// the whole question, as the session heard it in two spans (sweepHeard) or, when the pause
	// was heard as under speculation.pauseMs (a short pause of a real speaker), in one
	if whole := r.transcript == sweepHeard || r.transcript == sweepWhole; r.answers != 1 || !whole || r.spoken != sweepAnswer {
		t.Errorf("pause %v: answers %v: want one, %q to %q or %q", pause, spoken, sweepAnswer, sweepHeard, sweepWhole)
	}
	for _, name := range sweepTurnEvents[1:] {
		if evs := v.events(name)[before[name]:]; len(evs) != 0 {
			t.Errorf("pause %v: %s %v: want none", pause, name, evs)
		}
	}
	if t.Failed() && !failed {
		t.Logf("pause %v: banter's log of the round:\n%s", pause, v.logs.String()[logFrom:])
	}
	return r
}

// writeRawPCM writes 48 kHz stereo samples as raw s16le PCM, padded with silence to whole 20 ms
// frames, to a file of the test's and returns its path.
func writeRawPCM(t *testing.T, samples []int16) string {
	t.Helper()
	const frame = 2 * 960 // samples in 20 ms of 48 kHz stereo
	samples = append(samples, make([]int16, (frame-len(samples)%frame)%frame)...)
	b := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("speech-%d.pcm", len(samples)))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
