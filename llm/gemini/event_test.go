package gemini

import (
	"testing"

	"google.golang.org/genai"
)

// TestUsageOf: usageMetadata as the Live API sends it (prompt and response tokens by
// modality, cached, thoughts, tool-use prompt) becomes the input, audio and output counts
// banter prices.
func TestUsageOf(t *testing.T) {
	ev, err := FromMessage(&genai.LiveServerMessage{UsageMetadata: &genai.UsageMetadata{
		PromptTokenCount: 300, ToolUsePromptTokenCount: 20, CachedContentTokenCount: 50,
		PromptTokensDetails: []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: 100},
			{Modality: genai.MediaModalityAudio, TokenCount: 200}},
		ResponseTokenCount: 80, ThoughtsTokenCount: 10,
		ResponseTokensDetails: []*genai.ModalityTokenCount{{Modality: genai.MediaModalityAudio, TokenCount: 70}, nil},
		TotalTokenCount:       410,
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Prompt: 320, Cached: 50, AudioIn: 200, Response: 80, Thoughts: 10, AudioOut: 70}
	if ev.Usage == nil || *ev.Usage != want || ev.UsageTokens != 410 {
		t.Errorf("usage %+v (total %d), want %+v (410)", ev.Usage, ev.UsageTokens, want)
	}
	if ev, _ := FromMessage(&genai.LiveServerMessage{SetupComplete: &genai.LiveServerSetupComplete{}}); ev.Usage != nil {
		t.Errorf("a message without usageMetadata: %+v", ev.Usage)
	}
}
