package voice_test

import (
	"strings"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
)

func genRule(text string) openaisim.Rule {
	return openaisim.Rule{Name: "gen", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(true)},
		Reply: openaisim.Reply{Text: text}}
}

func classifierRule(answer string) openaisim.Rule {
	return openaisim.Rule{Name: "classifier", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(false)},
		Reply: openaisim.Reply{Text: answer}}
}

// TestAskedByNameHearsAnswer: a member asks the bot by name and hears a
// spoken answer, decoded on the member's side.
// It runs alone (not parallel) and checks that the service leaves no
// goroutine behind.
func TestAskedByNameHearsAnswer(t *testing.T) {
	w := newWorld(t, nil, genRule("It is sunny and warm today."))
	alice := w.member("alice")
	w.join()
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	if err := alice.WaitHeard(w.ctx, w.botID, 40); err != nil {
		t.Fatalf("alice heard no answer: %v", err)
	}
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
	heard := alice.HeardPCM(w.botID)
	if db := pcm.EnergyDB(heard); db < -40 {
		t.Errorf("decoded answer is near silence: %.1f dBFS", db)
	}
	gens := w.osim.RequestsFor(openaisim.EndpointResponses)
	if len(gens) == 0 || !strings.Contains(gens[len(gens)-1].Prompt, "alice: hey banter") {
		t.Errorf("generation prompt lacks the turn: %+v", gens)
	}
	sp := w.osim.RequestsFor(openaisim.EndpointSpeech)
	if len(sp) == 0 || strings.Contains(sp[0].LastUserText, "[SKIP]") {
		t.Errorf("speech requests: %+v", sp)
	}
	// DAVE was on end to end: protocol 1, and the member decrypted every
	// frame the bot sent with its E2EE key.
	if st := w.vsim.DAVE(string(w.guild), string(w.vc)); st.Version != 1 {
		t.Errorf("DAVE protocol %d, want 1", st.Version)
	}
	if ms := alice.Stats(); ms.DAVEDecryptFailures != 0 || ms.DAVENotReady != 0 {
		t.Errorf("member DAVE stats: %+v", ms)
	}
	if w.logs.Count(`"msg":"stt_pipeline_reply_spoken"`, `"first_packet_ms"`, `"transcript_ms"`) == 0 {
		t.Error("spoken event lacks phases")
	}
}

// TestAdmission: Stage A in voice: eagerness 0 ignores a remark not
// addressed to the bot; the classifier's NO keeps it silent, YES answers.
func TestAdmission(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		eagerness  int
		classifier string
		transcript string
		answered   bool
	}{
		{"eagerness0", 0, "YES", "mike, can you hear me?", false},
		{"classifierNO", 60, "NO", "that's just banter, man", false},
		{"classifierYES", 60, "YES", "that's just banter, man", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, func(cfg *config.Config) { cfg.Voice.ReplyEagerness = c.eagerness },
				classifierRule(c.classifier), genRule("Ha, fair enough."))
			bob := w.member("bob")
			w.join()
			w.osim.QueueTranscripts(c.transcript)
			w.play(bob, "thats-just-banter")
			if c.answered {
				if err := bob.WaitHeard(w.ctx, w.botID, 20); err != nil {
					t.Fatalf("no answer: %v", err)
				}
				w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
				return
			}
			w.waitLog(`"msg":"stt_pipeline_reply_denied"`)
			// The next turn, addressed to the bot, is answered: turns are decided in order, so
			// once it is spoken the denied one is long over. Only it was generated for.
			w.osim.QueueTranscripts("hey banter, are you there?")
			w.play(bob, "hey-banter-weather")
			w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, "are you there")
			var gens []string
			for _, r := range w.osim.RequestsFor(openaisim.EndpointResponses) {
				if r.Stream {
					gens = append(gens, r.LastUserText)
				}
			}
			if len(gens) != 1 || !strings.Contains(gens[0], "are you there") {
				t.Errorf("generations %q: want only the addressed turn's", gens)
			}
		})
	}
}

// TestSkip: a [SKIP] answer is never spoken.
func TestSkip(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(cfg *config.Config) {
		cfg.Voice.ReplyEagerness = 90
		cfg.Voice.ReplyDecisionLLM.Enabled = false
	}, openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Skip: true}})
	bob := w.member("bob")
	w.join()
	w.osim.QueueTranscripts("that's just banter, man")
	w.play(bob, "thats-just-banter")
	w.waitLog(`"msg":"stt_pipeline_reply_skipped"`)
	w.waitLog(`"msg":"reply_skipped"`, `"reason":"llm_skip"`, `"eagerness":90`) // Stage B's own event, with how its turn was admitted
	if n := len(w.osim.RequestsFor(openaisim.EndpointSpeech)); n != 0 {
		t.Errorf("%d speech requests for a skipped reply", n)
	}
	if n := len(bob.Heard(w.botID)); n > 0 {
		t.Errorf("bob heard %d frames", n)
	}
}
