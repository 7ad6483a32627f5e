package voice_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// specFixture is one utterance of BenchmarkSpeculative: what the member says, and what the
// simulated transcriber hears in it — partial for the audio up to its first pause (pre- and
// post-roll included), whole for more.
type specFixture struct {
	name           string
	talk           talk
	partial, whole string
}

// transcript is what the transcriber returns for an upload of audio length d.
func (f *specFixture) transcript(d time.Duration) string {
	if len(f.talk.parts) > 1 && d < audioLen(f.talk.parts[0])+600*time.Millisecond {
		return f.partial
	}
	return f.whole
}

// span is what a transcription session returns for the span of d from off: the words the
// transcript of the audio up to its end has beyond those of the audio before it.
func (f *specFixture) span(off, d time.Duration) string {
	all := strings.Fields(f.transcript(off + d))
	if off == 0 {
		return strings.Join(all, " ")
	}
	return strings.Join(all[min(len(strings.Fields(f.transcript(off))), len(all)):], " ")
}

// spoken is the transcript of the whole utterance as the arm's transcriber gives it: one
// upload hears the whole; spans hear the first part and then the words after it.
func (f *specFixture) spoken(spans bool) string {
	if !spans || len(f.talk.parts) < 2 {
		return f.whole
	}
	first := strings.Fields(f.partial)
	rest := strings.Fields(f.whole)[min(len(first), len(strings.Fields(f.whole))):]
	return strings.Join(append(first, rest...), " ")
}

// specFixtures: questions without a pause, pauses of 300 to 700 ms in the middle (after a
// complete question, and mid-clause), and an utterance that trails off.
func specFixtures(b *testing.B) []*specFixture {
	clip := func(name string) []int16 { return trimSpeech(speech(b, name)) }
	one := func(name string) talk { return talk{parts: [][]int16{clip(name)}} }
	two := func(a string, pause time.Duration, c string) talk {
		return talk{parts: [][]int16{clip(a), clip(c)}, pauses: []time.Duration{pause}}
	}
	return []*specFixture{
		{name: "question", talk: one("hey-banter-weather"), whole: "hey banter, what's the weather like today?"},
		{name: "question-short", talk: one("mike-hear-me"), whole: "banter, can you hear me?"},
		{name: "pause-400-after-question", talk: two("hey-banter-weather", 400*time.Millisecond, "mike-hear-me"),
			partial: "hey banter, what's the weather like?", whole: "hey banter, what's the weather like in Paris tomorrow?"},
		{name: "pause-600-after-question", talk: two("hey-banter-weather", 600*time.Millisecond, "mike-hear-me"),
			partial: "hey banter, what's the weather like?", whole: "hey banter, what's the weather like in Paris tomorrow?"},
		{name: "pause-700-after-question", talk: two("hey-banter-weather", 700*time.Millisecond, "mike-hear-me"),
			partial: "hey banter, what's the weather like?", whole: "hey banter, what's the weather like in Paris tomorrow?"},
		{name: "pause-300-mid-clause", talk: two("thats-just-banter", 300*time.Millisecond, "banter-stop"),
			partial: "banter, so I was thinking that", whole: "banter, so I was thinking that we could stop for lunch."},
		{name: "pause-500-mid-clause", talk: two("banter-stop", 500*time.Millisecond, "thats-just-banter"),
			partial: "banter, and then the", whole: "banter, and then the band played all night."},
		{name: "trailing-off", talk: one("thats-just-banter"), whole: "banter, so I was thinking that..."},
	}
}

// specTurn is one measured turn.
type specTurn struct {
	ms         float64 // end of voice → first bot audio packet heard
	calls      int     // provider requests: HTTP requests and transcription sessions opened
	spans      int     // spans committed to transcription sessions
	sttAudio   float64 // seconds of audio sent to speech to text
	wrongStart bool
	event      map[string]any
	trace      string // the provider requests
}

