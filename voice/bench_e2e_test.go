package voice_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// Provider latency injected by the simulator on the critical path of a turn.
const (
	injectedSTT  = openaitest.BenchSTTLatency
	injectedTTFT = openaitest.BenchTTFTLatency
	injectedTTS  = openaitest.BenchTTSLatency
)

// spokenEvents returns the stt_pipeline_reply_spoken log events.
func spokenEvents(w *world) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(w.logs.String(), "\n") {
		if !strings.Contains(l, `"msg":"stt_pipeline_reply_spoken"`) {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// BenchmarkTimeToFirstAudio measures, per turn through both simulators, the
// time from the end of the end-of-speech silence (endpointing closes the
// utterance) to the first Opus packet of the answer, with provider latency
// injected by the OpenAI simulator (STT 150 ms, first token 200 ms, TTS first
// byte 120 ms) and subtracted using what the simulator recorded. It reports
// the median overhead (ms) next to the median total and the injected
// baseline of the same run. Each turn is real time (~4 s): run it with
// -benchtime=10x.
func BenchmarkTimeToFirstAudio(b *testing.B) {
	w := newWorldWith(b, worldOptions{}, nil,
		openaisim.Rule{Name: "stt", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
			Reply: openaisim.Reply{Transcript: "banter, can you hear me?"}, Latency: openaisim.Latency{TimeToFirstToken: injectedSTT}},
		openaisim.Rule{Name: "gen", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
			Reply: openaisim.Reply{Text: "Yes, loud and clear."}, Latency: openaisim.Latency{TimeToFirstToken: injectedTTFT}},
		openaisim.Rule{Name: "tts", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech},
			Latency: openaisim.Latency{TTSFirstByte: injectedTTS}})
	alice := w.member("alice")
	w.join()
	frames, err := voicesim.EncodePCM(speech(b, "mike-hear-me"))
	if err != nil {
		b.Fatal(err)
	}
	turn := func(n int) {
		if err := alice.PlayOpus(w.ctx, frames); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for len(spokenEvents(w)) < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if len(spokenEvents(w)) < n {
			b.Fatalf("turn %d not answered:\n%s", n, w.logs.String())
		}
	}
	turn(1) // warm-up: the connection's first talk spurt waits one slot
	body := clipWAV16k(speech(b, "mike-hear-me"))
	var overhead, total, injected, bare []float64
	n := 1
	b.ResetTimer()
	for b.Loop() {
		n++
		w.osim.ResetRecords()
		turn(n)
		ev := spokenEvents(w)[n-1]
		first, _ := ev["first_packet_ms"].(float64)
		var inj time.Duration
		for _, r := range w.osim.Requests() {
			switch r.Endpoint {
			case openaisim.EndpointTranscriptions, openaisim.EndpointResponses:
				inj += r.Injected.FirstToken
			}
		}
		var tts []openaisim.Recorded
		for _, r := range w.osim.RequestsFor(openaisim.EndpointSpeech) {
			tts = append(tts, r)
		}
		if len(tts) > 0 {
			slices.SortFunc(tts, func(a, c openaisim.Recorded) int { return a.At.Compare(c.At) })
			inj += tts[0].Injected.TTSFirstByte
		}
		injMs := float64(inj.Microseconds()) / 1000
		bare = append(bare, bareCalls(b, w, body)-float64(injectedSTT+injectedTTFT+injectedTTS)/1e6)
		b.Logf("phases: stt %.1f adm %.1f tok %.1f sent %.1f tts %.1f pkt %.1f", ev["transcript_ms"], ev["admission_ms"],
			ev["first_token_ms"], ev["first_sentence_ms"], ev["first_tts_byte_ms"], first)
		overhead = append(overhead, first-injMs)
		total = append(total, first)
		injected = append(injected, injMs)
	}
	b.StopTimer()
	med := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.ReportMetric(med(overhead), "overhead-ms-median")
	b.ReportMetric(med(total), "ttfa-ms-median")
	b.ReportMetric(med(injected), "injected-ms-median")
	b.ReportMetric(med(bare), "bare-calls-overhead-ms-median")
	b.ReportMetric(0, "ns/op")
	b.Logf("overhead ms per turn: %.2f", overhead)
	b.Logf("bare calls overhead ms: %.2f", bare)
}

// clipWAV16k makes a 16 kHz mono WAV of 48 kHz stereo speech (downmix,
// decimate): the upload of the bare-calls baseline.
func clipWAV16k(s []int16) []byte {
	mono := make([]int16, len(s)/2)
	pcm.Downmix(mono, s)
	out := make([]int16, len(mono)/3)
	for i := range out {
		out[i] = mono[3*i]
	}
	return wav.Encode(pcm.Speech16k(), out)
}

// bareCalls is the same-run baseline: the three provider calls on a turn's
// critical path made back to back with the same client and nothing else
// (transcribe, generation to first delta, speech to first byte). It returns
// the elapsed milliseconds, injected latency included.
func bareCalls(b *testing.B, w *world, body []byte) float64 {
	start := time.Now()
	if _, err := w.client.Transcribe(w.ctx, w.cfg.Voice.STTPipeline.TranscriptionModel, body, llm.TranscribeOptions{}); err != nil {
		b.Fatal(err)
	}
	st, err := w.client.Stream(w.ctx, llm.GenerateRequest{Model: w.cfg.Voice.GenerationLLM.Model,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "alice: banter, can you hear me?"}}})
	if err != nil {
		b.Fatal(err)
	}
	st.Next()
	st.Close()
	sp, err := w.client.SpeakStream(w.ctx, w.cfg.Voice.STTPipeline.TTSModel, w.cfg.Voice.STTPipeline.TTSVoice, "Yes, loud and clear.")
	if err != nil {
		b.Fatal(err)
	}
	var one [1]byte
	_, _ = sp.Read(one[:])
	sp.Close()
	return float64(time.Since(start).Microseconds()) / 1000
}
