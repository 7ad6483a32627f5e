package openaisim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/realtime"
)

// TestRealtimeOpenAIGoClient checks wire fidelity against openai-go's own
// realtime client: it connects with the REST base URL and decodes every
// event the simulator sends into its typed union.
func TestRealtimeOpenAIGoClient(t *testing.T) {
	const reply = "Hello from the realtime simulator."
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse, InputPattern: "hi"}, Reply: Reply{Text: reply}}))
	c := newClient(s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := c.Realtime.Connect(ctx, realtime.RealtimeConnectionOptions{}, option.WithQuery("model", "gpt-realtime"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(v any) {
		b, _ := json.Marshal(v)
		if err := conn.SendRaw(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := conn.Recv(ctx)
	if err != nil || ev.Type != "session.created" {
		t.Fatalf("first: %v %v", ev.Type, err)
	}
	if sess := ev.AsSessionCreatedEvent().Session; sess.AsRealtimeSessionCreateRequest().Model != "gpt-realtime" {
		t.Errorf("session.created model: %s", ev.RawJSON())
	}
	send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": "hi there"}}}})
	send(map[string]any{"type": "response.create"})
	var transcript string
	var audio []byte
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.AsAny() == nil {
			t.Errorf("openai-go does not know event %q", ev.Type)
		}
		switch e := ev.AsAny().(type) {
		case realtime.ResponseAudioTranscriptDeltaEvent:
			transcript += e.Delta
		case realtime.ResponseAudioDeltaEvent:
			b, err := base64.StdEncoding.DecodeString(e.Delta)
			if err != nil {
				t.Fatal(err)
			}
			audio = append(audio, b...)
		case realtime.RealtimeErrorEvent:
			t.Fatalf("error event: %s", ev.RawJSON())
		case realtime.ResponseDoneEvent:
			if e.Response.Status != "completed" || len(e.Response.Output) != 1 {
				t.Errorf("done: %s", ev.RawJSON())
			}
			if transcript != reply || pcmDuration(len(audio), SpeechRate) != SpeechDuration(reply, 1) {
				t.Errorf("transcript %q, %d audio bytes", transcript, len(audio))
			}
			return
		}
	}
}
