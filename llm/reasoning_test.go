package llm

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

func TestResolveReasoningEffort(t *testing.T) {
	tests := []struct{ model, setting, want string }{
		{"gpt-5-nano", EffortLowest, "minimal"},
		{"gpt-5-mini-2025-08-07", EffortLowest, "minimal"},
		{"gpt-5", EffortLowest, "minimal"},
		{"gpt-5.1", EffortLowest, "none"},
		{"gpt-5.2", EffortLowest, "none"},
		{"gpt-5-codex", EffortLowest, "low"},
		{"gpt-5-pro", EffortLowest, "high"},
		{"o4-mini", EffortLowest, "low"},
		{"o3", EffortLowest, "low"},
		{"gpt-4o-mini", EffortLowest, ""}, // not a reasoning model: nothing sent
		{"gpt-5-chat-latest", EffortLowest, ""},
		{"llama3", EffortLowest, ""},
		{"gpt-5-nano", EffortDefault, ""},
		{"gpt-5-nano", "", ""},
		{"gpt-5-nano", "high", "high"},
		{"gpt-4o-mini", "low", "low"}, // explicit: sent, the API judges it
	}
	for _, tt := range tests {
		if got := ResolveReasoningEffort(tt.model, tt.setting); got != tt.want {
			t.Errorf("ResolveReasoningEffort(%q, %q) = %q, want %q", tt.model, tt.setting, got, tt.want)
		}
	}
}

// TestClassifyReasoningEffort: ClassifyWith sends the lowest effort the model accepts on both
// APIs, reads the setting per call, and an effort the model refuses is a 400 bad request
// (the simulator refuses it as the API does), not retried.
func TestClassifyReasoningEffort(t *testing.T) {
	for _, api := range []API{APIResponses, APIChatCompletions} {
		t.Run(api.String(), func(t *testing.T) {
			env := newEnv(t, Options{API: api}, openaisim.Rule{Name: "yn", Reply: openaisim.Reply{Text: "YES"}})
			setting := EffortLowest
			classify := env.client.ClassifyWith(func() string { return setting })
			effortSent := func() string {
				t.Helper()
				var body struct {
					Reasoning       *struct{ Effort string } `json:"reasoning"`
					ReasoningEffort string                   `json:"reasoning_effort"`
				}
				if err := json.Unmarshal(last(t, env.sim.Requests()).Body, &body); err != nil {
					t.Fatal(err)
				}
				if body.Reasoning != nil {
					return body.Reasoning.Effort
				}
				return body.ReasoningEffort
			}
			for _, c := range []struct{ model, setting, want string }{
				{"gpt-5-nano", EffortLowest, "minimal"},
				{"gpt-5.1", EffortLowest, "none"},
				{"gpt-4o-mini", EffortLowest, ""},
				{"gpt-5-nano", EffortDefault, ""},
				{"gpt-5-nano", "low", "low"},
			} {
				setting = c.setting
				raw, err := classify(context.Background(), c.model, "Answer YES or NO.", "alice: banter?")
				if err != nil || raw != "YES" {
					t.Fatalf("%s/%s: %q, %v", c.model, c.setting, raw, err)
				}
				if got := effortSent(); got != c.want {
					t.Errorf("%s/%s: sent effort %q, want %q", c.model, c.setting, got, c.want)
				}
			}
			n := len(env.sim.Requests())
			for _, c := range []struct{ model, effort string }{
				{"gpt-5-nano", "none"},     // gpt-5 family: minimal is its lowest
				{"gpt-5.1", "minimal"},     // gpt-5.1: none, not minimal
				{"gpt-4o-mini", "minimal"}, // not a reasoning model
			} {
				setting = c.effort
				_, err := classify(context.Background(), c.model, "Answer YES or NO.", "alice: banter?")
				var ae *APIError
				if !errors.As(err, &ae) || ae.Kind != ErrorKindBadRequest || ae.Status != 400 {
					t.Errorf("%s with %s: err %v, want a 400 bad request", c.model, c.effort, err)
				}
			}
			if got := len(env.sim.Requests()) - n; got != 3 {
				t.Errorf("%d requests for three refused efforts, want 3 (no retries)", got)
			}
		})
	}
}

// TestTranscribeStream: with Stream, a model that offers it streams deltas (handed out as
// they come) and the transcript is the done event's text; whisper-1 is asked without.
func TestTranscribeStream(t *testing.T) {
	wav := wavBytes(16000, 1, 16, 16000*2) // 1 s
	env := newEnv(t, Options{}, openaisim.Rule{Name: "stt", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
		Reply: openaisim.Reply{Transcript: "banter, what time is it?"}})
	var deltas []string
	tr, err := env.client.Transcribe(context.Background(), "gpt-4o-mini-transcribe", wav,
		TranscribeOptions{Stream: true, OnDelta: func(d string) { deltas = append(deltas, d) }})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != "banter, what time is it?" || len(deltas) < 3 {
		t.Errorf("transcript %q from deltas %q", tr.Text, deltas)
	}
	if rec := last(t, env.sim.Requests()); !rec.Stream {
		t.Error("not a streamed request")
	}
	if got := env.counter(t, "banter_llm_time_to_first_token_seconds", map[string]string{"op": "transcribe"}); got != 1 {
		t.Errorf("first-delta observations %v, want 1", got)
	}
	deltas = nil
	tr, err = env.client.Transcribe(context.Background(), "whisper-1", wav,
		TranscribeOptions{Stream: true, OnDelta: func(d string) { deltas = append(deltas, d) }})
	if err != nil || tr.Text != "banter, what time is it?" || deltas != nil {
		t.Errorf("whisper-1: %q, deltas %q, %v", tr.Text, deltas, err)
	}
	if rec := last(t, env.sim.Requests()); rec.Stream {
		t.Error("whisper-1 was asked to stream")
	}

	// A stream cut before its first delta is retried; one cut after it fails (truncated).
	env.sim.ResetRules()
	_ = env.sim.AddRule(openaisim.Rule{Name: "cut-early", Reply: openaisim.Reply{Transcript: "one two three four"},
		Fault: openaisim.Fault{Status: 503, RetryAfter: 10 * time.Millisecond}, Times: 1})
	tr, err = env.client.Transcribe(context.Background(), "gpt-4o-transcribe", wav, TranscribeOptions{Stream: true})
	if err != nil || tr.Attempts != 2 {
		t.Errorf("after one 503: %+v, %v", tr, err)
	}
	_ = env.sim.AddRule(openaisim.Rule{Name: "cut-late", Reply: openaisim.Reply{Transcript: "one two three four five six"},
		Fault: openaisim.Fault{TruncateAfterEvents: 2}})
	deltas = nil
	_, err = env.client.Transcribe(context.Background(), "gpt-4o-transcribe", wav,
		TranscribeOptions{Stream: true, OnDelta: func(d string) { deltas = append(deltas, d) }})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Kind != ErrorKindTruncated || len(deltas) != 2 {
		t.Errorf("cut after 2 deltas: %v (deltas %q)", err, deltas)
	}
	if i := slices.IndexFunc(env.sim.Requests(), func(r openaisim.Recorded) bool { return r.Rule == "cut-late" }); i < 0 {
		t.Error("the late cut was not exercised")
	}
}
