package gemini

import (
	"bytes"
	"context"
	"errors"
	"testing"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestTranscriber: each utterance is one activity on a transcription connection whose setup
// keeps the model quiet; the words are Gemini's inputTranscription; after Close nothing is
// sent; a cancelled call returns ctx's error.
func TestTranscriber(t *testing.T) {
	t.Parallel()
	s := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiTranscription}, Reply: openaisim.Reply{Transcript: "hey banter"}, Times: 1},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiTranscription}, Reply: openaisim.Reply{Transcript: "what's up"}}))
	tr := NewTranscriber(Config{BaseURL: "http" + s.GeminiURL()[2:], APIKey: "gk-test", Model: "gemini-3.8-live",
		Instructions: "persona", ManualActivity: false})
	for _, want := range []string{"hey banter", "what's up"} {
		got, err := tr.Transcribe(t.Context(), tone16k(500), 16000)
		if err != nil || got != want {
			t.Fatalf("Transcribe = %q, %v; want %q", got, err, want)
		}
	}
	activities := 0
	for _, m := range s.GeminiMessages() {
		if m.Type == "setup" && !hasAll(m.Raw, `"You only listen`, `"maxOutputTokens":1`, `"disabled":true`) {
			t.Errorf("setup %s: want the silent transcription setup", m.Raw)
		}
		if m.Type == "realtimeInput.activityEnd" {
			activities++
		}
	}
	if activities != 2 {
		t.Errorf("%d activities for two utterances", activities)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Transcribe(t.Context(), tone16k(100), 16000); !errors.Is(err, ErrTranscriberClosed) {
		t.Errorf("after Close: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tr2 := NewTranscriber(Config{BaseURL: "http" + s.GeminiURL()[2:], APIKey: "gk-test", Model: "gemini-3.8-live"})
	defer tr2.Close()
	if _, err := tr2.Transcribe(ctx, tone16k(100), 16000); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// hasAll reports whether raw contains every fragment.
func hasAll(raw []byte, fragments ...string) bool {
	for _, f := range fragments {
		if !bytes.Contains(raw, []byte(f)) {
			return false
		}
	}
	return true
}