// BenchmarkSpeculative compares, in one process against the same simulators with the same
// injected provider latencies (STT 150 ms, first token 200 ms, TTS first byte 120 ms), the
// serial pipeline (speculation off, fixed 700 ms end of turn: banter before issue 23) with the
// speculative one (the defaults: speculation at 200 ms pauses, the shipped end of turn,
// 800/800/1200 ms), turn by turn over specFixtures, each fixture said live by a member in both arms in turn.
// Measured on the audio timeline: from the moment the frame with the utterance's last speech
// sample is sent to the first frame of the bot's answer the member receives. Reported: the
// medians and p90s, their ratio, provider calls per turn (ratio), and wrong starts (bot audio
// while the member was still talking, or an answer to anything but the whole utterance).
// A third arm, serial-defaults, is speculation off with the shipped end of turn (the same
// guarantee as the speculative arm: no answer to half a sentence), reported beside it; its
// adaptive end transcribes the words at pauses to judge their shape, so its transcript is
// ready at the end of turn and only generation and speech remain.
// Each turn is real time (3–9 s); one iteration is two rounds over the fixtures.
func BenchmarkSpeculative(b *testing.B) {
	var cur atomic.Pointer[specFixture]
	stt := openaisim.Rule{Name: "stt", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
		Respond: func(r openaisim.Request) openaisim.Reply {
			return openaisim.Reply{Transcript: cur.Load().transcript(r.Audio)}
		},
		Latency: openaisim.Latency{TimeToFirstToken: injectedSTT}}
	spans := openaisim.Rule{Name: "stt-span", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeTranscription},
		Respond: func(r openaisim.Request) openaisim.Reply {
			w := cur.Load().span(r.AudioOffset, r.Audio)
			return openaisim.Reply{Transcript: w, NoSpeech: w == ""}
		},
		Latency: openaisim.Latency{TimeToFirstToken: injectedSTT}}
	// Two rounds of 2 × 8 turns of 3–9 s each: more than a test world's usual life.
	w := newWorldWith(b, worldOptions{timeout: 15 * time.Minute}, func(c *config.Config) { c.Voice.Endpointing.SilenceMs = 700 }, stt, spans,
		openaisim.Rule{Name: "gen", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
			Reply: openaisim.Reply{Text: "Sure, here it is."}, Latency: openaisim.Latency{TimeToFirstToken: injectedTTFT}},
		openaisim.Rule{Name: "tts", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech},
			Latency: openaisim.Latency{TTSFirstByte: injectedTTS}})
	alice := w.member("alice")
	w.join()
	def := config.Default().Voice
	arms := []struct {
		name string
		set  func(*config.Config)
	}{
		{"serial", func(c *config.Config) {
			c.Voice.Speculation.Enabled = false
			c.Voice.Endpointing.SilenceMs, c.Voice.Endpointing.CompleteSilenceMs, c.Voice.Endpointing.TrailingSilenceMs = 700, 0, 0
		}},
		{"serial-defaults", func(c *config.Config) {
			c.Voice.Speculation.Enabled = false
			c.Voice.Endpointing.SilenceMs = def.Endpointing.SilenceMs
			c.Voice.Endpointing.CompleteSilenceMs, c.Voice.Endpointing.TrailingSilenceMs = def.Endpointing.CompleteSilenceMs, def.Endpointing.TrailingSilenceMs
		}},
		{"speculative", func(c *config.Config) {
			c.Voice.Speculation = def.Speculation
			c.Voice.Endpointing.SilenceMs = def.Endpointing.SilenceMs
			c.Voice.Endpointing.CompleteSilenceMs, c.Voice.Endpointing.TrailingSilenceMs = def.Endpointing.CompleteSilenceMs, def.Endpointing.TrailingSilenceMs
		}},
	}
	fixtures := specFixtures(b)
	// Warm-up: the connection's first talk spurt, the HTTP connections.
	cur.Store(fixtures[1])
	w.reconfigure(arms[0].set)
	specTurnOnce(b, w, alice, fixtures[1], false)
	results := map[string][]specTurn{}
	b.ResetTimer()
	for b.Loop() {
		for range 2 {
			for _, f := range fixtures {
				cur.Store(f)
				for _, arm := range arms {
					w.reconfigure(arm.set)
					// Spans transcribe the words at pauses where the end of turn is adaptive
					// (the shape of the words so far), speculating or not.
					r := specTurnOnce(b, w, alice, f, arm.name != "serial" && def.Speculation.Transcription != "upload")
					results[arm.name] = append(results[arm.name], r)
					b.Logf("%-26s %-11s %7.1f ms (bot: first packet %v ms after its end of turn) calls %d wrong %v stage %v saved %v ms:%s",
						f.name, arm.name, r.ms, r.event["first_packet_ms"], r.calls, r.wrongStart, r.event["speculation_stage"],
						r.event["speculation_saved_ms"], r.trace)
				}
			}
		}
	}
	b.StopTimer()
	perTurn := func(rs []specTurn) (spans, sttAudio float64) {
		for _, r := range rs {
			spans += float64(r.spans)
			sttAudio += r.sttAudio
		}
		return spans / float64(len(rs)), sttAudio / float64(len(rs))
	}
	stats := func(rs []specTurn) (med, p90, calls float64, wrong int) {
		var ms []float64
		for _, r := range rs {
			ms = append(ms, r.ms)
			calls += float64(r.calls)
			if r.wrongStart {
				wrong++
			}
		}
		slices.Sort(ms)
		return ms[len(ms)/2], ms[int(0.9*float64(len(ms)-1)+0.5)], calls / float64(len(rs)), wrong
	}
	sMed, sP90, sCalls, sWrong := stats(results["serial"])
	pMed, pP90, pCalls, pWrong := stats(results["speculative"])
	b.ReportMetric(sMed, "serial-ms-median")
	b.ReportMetric(sP90, "serial-ms-p90")
	b.ReportMetric(pMed, "speculative-ms-median")
	b.ReportMetric(pP90, "speculative-ms-p90")
	b.ReportMetric(pMed/sMed, "speculative/serial")
	dMed, _, _, dWrong := stats(results["serial-defaults"])
	b.ReportMetric(dMed, "serial-defaults-ms-median")
	b.ReportMetric(pMed/dMed, "speculative/serial-defaults")
	b.ReportMetric(float64(dWrong), "serial-defaults-wrong-starts")
	b.ReportMetric(float64(pWrong), "wrong-starts")
	b.ReportMetric(float64(sWrong), "serial-wrong-starts")
	b.ReportMetric(sCalls, "serial-calls/turn")
	b.ReportMetric(pCalls, "speculative-calls/turn")
	b.ReportMetric(pCalls/sCalls, "calls-ratio")
	_, sAudio := perTurn(results["serial"])
	pSpans, pAudio := perTurn(results["speculative"])
	b.ReportMetric(pSpans, "speculative-spans/turn")
	b.ReportMetric(pAudio/sAudio, "stt-audio-ratio")
	b.ReportMetric(0, "ns/op")
}

