package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// transcribeGuard bounds the wait for the bot to ask for an utterance's transcript: past it,
// the bot did not hear the utterance (its transcript is withdrawn, so that it cannot become
// the next one's).
const transcribeGuard = 20 * time.Second

// voiceTraffic keeps one member in the voice channel asking the bot something every few
// seconds, asking it to join again whenever it is not there. Every utterance carries a marker
// in its transcript ("(voice N)") by which the ledger follows it.
func (w *world) voiceTraffic(ctx context.Context, samples []int16) {
	member, err := w.dsim.JoinVoiceMember(ctx, w.users[0], w.voice, voicesim.MemberOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: voice member:", err)
		return
	}
	defer member.Leave()
	bot := string(w.dsim.BotID())
	w.ledger.mu.Lock()
	w.ledger.heard = func() int { return len(member.Heard(bot)) }
	w.ledger.mu.Unlock()
	for n := 1; ctx.Err() == nil; {
		if st, ok := w.dsim.VoiceStateOf(w.guild, w.dsim.BotID()); !ok || st.Channel != w.voice {
			_, _ = w.dsim.Post(ctx, w.users[0], w.texts[0], "!join")
			if !sleep(ctx, 3*time.Second) {
				return
			}
			continue
		}
		u := &utterance{marker: fmt.Sprintf("(voice %d)", n), start: time.Now(), heard0: len(member.Heard(bot))}
		n++
		w.osim.QueueTranscripts("hey banter, what's the weather like today? " + u.marker)
		w.ledger.spoke(u)
		// An utterance begun is followed to its end, also when the run ends meanwhile.
		_ = member.PlayPCM(context.WithoutCancel(ctx), samples)
		end := time.Now()
		transcribed := w.waitTranscribed(context.WithoutCancel(ctx), u.marker)
		if !transcribed {
			w.osim.ClearTranscripts()
		}
		w.ledger.finished(u, end, transcribed)
		// Like a person, the member lets the bot answer (bounded) before asking again, also
		// the last time, when the run has ended meanwhile.
		w.waitAnswered(context.WithoutCancel(ctx), u)
		if !sleep(ctx, jitter(3*time.Second)) {
			return
		}
	}
}

// transcribed reports whether a transcription request of the bot took the transcript that
// carries marker (the simulator records the transcript each request got).
func (w *world) transcribed(marker string) bool {
	for _, e := range []openaisim.Endpoint{openaisim.EndpointTranscriptions, openaisim.EndpointRealtimeTranscription} {
		for _, r := range w.osim.RequestsFor(e) {
			if strings.Contains(r.LastUserText, marker) {
				return true
			}
		}
	}
	return false
}

// waitTranscribed waits (bounded by transcribeGuard) until the utterance's transcript was taken.
func (w *world) waitTranscribed(ctx context.Context, marker string) bool {
	ctx, cancel := context.WithTimeout(ctx, transcribeGuard)
	defer cancel()
	for !w.transcribed(marker) {
		if !sleep(ctx, 50*time.Millisecond) {
			return w.transcribed(marker)
		}
	}
	return true
}

// waitAnswered waits (at most 30 s) until the utterance has an outcome and the bot is quiet.
func (w *world) waitAnswered(ctx context.Context, u *utterance) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for sleep(ctx, 50*time.Millisecond) {
		flags, ok := w.vs.Speaking(string(w.guild), string(w.dsim.BotID()))
		if w.ledger.settled(u) && (!ok || flags == 0) {
			return
		}
	}
}

// soakFault is one kind of fault the soak injects at random.
type soakFault struct {
	name string
	do   func(ctx context.Context) error
}

// faults injects a random fault every so often: gateway drops and closes, op 7, op 9, send
// errors (before and after the create took effect), model errors and cut streams, and on the
// voice side the voice WebSocket closed with 4006/4009/4014/4015 or dropped, the UDP path
// silent, a TTS stream cut, a DAVE transition that never completes, and (voice.mode realtime)
// the realtime socket dropped mid-response.
func (w *world) faults(ctx context.Context, mean time.Duration) {
	all := w.faultKinds()
	for ctx.Err() == nil {
		if !sleep(ctx, jitter(mean)) {
			return
		}
		f := all[rand.IntN(len(all))]
		if err := f.do(ctx); err == nil {
			w.ledger.fault(f.name)
		}
	}
}

