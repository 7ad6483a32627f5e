package realtime

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/voice"
	"github.com/prometheus/client_golang/prometheus"
)

// TestGeminiHearingFollowsAllowAtCap: Gemini's hearing is admitted like OpenAI's
// transcriptions, charged to voice.sttPipeline.transcription. With the guild at its cap it
// transcribes while allowAtCap names that slot (the default) and, once a reload takes the
// slot out, is refused with the spending cap before any connection opens.
func TestGeminiHearingFollowsAllowAtCap(t *testing.T) {
	t.Parallel()
	osim := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{
		Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiTranscription}, Reply: openaisim.Reply{Transcript: "hey banter"}}))
	cfg := config.Default()
	cfg.Budget.GuildDailyUSD = 0.5
	g := cappedGuard(t, cfg, "g1")
	hear := gemini.NewTranscriber(gemini.Config{BaseURL: "http" + osim.GeminiURL()[2:], APIKey: "gk-test", Model: "gemini-3.8-live"})
	t.Cleanup(func() { _ = hear.Close() })
	h := GeminiHearing{Transcriber: hear, Gate: g}
	ctx := llm.WithAccount(t.Context(), llm.Account{Guild: "g1", Slot: voice.SlotTranscription})
	samples := make([]int16, 16000/2) // half a second at 16 kHz
	for i := range samples {
		samples[i] = int16(i%64*512 - 16384)
	}
	body := wav.Encode(pcm.Format{Rate: 16000, Channels: 1}, samples)

	if tr, err := h.Transcribe(ctx, "", body, llm.TranscribeOptions{}); err != nil || tr.Text != "hey banter" {
		t.Fatalf("at the cap with transcription allowed: %+v, %v; want it heard", tr, err)
	}
	cfg.Budget.AllowAtCap = nil
	lives := len(osim.RequestsFor(openaisim.EndpointGeminiLive))
	_, err := h.Transcribe(ctx, "", body, llm.TranscribeOptions{})
	var apiErr *llm.APIError
	if !errors.Is(err, llm.ErrSpendCap) || !errors.As(err, &apiErr) || apiErr.Kind != llm.ErrorKindSpendCap {
		t.Errorf("at the cap without transcription in allowAtCap: %v; want the spending cap (kind spend_cap)", err)
	}
	activities := 0
	for _, m := range osim.GeminiMessages() {
		if m.Type == "realtimeInput.activityEnd" {
			activities++
		}
	}
	if activities != 1 {
		t.Errorf("%d utterances sent to Gemini, want only the allowed one", activities)
	}
	if n := len(osim.RequestsFor(openaisim.EndpointGeminiLive)); n != lives {
		t.Errorf("%d Gemini connections opened for a refused transcription", n-lives)
	}
}

// TestGeminiHearingIsMetered: each transcription Gemini's hearing makes is metered like the
// Live replies: the usage the simulator's Gemini face reports for its turn (sent with
// turnComplete, which may come after the transcript) is priced and charged to the account of
// the call, voice.sttPipeline.transcription.
func TestGeminiHearingIsMetered(t *testing.T) {
	t.Parallel()
	osim := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{
		Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiTranscription}, Reply: openaisim.Reply{Transcript: "hey banter"}}))
	price := llm.Price{InputPerMTok: 3, OutputPerMTok: 12}
	reg := prometheus.NewRegistry()
	hear := gemini.NewTranscriber(gemini.Config{BaseURL: "http" + osim.GeminiURL()[2:], APIKey: "gk-test", Model: "gemini-3.8-live"})
	t.Cleanup(func() { _ = hear.Close() })
	h := GeminiHearing{Transcriber: hear, Meter: llm.NewMeter(map[string]llm.Price{"gemini-3.8-live": price}, nil, reg)}
	ctx := llm.WithAccount(t.Context(), llm.Account{Guild: "g1", Slot: voice.SlotTranscription})
	samples := make([]int16, 16000/2)
	for i := range samples {
		samples[i] = int16(i%64*512 - 16384)
	}
	for range 2 {
		if tr, err := h.Transcribe(ctx, "", wav.Encode(pcm.Format{Rate: 16000, Channels: 1}, samples), llm.TranscribeOptions{}); err != nil || tr.Text != "hey banter" {
			t.Fatalf("Transcribe = %+v, %v", tr, err)
		}
	}
	// Each activity is followed by the model's turn, whose usage comes with its turnComplete,
	// possibly after the transcript was returned: wait for both turns' usage to be metered.
	var got, want float64
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		turns := osim.RequestsFor(openaisim.EndpointGeminiResponse)
		want = 0
		for _, r := range turns {
			want += price.Cost(llm.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens})
		}
		got = gatherSum(t, reg, "banter_provider_cost_usd_total")
		if len(turns) == 2 && want > 0 && math.Abs(got-want) <= 1e-12 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("banter_provider_cost_usd_total = %v, want %v (the usage of %d model turns)", got, want, len(turns))
		}
	}
	if n := gatherSum(t, reg, "banter_provider_usage_total"); n == 0 {
		t.Error("no usage metered")
	}
}
