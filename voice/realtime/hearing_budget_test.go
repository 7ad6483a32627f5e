package realtime

import (
	"errors"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/voice"
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
