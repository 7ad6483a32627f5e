package realtime

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm/gemini"
	llmrt "github.com/banterbot/banter/llm/realtime"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/voice"
)

// ttfaInjected is the model's time to first output the simulator injects on both providers.
const ttfaInjected = 200 * time.Millisecond

// ttfaAnswer is the model's answer in the time-to-first-audio benchmarks.
const ttfaAnswer = "Yes, loud and clear."

// BenchmarkTimeToFirstAudio measures a native realtime reply on each provider, in one run with
// the same injected latency (the model's first output 200 ms after the turn): from Respond (the
// turn's audio is forwarded, the answer requested) to the answer's first Opus frame at the
// Playback's sender. The same-run baseline is the bare provider calls on an open connection
// (forward the same audio, ask, first audio chunk received). It reports the medians of both and
// of the overhead (Responder minus bare), in ms. Each reply plays in real time (~1.3 s): run it
// with -benchtime=10x.
func BenchmarkTimeToFirstAudio(b *testing.B) {
	lat := openaisim.Latency{TimeToFirstToken: ttfaInjected}
	s := openaitest.Serve(b, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}, Reply: openaisim.Reply{Text: ttfaAnswer}, Latency: lat},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: ttfaAnswer}, Latency: lat}))
	turn := toneSamples(time.Second)
	for _, tc := range []struct {
		name string
		cfg  Config
		bare func(b *testing.B, s *openaisim.Server, audio []int16) time.Duration
	}{
		{"openai", Config{Realtime: llmrt.Config{URL: s.BaseURL(), APIKey: "sk-test", Model: "gpt-realtime"}, Voice: "marin"}, bareOpenAI},
		{"gemini", Config{Provider: ProviderGemini, Gemini: gemini.Config{BaseURL: "http" + strings.TrimPrefix(s.GeminiURL(), "ws"),
			APIKey: "gk-test", Model: "gemini-3.8-live", Voice: "Kore", ManualActivity: true}}, bareGemini},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tc.cfg.Strategy, tc.cfg.Instructions = StrategyNative, "You are banter."
			sender := &signalSender{out: make(chan time.Time, 256)}
			pb, err := voice.NewPlayback(sender, pcm.Mono24k(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			p, err := NewResponder(b.Context(), ResponderOptions{Config: tc.cfg}, voice.SessionInfo{GuildID: "g", ChannelID: "c"})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			reply := func() time.Duration {
				for len(sender.out) > 0 {
					<-sender.out
				}
				r := &voice.Reply{Turn: &voice.Turn{ID: "t", SpeakerID: "u", SpeakerName: "Alice", Transcript: "can you hear me",
					Audio: turn, Format: pcm.Mono24k(), SpeechEnd: time.Now()},
					Decision: decision.Decision{Outcome: decision.OutcomeAllow}, Out: pb, Mark: func(voice.Phase, time.Time) {}}
				pb.Begin(nil)
				start := time.Now()
				if _, err := p.Respond(b.Context(), r); err != nil {
					b.Fatal(err)
				}
				first := <-sender.out
				if err := pb.End(b.Context(), true); err != nil {
					b.Fatal(err)
				}
				return first.Sub(start)
			}
			reply() // warm-up: the connection is dialled on the first reply
			var full, bare []time.Duration
			for b.Loop() {
				full = append(full, reply())
				bare = append(bare, tc.bare(b, s, toneSamples(time.Second)))
			}
			b.StopTimer()
			med := func(d []time.Duration) float64 {
				d = slices.Clone(d)
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			over := make([]time.Duration, len(full))
			for i := range full {
				over[i] = full[i] - bare[i]
			}
			b.ReportMetric(med(full), "ttfa-ms-median")
			b.ReportMetric(med(bare), "bare-ms-median")
			b.ReportMetric(med(over), "overhead-ms-median")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// bareOpenAI is the OpenAI baseline: append the turn (24 kHz), commit, response.create, and
// the first output_audio.delta, on a connection opened beforehand.
func bareOpenAI(b *testing.B, s *openaisim.Server, audio []int16) time.Duration {
	ctx := b.Context()
	c, err := llmrt.Open(ctx, llmrt.Config{URL: s.BaseURL(), APIKey: "sk-test", Model: "gpt-realtime"},
		llmrt.Session{Instructions: "You are banter.", Voice: "marin", OutputModalities: []string{"audio"}}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	for a := audio; len(a) > 0; a = a[min(len(a), appendChunk):] {
		if err := c.AppendAudio(ctx, pcm.AppendBytes(nil, a[:min(len(a), appendChunk)])); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Send(ctx, llmrt.InputAudioCommitCommand{}); err != nil {
		b.Fatal(err)
	}
	if err := c.Send(ctx, llmrt.ResponseCreateCommand{}); err != nil {
		b.Fatal(err)
	}
	var ev llmrt.Event
	for {
		if err := c.ReadEvent(ctx, &ev); err != nil {
			b.Fatal(err)
		}
		if ev.Type == llmrt.EventOutputAudioDelta {
			return time.Since(start)
		}
	}
}

// bareGemini is the Gemini baseline: the turn resampled to 16 kHz as the bridge does, one
// activity of 100 ms chunks, and the first audio part, on a connection opened beforehand.
func bareGemini(b *testing.B, s *openaisim.Server, audio []int16) time.Duration {
	c, err := gemini.Open(b.Context(), gemini.Config{BaseURL: "http" + strings.TrimPrefix(s.GeminiURL(), "ws"), APIKey: "gk-test",
		Model: "gemini-3.8-live", Voice: "Kore", ManualActivity: true, Instructions: "You are banter."})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	in, err := toFormat(audio, pcm.Mono24k(), gemini16k)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.ActivityStart(); err != nil {
		b.Fatal(err)
	}
	for a := in; len(a) > 0; a = a[min(len(a), geminiChunk):] {
		if err := c.SendAudio(pcm.AppendBytes(nil, a[:min(len(a), geminiChunk)]), 16000); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.ActivityEnd(); err != nil {
		b.Fatal(err)
	}
	for {
		ev, err := c.Next()
		if err != nil {
			b.Fatal(err)
		}
		if len(ev.Audio) > 0 {
			return time.Since(start)
		}
	}
}

// toneSamples is tone as samples.
func toneSamples(d time.Duration) []int16 {
	b := tone(d)
	s := make([]int16, len(b)/2)
	pcm.FromBytes(s, b)
	return s
}