// specTurnOnce has the member say f and measures the bot's answer: the time from the last
// speech frame sent to the first bot frame received, the provider calls of the turn, and
// whether it was a wrong start.
func specTurnOnce(b *testing.B, w *world, alice *voicesim.Member, f *specFixture, spans bool) specTurn {
	b.Helper()
	w.osim.ResetRecords()
	heard := len(alice.Heard(w.botID))
	spoken := len(w.logs.Events("stt_pipeline_reply_spoken"))
	first := make(chan time.Time, 1)
	go func() {
		if alice.WaitHeard(w.ctx, w.botID, heard+1) == nil {
			first <- time.Now()
		}
		close(first)
	}()
	last, err := say(w.ctx, alice, f.talk)
	if err != nil {
		b.Fatal(err)
	}
	var r specTurn
	// Bot audio before the member was done (say returns 100 ms after the last speech frame,
	// long before any end of turn): the bot talked over them.
	r.wrongStart = len(alice.Heard(w.botID)) > heard
	at, ok := <-first
	if !ok {
		b.Fatalf("%s: no answer heard", f.name)
	}
	r.ms = float64(at.Sub(last).Microseconds()) / 1000
	w.waitLogs(spoken+1, `"msg":"stt_pipeline_reply_spoken"`)
	evs := w.logs.Events("stt_pipeline_reply_spoken")
	r.event = evs[spoken]
	if len(evs) != spoken+1 || r.event["transcript"] != f.spoken(spans) {
		r.wrongStart = true // an answer to part of the utterance
	}
	for _, q := range w.osim.Requests() {
		switch q.Endpoint {
		case openaisim.EndpointRealtimeTranscription: // a span committed to a session: not a call
			r.spans++
			r.sttAudio += q.AudioDuration.Seconds()
			r.trace += fmt.Sprintf(" span(%dms)", q.AudioDuration.Milliseconds())
			continue
		case openaisim.EndpointTranscriptions:
			r.sttAudio += q.AudioDuration.Seconds()
		}
		r.calls++
		r.trace += fmt.Sprintf(" %s/%s", strings.TrimPrefix(q.Path, "/v1/"), q.Rule)
		if q.Endpoint == openaisim.EndpointTranscriptions {
			r.trace += fmt.Sprintf("(%dms)", q.AudioDuration.Milliseconds())
		}
	}
	return r
}
