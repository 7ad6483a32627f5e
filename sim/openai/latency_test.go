package openaisim

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// TestInjectedLatencyPerEndpoint checks, with a recording fake sleep (no
// real waiting), which delays each endpoint injects and records.
func TestInjectedLatencyPerEndpoint(t *testing.T) {
	lat := Latency{TimeToFirstToken: 100 * time.Millisecond, PerToken: 10 * time.Millisecond,
		TTSFirstByte: 70 * time.Millisecond, PerAudioChunk: 5 * time.Millisecond}
	wav := EncodeWAV(Synthesize("hello", "alloy", 1), SpeechRate)
	tests := []struct {
		name string
		call func(t *testing.T, c openai.Client, s *Server)
		want Injected
	}{
		{name: "responses non-stream", want: Injected{FirstToken: 100 * time.Millisecond, Tokens: 30 * time.Millisecond},
			call: func(t *testing.T, c openai.Client, s *Server) {
				if _, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "m",
					Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "chat stream", want: Injected{FirstToken: 100 * time.Millisecond, Tokens: 30 * time.Millisecond},
			call: func(t *testing.T, c openai.Client, s *Server) {
				st := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "m",
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
				for st.Next() {
				}
				if st.Err() != nil {
					t.Fatal(st.Err())
				}
			}},
		{name: "transcription", want: Injected{FirstToken: 100 * time.Millisecond},
			call: func(t *testing.T, c openai.Client, s *Server) {
				if _, err := c.Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{Model: "whisper-1",
					File: openai.File(bytes.NewReader(wav), "a.wav", "audio/wav")}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "speech", want: Injected{TTSFirstByte: 70 * time.Millisecond, AudioChunks: 4 * 5 * time.Millisecond}, // 5 chunks
			call: func(t *testing.T, c openai.Client, s *Server) {
				res, err := c.Audio.Speech.New(context.Background(), openai.AudioSpeechNewParams{Model: "tts-1", Input: "1234567",
					Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}, ResponseFormat: "pcm"})
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body) // the record lands before the last chunk
				res.Body.Close()
			}},
		{name: "realtime", want: Injected{FirstToken: 100 * time.Millisecond, Tokens: 30 * time.Millisecond},
			call: func(t *testing.T, c openai.Client, s *Server) {
				rc := dialRT(t, s, "gpt-realtime")
				rc.send(map[string]any{"type": "response.create"})
				rc.until("response.done")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var slept time.Duration
			fake := func(ctx context.Context, d time.Duration) error {
				mu.Lock()
				slept += d
				mu.Unlock()
				return ctx.Err()
			}
			// "You said: x" is 4 tokens ("You", " said", ":", " x")
			rule := Rule{Reply: Reply{Text: "You said: x"}, Latency: lat}
			s := serve(t, WithRules(rule), WithSleep(fake))
			tt.call(t, newClient(s), s)
			var got Injected
			for _, r := range s.Requests() {
				got.FirstToken += r.Injected.FirstToken
				got.Tokens += r.Injected.Tokens
				got.TTSFirstByte += r.Injected.TTSFirstByte
				got.AudioChunks += r.Injected.AudioChunks
			}
			if got != tt.want {
				t.Errorf("injected %+v, want %+v", got, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if slept != tt.want.Total() {
				t.Errorf("slept %v, want %v", slept, tt.want.Total())
			}
		})
	}
}
