package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestCostMetricIsTheSimulatedUsage: through `banter run`, banter_provider_cost_usd_total adds
// up to the usage the OpenAI simulator reported (speech: the text sent and the audio returned)
// times the shipped prices, for a text reply, a voice turn with its words uploaded and with
// them transcribed in a session, and a realtime (native) voice turn.
func TestCostMetricIsTheSimulatedUsage(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	prices := llmPrices(config.Default())
	want := func(reqs []openaisim.Recorded) float64 {
		var usd float64
		for _, r := range reqs {
			usd += prices[r.Model].Cost(recordedUsage(r))
		}
		return usd
	}
	t.Run("text", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := guard(t.Context())
		defer cancel()
		b := startBot(t, ctx, nil, "", "", nil)
		defer b.stop()
		id, err := b.post(ctx, b.alice, true, "what's the capital of France?")
		if err != nil {
			t.Fatal(err)
		}
		b.answer(t, ctx, id)
		addr := metricsAddr(b.logs.String())
		var got, w float64
		if !b.logs.wait(ctx, func() bool {
			got, w = costMetric(t, "http://"+addr+"/metrics"), want(b.osim.Requests())
			return w > 0 && math.Abs(got-w) < 1e-12
		}) {
			t.Errorf("cost metric %v, want %v", got, w)
		}
	})
	for _, tc := range []struct{ name, extra, spoken string }{
		{"voice/upload", "voice:\n  speculation:\n    transcription: upload\n", "stt_pipeline_reply_spoken"},
		{"voice/session", "voice:\n  speculation:\n    transcription: session\n", "stt_pipeline_reply_spoken"},
		{"realtime", "voice:\n  mode: realtime\n  realtimeReplyStrategy: native\n", "realtime_reply_spoken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := startVoiceBanter(t, tc.extra)
			v.osim.QueueTranscripts("hey banter, what's the weather like today?")
			if err := v.member.PlayPCM(v.ctx, voiceQuestionPCM(t)); err != nil {
				t.Fatal(err)
			}
			v.waitLog(t, `"msg":"`+tc.spoken+`"`, `"turn_id"`)
			addr := metricsAddr(v.logs.String())
			var got, w float64
			v.until(t, "the cost metric to equal the simulated usage × prices", func() bool {
				got, w = costMetric(t, "http://"+addr+"/metrics"), want(v.osim.Requests())
				return w > 0 && math.Abs(got-w) < 1e-12
			})
		})
	}
}

// recordedUsage is the usage the simulator recorded it reported; speech reports none: the text
// sent and the audio returned.
func recordedUsage(r openaisim.Recorded) llm.Usage {
	if r.Endpoint == openaisim.EndpointSpeech {
		return llm.Usage{Characters: utf8.RuneCountInString(r.LastUserText),
			AudioSecondsOut: float64(r.AudioBytes) / (llm.SpeechSampleRate * llm.SpeechChannels * 2)}
	}
	u := r.Usage
	return llm.Usage{InputTokens: u.InputTokens, CachedTokens: u.CachedTokens, AudioInputTokens: u.AudioInputTokens,
		OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens, AudioOutputTokens: u.AudioOutputTokens,
		AudioSecondsIn: u.Seconds}
}

// costMetric sums banter_provider_cost_usd_total over its series at url.
func costMetric(t *testing.T, url string) float64 {
	t.Helper()
	var sum float64
	for _, line := range strings.Split(httpGet(t, url), "\n") {
		if !strings.HasPrefix(line, "banter_provider_cost_usd_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}