func (w *world) faultKinds() []soakFault {
	bot := string(w.dsim.BotID())
	rule := func(r openaisim.Rule) func(context.Context) error {
		return func(context.Context) error { return w.osim.AddRule(r) }
	}
	kinds := []soakFault{
		{"gateway_tcp_drop", func(context.Context) error { return w.dsim.DropGateway() }},
		{"gateway_close_4000", func(context.Context) error { return w.dsim.CloseGateway(discordsim.CloseUnknownError) }},
		{"gateway_op7", func(context.Context) error { return w.dsim.ForceReconnect() }},
		{"gateway_op9", func(context.Context) error { return w.dsim.ForceInvalidSession(false) }},
		{"send_500", func(context.Context) error { w.dsim.FailNext(discordsim.RouteMessageCreate, 1, 500); return nil }},
		{"send_503_after_commit", func(context.Context) error {
			w.dsim.FailNextAfterCommit(discordsim.RouteMessageCreate, 1, 503)
			return nil
		}},
		{"model_500", rule(openaisim.Rule{Name: "fault", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
			Fault: openaisim.Fault{Status: 500}, Times: 2})},
		{"generation_cut", rule(openaisim.Rule{Name: "cut", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
			Reply: openaisim.Reply{Text: "Sunny this morning, with a light breeze from the west. Clouds later, maybe rain."},
			Fault: openaisim.Fault{TruncateAfterEvents: 10}, Times: 1})},
		{"voice_close_4006", func(context.Context) error { return w.vs.CloseVoice(bot, 4006) }},
		{"voice_close_4009", func(context.Context) error { return w.vs.CloseVoice(bot, 4009) }},
		{"voice_close_4014", func(context.Context) error { return w.vs.CloseVoice(bot, 4014) }},
		{"voice_close_4015", func(context.Context) error { return w.vs.CloseVoice(bot, 4015) }},
		{"voice_ws_drop", func(context.Context) error { return w.vs.DropVoice(bot) }},
		{"voice_udp_silent", w.udpSilent},
		{"voice_dave_transition_stuck", func(context.Context) error {
			// The bot's next connection's first transition never completes (op 22 withheld).
			if !slices.Contains(w.vs.Users(string(w.guild), string(w.voice)), bot) {
				return errors.New("the bot is not in the voice channel")
			}
			w.vs.WithholdDAVE(string(w.guild), string(w.voice), bot, voicesim.OpDAVEExecuteTransition, 1)
			return w.vs.CloseVoice(bot, 4006)
		}},
	}
	if w.mode == "realtime" {
		return append(kinds, soakFault{"realtime_socket_drop", rule(openaisim.Rule{Name: "rt-drop",
			Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}, Fault: openaisim.Fault{DropAfterEvents: 6}, Times: 1})})
	}
	return append(kinds, soakFault{"tts_cut", rule(openaisim.Rule{Name: "tts-cut",
		Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech}, Fault: openaisim.Fault{TruncateAfterEvents: 2}, Times: 1})})
}

// udpSilent drops the bot's outgoing audio until minHeard of its packets (200 ms of a reply)
// were lost, or 10 s passed without a reply to lose: the rest of the reply must then be heard.
func (w *world) udpSilent(ctx context.Context) error {
	bot := string(w.dsim.BotID())
	dropped0 := w.vs.Stats().FaultDropped
	w.vs.SetFaults(bot, voicesim.ToServer, voicesim.Faults{LossPercent: 100})
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for w.vs.Stats().FaultDropped < dropped0+minHeard && sleep(ctx, 50*time.Millisecond) {
		}
		w.vs.SetFaults(bot, voicesim.ToServer, voicesim.Faults{})
	}()
	return nil
}
