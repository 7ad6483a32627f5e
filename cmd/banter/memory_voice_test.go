package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store/storetest"
)

// voiceMemoryConfig turns memory on with batches of two messages (never closed by a quiet
// spell) and the greeting off, so that every utterance is one of alice's turns.
const voiceMemoryConfig = `memoryLlm:
  model: memory-model
memory:
  enabled: true
  batchMessages: 2
  quietSeconds: 86400
voice:
  joinGreetingWindowSeconds: 0
`

// TestMemoryVoice runs `banter run` with memory on and alice in the voice channel, with the
// STT pipeline and with the realtime API: a fact she says in voice is extracted (her two
// utterances are one batch of the voice channel) and is in the instructions of the answer to
// her next voice question, and in the prompt of her question typed in the text channel. With
// the STT pipeline, what she says while paused is neither stored nor sent to the memory model,
// and /memory forget-me leaves neither her id nor her spoken words in any table.
func TestMemoryVoice(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	for _, tc := range []struct{ name, extra string }{
		{"stt", ""},
		{"realtime", "  mode: realtime\n  realtimeReplyStrategy: native\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testMemoryVoice(t, tc.name == "realtime", tc.extra)
		})
	}
}

func testMemoryVoice(t *testing.T, realtime bool, voiceExtra string) {
	v := startVoiceBanter(t, voiceMemoryConfig+voiceExtra,
		openaisim.Rule{Name: "memory", Match: openaisim.Match{Model: "memory-model"}, Respond: memoryExtraction})
	v.until(t, "/memory registered", func() bool {
		return slices.ContainsFunc(v.dsim.Commands(""), func(c discordsim.Command) bool { return c.Name == "memory" })
	})
	pcm := voiceQuestionPCM(t)
	// say has alice say text in voice and returns once her turn was decided or answered.
	say := func(text string) {
		t.Helper()
		v.osim.QueueTranscripts(text)
		if err := v.member.PlayPCM(v.ctx, pcm); err != nil {
			t.Fatal(err)
		}
		v.until(t, "the turn "+text, func() bool {
			return slices.ContainsFunc(strings.Split(v.logs.String(), "\n"), func(l string) bool {
				return strings.Contains(l, `"transcript":"`+text+`"`) &&
					(strings.Contains(l, `"msg":"stt_pipeline_reply_`) || strings.Contains(l, `"msg":"realtime_reply_`))
			})
		})
	}
	// extractions counts the extractions of voice transcripts.
	extractions := func() int {
		n := 0
		for _, e := range v.events("memory_extracted") {
			if ids, _ := e["message_ids"].([]any); len(ids) > 0 && strings.HasPrefix(fmt.Sprint(ids[0]), "voice-") {
				n++
			}
		}
		return n
	}
	const fact = "alice has a cat named Miso"

	say("I have a cat named Miso")
	say("she is orange")
	v.until(t, "the extraction of alice's voice", func() bool { return extractions() == 1 })

	// Her next voice question: its answer's instructions carry the fact.
	const question = "hey banter, what is my cat called?"
	endpoint := openaisim.EndpointResponses
	if realtime {
		endpoint = openaisim.EndpointRealtimeResponse
	}
	before := len(v.osim.RequestsFor(endpoint))
	say(question)
	var instructions []string
	v.until(t, "the answer to her voice question", func() bool {
		instructions = nil
		for _, r := range v.osim.RequestsFor(endpoint)[before:] {
			// A realtime native answer hears her audio: its request holds no words of hers. The
			// STT pipeline's answer is the streamed generation (not Stage A's classifier).
			if realtime || (r.Stream && strings.Contains(r.Prompt+r.LastUserText, "what is my cat called")) {
				instructions = append(instructions, r.Instructions)
			}
		}
		return len(instructions) > 0
	})
	if len(instructions) == 0 || !strings.Contains(instructions[len(instructions)-1], fact) {
		t.Errorf("the answer to her voice question was not given the fact %q: instructions %q", fact, instructions)
	}

	// Her question typed in the text channel: its prompt carries the fact too.
	typed, err := v.dsim.Post(v.ctx, v.alice, v.text, discordsim.MentionUser(v.dsim.BotID())+" what's the name of my cat?")
	if err != nil {
		t.Fatal(err)
	}
	prompt := ""
	v.until(t, "the reply prompt of her typed question", func() bool {
		for _, r := range v.osim.RequestsFor(openaisim.EndpointResponses) {
			if strings.Contains(r.LastUserText, "Message to answer: msg "+string(typed.ID)) {
				prompt = r.LastUserText
			}
		}
		return prompt != ""
	})
	if !strings.Contains(prompt, fact) {
		t.Errorf("the prompt of her typed question lacks %q:\n%s", fact, prompt)
	}
	if realtime {
		return
	}

	// Paused, her words are neither stored nor extracted: had "Kiwi" been captured, it would
	// have been the first of the next batch, with "Nemo".
	memoryCommand(t, v, "pause")
	say("I have a bird named Kiwi")
	memoryCommand(t, v, "resume")
	say("I have a fish named Nemo")
	say("he is tiny")
	v.until(t, "the second extraction of alice's voice", func() bool { return extractions() == 2 })
	var memPrompts []string
	for _, r := range v.osim.Requests() {
		if r.Model == "memory-model" {
			memPrompts = append(memPrompts, r.LastUserText)
		}
	}
	if p := strings.Join(memPrompts, "\n"); strings.Contains(p, "Kiwi") || !strings.Contains(p, "Nemo") {
		t.Errorf("memory prompts (Kiwi said while paused) =\n%s", p)
	}
	if hits, err := storetest.Scan(v.ctx, "sqlite", v.dsn, []string{"Kiwi"}); err != nil || len(hits) > 0 {
		t.Errorf("what she said while paused is stored: %+v %v", hits, err)
	}

	// forget-me: neither her id nor her spoken words are left (the scan finds them before).
	needles := []string{string(v.alice), "I have a cat named Miso", "she is orange", "I have a fish named Nemo", "he is tiny", "named Miso"}
	if hits, _ := storetest.Scan(v.ctx, "sqlite", v.dsn, needles); !inTable(hits, "messages") || !inTable(hits, "facts") {
		t.Fatalf("before forget-me the scan does not find her voice: %+v", hits)
	}
	memoryCommand(t, v, "forget-me")
	hits, err := storetest.Scan(v.ctx, "sqlite", v.dsn, needles)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("after forget-me, %s holds %q: %s", h.Table, h.Needle, h.Row)
	}
}

// memoryCommand runs /memory SUB as alice in the text channel and returns the answer.
func memoryCommand(t *testing.T, v *voiceBanter, sub string) string {
	t.Helper()
	ix, err := v.dsim.InvokeCommand(v.alice, v.text, "memory", discordsim.CommandOption{Name: sub, Type: 1})
	if err != nil {
		t.Fatal(err)
	}
	return interactionAnswer(t, v.ctx, v.dsim, ix.ID)
}

// interactionAnswer waits for an interaction's response and returns its content.
func interactionAnswer(t *testing.T, ctx context.Context, dsim *discordsim.Server, id discordsim.InteractionID) string {
	t.Helper()
	r, err := simtest.WaitInteractionResponse(ctx, dsim, id)
	if err != nil {
		t.Fatalf("no answer to interaction %s: %v", id, err)
	}
	var data struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(r.Data, &data); err != nil {
		t.Fatal(err)
	}
	return data.Content
}
