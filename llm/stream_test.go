package llm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/prometheus/client_golang/prometheus"
)

var voiceReq = GenerateRequest{
	Model:        "gpt-5-mini",
	Instructions: "You are banter in a voice channel. Be brief.",
	Messages:     []Message{{Role: RoleUser, Content: "bob: banter, tell me about the weather"}},
}

func TestStream(t *testing.T) {
	const answer = "It is sunny today. Expect rain tomorrow, though!"
	const ttft = 80 * time.Millisecond
	for _, api := range []API{APIResponses, APIChatCompletions} {
		t.Run(api.String(), func(t *testing.T) {
			env := newEnv(t, Options{API: api}, openaisim.Rule{Name: "weather",
				Match:   openaisim.Match{InputPattern: "weather", Stream: openaisim.Bool(true)},
				Reply:   openaisim.Reply{Text: answer},
				Latency: openaisim.Latency{TimeToFirstToken: ttft, PerToken: time.Millisecond}})
			s, err := env.client.Stream(context.Background(), voiceReq)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var deltas []string
			for s.Next() {
				deltas = append(deltas, s.Delta())
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if len(deltas) < 5 {
				t.Errorf("got %d deltas, want the answer in many pieces: %q", len(deltas), deltas)
			}
			if s.Text() != answer {
				t.Errorf("text = %q, want %q", s.Text(), answer)
			}
			rec := last(t, env.sim.Requests())
			if !rec.Stream || rec.Rule != "weather" {
				t.Errorf("recorded stream=%v rule=%q", rec.Stream, rec.Rule)
			}
			if s.FirstToken() < rec.Injected.FirstToken {
				t.Errorf("first token after %v, but %v was injected", s.FirstToken(), rec.Injected.FirstToken)
			}
			if got := env.counter(t, "banter_llm_time_to_first_token_seconds", map[string]string{"op": "stream"}); got != 1 {
				t.Errorf("ttft observations = %v, want 1", got)
			}
			if got := env.counter(t, "banter_llm_requests_total", map[string]string{"op": "stream", "outcome": "ok"}); got != 1 {
				t.Errorf("requests_total{stream,ok} = %v, want 1", got)
			}
			if s.Next() {
				t.Error("Next after the end returned true")
			}
		})
	}
}

func TestStreamFaults(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		rule     openaisim.Rule
		openKind ErrorKind // error from Stream itself
		nextKind ErrorKind // error from Err after some deltas
		requests int
	}{
		{name: "truncated mid answer",
			rule:     openaisim.Rule{Name: "cut", Reply: openaisim.Reply{Text: "one two three four five six seven"}, Fault: openaisim.Fault{TruncateAfterEvents: 8}},
			nextKind: ErrorKindTruncated, requests: 1},
		{name: "truncated before first token is retried",
			rule:     openaisim.Rule{Name: "cut", Reply: openaisim.Reply{Text: "hello there"}, Fault: openaisim.Fault{TruncateAfterEvents: 1}, Times: 1},
			requests: 2},
		{name: "429 before stream retried",
			rule:     openaisim.Rule{Name: "rl", Fault: openaisim.Fault{Status: 429, RetryAfter: 50 * time.Millisecond}, Times: 1},
			requests: 2},
		{name: "500 persistent", opts: Options{MaxRetries: 1},
			rule:     openaisim.Rule{Name: "500", Fault: openaisim.Fault{Status: 500}},
			openKind: ErrorKindServer, requests: 2},
		{name: "first token timeout", opts: Options{FirstByteTimeout: 100 * time.Millisecond, MaxRetries: -1},
			rule:     openaisim.Rule{Name: "slow", Reply: openaisim.Reply{Text: "late"}, Latency: openaisim.Latency{TimeToFirstToken: 2 * time.Second}},
			openKind: ErrorKindTimeout},
		{name: "idle timeout", opts: Options{IdleTimeout: 100 * time.Millisecond},
			rule:     openaisim.Rule{Name: "stall", Reply: openaisim.Reply{Text: "one two three"}, Latency: openaisim.Latency{PerToken: 2 * time.Second}},
			nextKind: ErrorKindTimeout},
		{name: "malformed event", opts: Options{MaxRetries: -1},
			rule:     openaisim.Rule{Name: "bad", Reply: openaisim.Reply{Text: "hi there"}, Fault: openaisim.Fault{MalformedJSON: true}},
			openKind: ErrorKindMalformed, requests: 1},
	}
	for _, api := range []API{APIResponses, APIChatCompletions} {
		for _, tt := range tests {
			t.Run(api.String()+"/"+tt.name, func(t *testing.T) {
				tt.opts.API = api
				env := newEnv(t, tt.opts, tt.rule)
				s, err := env.client.Stream(context.Background(), voiceReq)
				var apiErr *APIError
				if tt.openKind != 0 {
					if !errors.As(err, &apiErr) || apiErr.Kind != tt.openKind {
						t.Fatalf("Stream err = %v, want kind %v", err, tt.openKind)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				n := 0
				for s.Next() {
					n++
				}
				if tt.nextKind == 0 {
					if s.Err() != nil || s.Text() == "" {
						t.Fatalf("err=%v text=%q", s.Err(), s.Text())
					}
				} else {
					if !errors.As(s.Err(), &apiErr) || apiErr.Kind != tt.nextKind {
						t.Fatalf("Err = %v, want kind %v", s.Err(), tt.nextKind)
					}
					if n == 0 {
						t.Error("no delta before the failure")
					}
					if got := env.counter(t, "banter_llm_requests_total", map[string]string{"op": "stream", "outcome": tt.nextKind.String()}); got != 1 {
						t.Errorf("requests_total{%v} = %v", tt.nextKind, got)
					}
				}
				if tt.requests > 0 {
					if got := len(env.sim.Requests()); got != tt.requests {
						t.Errorf("server saw %d requests, want %d", got, tt.requests)
					}
				}
			})
		}
	}
}

func TestStreamCancel(t *testing.T) {
	env := newEnv(t, Options{}, openaisim.Rule{Name: "long", Reply: openaisim.Reply{Text: "a b c d e f g h i j k l m n o p"},
		Latency: openaisim.Latency{PerToken: 50 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := env.client.Stream(ctx, voiceReq)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Next() {
		t.Fatal(s.Err())
	}
	cancel() // barge-in
	for s.Next() {
	}
	var apiErr *APIError
	if !errors.As(s.Err(), &apiErr) || apiErr.Kind != ErrorKindCanceled || !errors.Is(s.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want canceled", s.Err())
	}

	// Close from the consumer side ends the stream the same way.
	s2, err := env.client.Stream(context.Background(), voiceReq)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	for s2.Next() {
	}
	if !errors.As(s2.Err(), &apiErr) || apiErr.Kind != ErrorKindCanceled {
		t.Fatalf("after Close: Err = %v, want canceled", s2.Err())
	}
	s2.Close() // idempotent

	// Breaking out early and closing without draining: recorded once, as ok
	// (the leak check at cleanup proves the request was torn down).
	s3, err := env.client.Stream(context.Background(), voiceReq)
	if err != nil {
		t.Fatal(err)
	}
	s3.Next()
	s3.Close()
	if got := env.counter(t, "banter_llm_requests_total", map[string]string{"op": "stream"}); got != 3 {
		t.Errorf("stream calls recorded %v, want 3", got)
	}
}

func TestSpeak(t *testing.T) {
	const ttfb = 60 * time.Millisecond
	env := newEnv(t, Options{}, openaisim.Rule{Name: "tts", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech},
		Latency: openaisim.Latency{TTSFirstByte: ttfb, PerAudioChunk: time.Millisecond}})
	short := readAllSpeech(t, env, "Hi.")
	long := readAllSpeech(t, env, "Hello there, this is a much longer sentence for the speech simulator to voice.")
	if len(short)%2 != 0 || len(long)%2 != 0 {
		t.Errorf("odd byte counts %d, %d for s16le", len(short), len(long))
	}
	if len(long) < 3*len(short) {
		t.Errorf("long text gave %d bytes, short %d: want length proportional to text", len(long), len(short))
	}
	// Speech-like: not silence.
	var peak int16
	for i := 0; i+1 < len(long); i += 2 {
		v := int16(binary.LittleEndian.Uint16(long[i:]))
		peak = max(peak, v, -v)
	}
	if peak < 1000 {
		t.Errorf("peak amplitude %d: audio looks silent", peak)
	}
	rec := last(t, env.sim.RequestsFor(openaisim.EndpointSpeech))
	if rec.Format != "pcm" || rec.Voice != "alloy" || rec.Model != "gpt-4o-mini-tts" {
		t.Errorf("recorded format=%q voice=%q model=%q", rec.Format, rec.Voice, rec.Model)
	}
	if got := env.counter(t, "banter_llm_time_to_first_byte_seconds", map[string]string{"op": "speak"}); got != 2 {
		t.Errorf("ttfb observations = %v, want 2", got)
	}
	if got := env.counter(t, "banter_llm_requests_total", map[string]string{"op": "speak", "outcome": "ok"}); got != 2 {
		t.Errorf("requests_total{speak,ok} = %v, want 2", got)
	}
}

func readAllSpeech(t *testing.T, env *testEnv, text string) []byte {
	t.Helper()
	rc, err := env.client.Speak(context.Background(), "gpt-4o-mini-tts", "alloy", text)
	if err != nil {
		t.Fatal(err)
	}
	s := rc.(*SpeechStream)
	defer s.Close()
	b, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	rec := last(t, env.sim.RequestsFor(openaisim.EndpointSpeech))
	if s.FirstByte() < rec.Injected.TTSFirstByte {
		t.Errorf("first byte after %v, but %v was injected", s.FirstByte(), rec.Injected.TTSFirstByte)
	}
	if rec.AudioBytes != len(b) {
		t.Errorf("read %d bytes, server sent %d", len(b), rec.AudioBytes)
	}
	return b
}

func TestSpeakFaults(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		fault    openaisim.Fault
		times    int
		openKind ErrorKind
		readKind ErrorKind
	}{
		{name: "truncated body", fault: openaisim.Fault{TruncateAfterEvents: 2}, readKind: ErrorKindTruncated},
		{name: "500 then ok", fault: openaisim.Fault{Status: 500}, times: 1},
		{name: "429 no retries", opts: Options{MaxRetries: -1}, fault: openaisim.Fault{Status: 429}, openKind: ErrorKindRateLimited},
		{name: "hang", opts: Options{FirstByteTimeout: 100 * time.Millisecond, MaxRetries: -1}, fault: openaisim.Fault{Timeout: true}, openKind: ErrorKindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, tt.opts, openaisim.Rule{Name: "f", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech},
				Fault: tt.fault, Times: tt.times})
			s, err := env.client.Speak(context.Background(), "gpt-4o-mini-tts", "alloy",
				"A sentence long enough to need several chunks of audio from the simulator.")
			var apiErr *APIError
			if tt.openKind != 0 {
				if !errors.As(err, &apiErr) || apiErr.Kind != tt.openKind {
					t.Fatalf("Speak err = %v, want %v", err, tt.openKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b, err := io.ReadAll(s)
			if tt.readKind == 0 {
				if err != nil || len(b) == 0 {
					t.Fatalf("read %d bytes, err %v", len(b), err)
				}
				return
			}
			if !errors.As(err, &apiErr) || apiErr.Kind != tt.readKind {
				t.Fatalf("Read err = %v, want %v", err, tt.readKind)
			}
			if len(b) == 0 {
				t.Error("no audio before the truncation")
			}
		})
	}
}

func TestSpeakCloseEarly(t *testing.T) {
	env := newEnv(t, Options{}, openaisim.Rule{Name: "slow", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech},
		Latency: openaisim.Latency{PerAudioChunk: 50 * time.Millisecond}})
	s, err := env.client.Speak(context.Background(), "gpt-4o-mini-tts", "alloy", "A long answer that the listener interrupts.")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if _, err := s.Read(buf); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(buf); err == nil {
		t.Error("Read after Close succeeded")
	}
	_ = s.Close()
}

// TestSpeakCloseWhileReading closes a speech stream from another goroutine while a Read
// waits for audio, as a barge-in does (context.AfterFunc in voice's synthesize): under -race
// the byte count Read keeps and the one Close's finish meters must not race, and the cost
// counts what was received.
func TestSpeakCloseWhileReading(t *testing.T) {
	env := newEnv(t, Options{Meter: NewMeter(testPrices, nil, prometheus.NewRegistry())},
		openaisim.Rule{Name: "slow", Match: openaisim.Match{Endpoint: openaisim.EndpointSpeech},
			Latency: openaisim.Latency{PerAudioChunk: 20 * time.Millisecond}})
	s, err := env.client.Speak(context.Background(), "gpt-4o-mini-tts", "alloy", "A long answer that the listener interrupts halfway through.")
	if err != nil {
		t.Fatal(err)
	}
	stream := s.(*SpeechStream)
	read := make(chan error, 1)
	got := make(chan struct{})
	go func() {
		buf := make([]byte, 4800)
		first := true
		for {
			_, err := stream.Read(buf)
			if first {
				close(got)
				first = false
			}
			if err != nil {
				read <- err
				return
			}
		}
	}()
	<-got
	_ = stream.Close()
	if err := <-read; err == nil {
		t.Fatal("Read after Close succeeded")
	}
	if stream.Cost() <= 0 {
		t.Errorf("cost %v after audio was received, want > 0", stream.Cost())
	}
	// The simulator bills the audio it sent before the client went away, not the whole.
	var recs []openaisim.Recorded
	for range 2000 {
		if recs = env.sim.Requests(); len(recs) > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	rec := last(t, recs)
	full := len(openaisim.Synthesize(rec.LastUserText, "alloy", 1)) &^ 1
	if !rec.ClientGone || rec.AudioBytes <= 0 || rec.AudioBytes >= full {
		t.Errorf("recorded client gone %v after %d of %d bytes, want gone part way", rec.ClientGone, rec.AudioBytes, full)
	}
}

func TestTranscribe(t *testing.T) {
	wav := wavBytes(16000, 1, 16, 16000*2*3/2) // 1.5 s
	env := newEnv(t, Options{}, openaisim.Rule{Name: "stt", Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions,
		MinAudio: time.Second}, Reply: openaisim.Reply{Transcript: " banter, what's the score? "}})
	tr, err := env.client.Transcribe(context.Background(), "gpt-4o-transcribe", wav,
		TranscribeOptions{Language: "en", Prompt: "banter"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != "banter, what's the score?" || tr.Duration != 1500*time.Millisecond || tr.Attempts != 1 {
		t.Errorf("transcript %+v", tr)
	}
	rec := last(t, env.sim.Requests())
	if rec.AudioDuration != 1500*time.Millisecond || rec.Language != "en" || rec.TranscriptionPrompt != "banter" ||
		rec.Model != "gpt-4o-transcribe" || rec.Format != "json" {
		t.Errorf("recorded %+v", rec)
	}

	// Not a WAV: refused before any request.
	n := len(env.sim.Requests())
	_, err = env.client.Transcribe(context.Background(), "gpt-4o-transcribe", []byte("not audio"), TranscribeOptions{})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Kind != ErrorKindBadRequest {
		t.Errorf("bad wav err = %v", err)
	}
	if len(env.sim.Requests()) != n {
		t.Error("a request was sent for a bad WAV")
	}

	// Faults: one 503 is retried (the body is re-sent whole).
	env.sim.ResetRules()
	_ = env.sim.AddRule(openaisim.Rule{Name: "503", Fault: openaisim.Fault{Status: 503, RetryAfter: 10 * time.Millisecond}, Times: 1})
	tr, err = env.client.Transcribe(context.Background(), "whisper-1", wav, TranscribeOptions{})
	if err != nil || tr.Attempts != 2 || tr.Text == "" {
		t.Fatalf("after 503: %+v, %v", tr, err)
	}
	if rec := last(t, env.sim.Requests()); rec.AudioDuration != 1500*time.Millisecond {
		t.Errorf("retried upload measured %v", rec.AudioDuration)
	}
}

func TestSpeakPCMIsLittleEndian16(t *testing.T) {
	// Guard the documented format: the first bytes decode as plausible s16le
	// samples (no WAV/RIFF header in a pcm response).
	env := newEnv(t, Options{})
	s, err := env.client.Speak(context.Background(), "gpt-4o-mini-tts", "verse", "Testing one two.")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(b, []byte("RIFF")) {
		t.Fatal("pcm response carries a WAV header")
	}
	if want := SpeechSampleRate * 2 / 10; len(b) < want {
		t.Errorf("%d bytes is less than 100 ms of 24 kHz audio", len(b))
	}
}
