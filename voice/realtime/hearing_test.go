package realtime

import (
	"strings"
	"testing"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestServiceGeminiHearing: with the Gemini Live API speaking, the voice session's Stage A
// decides on Gemini's inputTranscription, in both strategies. The simulator's Gemini
// transcription hears the bot addressed by name; OpenAI's transcription would have heard a
// remark that eagerness 0 denies, and is never asked. Native: the admitted turn reaches the
// conversation's connection and is answered. Brain: the generation gets Gemini's words.
func TestServiceGeminiHearing(t *testing.T) {
	t.Parallel()
	const heard = "hey banter, what's the weather like today?"
	const answer = "It is sunny and warm today."
	for _, strategy := range []string{"native", "brain"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			w := newServiceWorldOn(t, ProviderGemini, strategy, 0,
				openaisim.Rule{Name: "gemini-heard", Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiTranscription}, Reply: openaisim.Reply{Transcript: heard}},
				openaisim.Rule{Name: "openai-heard", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions}, Reply: openaisim.Reply{Transcript: "the lasagne was fine"}},
				openaisim.Rule{Name: "gen", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Text: answer}},
				openaisim.Rule{Name: "answer", Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: "friendly voice"}, Reply: openaisim.Reply{Text: answer}},
				openaisim.Rule{Name: "silent", Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "."}})
			alice := w.member("alice")
			if err := w.svc.Join(w.ctx, string(w.guild), string(w.vc)); err != nil {
				t.Fatal(err)
			}
			if err := alice.PlayPCM(w.ctx, loadSpeech(t, "hey-banter-weather.wav")); err != nil {
				t.Fatal(err)
			}
			if err := alice.WaitHeard(w.ctx, w.botID, 30); err != nil {
				t.Fatalf("alice heard no answer: %v", err)
			}
			req := w.waitLog("realtime_reply_requested")
			if req["reason"] != "direct_address_fast_path" {
				t.Errorf("realtime_reply_requested %v: want admitted on the name Gemini heard", req)
			}
			if n := len(w.osim.RequestsFor(openaisim.EndpointTranscriptions)); n != 0 {
				t.Errorf("%d OpenAI transcriptions, want none", n)
			}
			for _, e := range w.osim.RealtimeEvents() {
				if e.Transcription {
					t.Fatalf("an OpenAI transcription session was opened: %s", e.Type)
				}
			}
			listening := map[string]bool{} // the transcription connections
			activities := 0
			for _, m := range w.osim.GeminiMessages() {
				switch {
				case m.Type == "setup" && strings.Contains(string(m.Raw), "You only listen"):
					listening[m.Session] = true
				case m.Type == "realtimeInput.activityEnd" && listening[m.Session]:
					activities++
				}
			}
			if activities == 0 {
				t.Error("no activity sent to a Gemini transcription connection")
			}
			if strategy == "brain" {
				gen := w.osim.RequestsFor(openaisim.EndpointResponses)
				if len(gen) == 0 || !strings.Contains(gen[len(gen)-1].Prompt, heard) {
					t.Errorf("generation requests %+v: want Gemini's words in the prompt", gen)
				}
			}
		})
	}
}
