package openaisim

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/genai"
)

// Google's own Go client, google.golang.org/genai's Live API, against the Gemini face: connect,
// set up, stream audio, hear a spoken turn with its transcriptions, interrupt one, and resume
// the conversation on a new connection after goAway.

// tone16k is ms of a 220 Hz tone, pcm16 16 kHz mono: what the server's VAD hears as speech.
func tone16k(ms int) []byte {
	n := 16 * ms
	b := make([]byte, 2*n)
	for i := range n {
		v := 0.3 * math.Sin(2*math.Pi*220*float64(i)/16000)
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(v*32767)))
	}
	return b
}

// genaiLive connects Google's Go client to s with cfg.
func genaiLive(t *testing.T, s *Server, cfg *genai.LiveConnectConfig) (*genai.Session, <-chan *genai.LiveServerMessage) {
	t.Helper()
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "gk-test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: s.GeminiURL() + "/", APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := client.Live.Connect(ctx, "gemini-3.8-live", cfg)
	if err != nil {
		t.Fatalf("Live.Connect: %v", err)
	}
	msgs := make(chan *genai.LiveServerMessage, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(msgs)
		for {
			m, err := sess.Receive()
			if err != nil {
				return
			}
			msgs <- m
		}
	}()
	t.Cleanup(func() { _ = sess.Close(); <-done })
	return sess, msgs
}

// next reads the next server message, failing the test when the socket ends first.
func next(t *testing.T, msgs <-chan *genai.LiveServerMessage) *genai.LiveServerMessage {
	t.Helper()
	select {
	case m, ok := <-msgs:
		if !ok {
			t.Fatal("the socket ended")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no server message in 10 s")
		return nil
	}
}

// heardTurn is what a client gathered of one model turn.
type heardTurn struct {
	input, output string
	text          string // text parts (a text session)
	audio         int    // bytes of 24 kHz pcm16
	interrupted   bool
	handle        string // the last resumption handle before turnComplete's
}

// untilTurnComplete reads one turn to its turnComplete (and the resumption update after it).
func untilTurnComplete(t *testing.T, msgs <-chan *genai.LiveServerMessage, resumption bool) heardTurn {
	t.Helper()
	var h heardTurn
	for {
		m := next(t, msgs)
		if u := m.SessionResumptionUpdate; u != nil && u.Resumable {
			h.handle = u.NewHandle
		}
		sc := m.ServerContent
		if sc == nil {
			continue
		}
		if sc.InputTranscription != nil {
			h.input += sc.InputTranscription.Text
		}
		if sc.OutputTranscription != nil {
			h.output += sc.OutputTranscription.Text
		}
		if sc.ModelTurn != nil {
			for _, p := range sc.ModelTurn.Parts {
				h.text += p.Text
				if p.InlineData != nil {
					if p.InlineData.MIMEType != "audio/pcm;rate=24000" {
						t.Errorf("audio part MIME type %q", p.InlineData.MIMEType)
					}
					h.audio += len(p.InlineData.Data)
				}
			}
		}
		h.interrupted = h.interrupted || sc.Interrupted
		if sc.TurnComplete {
			if resumption {
				m := next(t, msgs)
				if m.SessionResumptionUpdate == nil || m.SessionResumptionUpdate.NewHandle == "" {
					t.Fatalf("after turnComplete: %+v, want a resumption handle", m)
				}
				h.handle = m.SessionResumptionUpdate.NewHandle
			}
			return h
		}
	}
}

func liveConfig(handle string) *genai.LiveConnectConfig {
	return &genai.LiveConnectConfig{
		ResponseModalities:       []genai.Modality{genai.ModalityAudio},
		SystemInstruction:        &genai.Content{Parts: []*genai.Part{{Text: "You are banter."}}},
		SpeechConfig:             &genai.SpeechConfig{VoiceConfig: &genai.VoiceConfig{PrebuiltVoiceConfig: &genai.PrebuiltVoiceConfig{VoiceName: "Kore"}}},
		RealtimeInputConfig:      &genai.RealtimeInputConfig{AutomaticActivityDetection: &genai.AutomaticActivityDetection{Disabled: true}},
		InputAudioTranscription:  &genai.AudioTranscriptionConfig{},
		OutputAudioTranscription: &genai.AudioTranscriptionConfig{},
		SessionResumption:        &genai.SessionResumptionConfig{Handle: handle},
		ContextWindowCompression: &genai.ContextWindowCompressionConfig{SlidingWindow: &genai.SlidingWindow{}},
	}
}

// speak sends one activity of audio through the SDK: activityStart, 100 ms chunks, activityEnd.
func speak(t *testing.T, sess *genai.Session, ms int) {
	t.Helper()
	if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityStart: &genai.ActivityStart{}}); err != nil {
		t.Fatal(err)
	}
	pcm := tone16k(ms)
	for off := 0; off < len(pcm); off += 3200 {
		chunk := pcm[off:min(off+3200, len(pcm))]
		if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: chunk}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityEnd: &genai.ActivityEnd{}}); err != nil {
		t.Fatal(err)
	}
}

// sdkAnswer, sdkStory: the answers of sdkScript's rules.
const (
	sdkAnswer = "It is raining in Oslo today."
	sdkStory  = "Let me tell you a very long story about the fjords, the mountains and the rain that never stops."
)

// sdkScript is the conversation both SDK tests hold: a question, a long story they interrupt, and
// after resuming, a question whose answer needs the first.
func sdkScript(t *testing.T) *Server {
	s := serve(t, WithRules(
		Rule{Match: Match{Endpoint: EndpointGeminiResponse, InputPattern: "weather"}, Reply: Reply{Text: sdkAnswer}},
		Rule{Match: Match{Endpoint: EndpointGeminiResponse, InputPattern: "story"}, Reply: Reply{Text: sdkStory},
			Latency: Latency{PerToken: 20 * time.Millisecond}},
		Rule{Match: Match{Endpoint: EndpointGeminiResponse, PromptPattern: `(?s)user: what is the weather in oslo.*user: what did I ask`},
			Reply: Reply{Text: "You asked about the weather in Oslo."}},
	))
	s.QueueTranscripts("what is the weather in oslo", "tell me a story")
	return s
}

func TestGeminiGoSDKSpokenTurnInterruptAndResume(t *testing.T) {
	const answer, long = sdkAnswer, sdkStory
	s := sdkScript(t)
	sess, msgs := genaiLive(t, s, liveConfig(""))
	if m := next(t, msgs); m.SetupComplete == nil {
		t.Fatalf("first message %+v, want setupComplete", m)
	}
	if m := next(t, msgs); m.SessionResumptionUpdate == nil || !m.SessionResumptionUpdate.Resumable {
		t.Fatalf("second message %+v, want a resumption handle", m)
	}

	speak(t, sess, 1200)
	h := untilTurnComplete(t, msgs, true)
	if h.input != "what is the weather in oslo" || h.output != answer || h.interrupted {
		t.Errorf("turn: %+v", h)
	}
	if got, want := h.audio, len(Synthesize(answer, "Kore", 1)); got != want {
		t.Errorf("model audio %d bytes, want %d", got, want)
	}

	// Interrupted: a new activity while the long answer streams.
	speak(t, sess, 600)
	for m := next(t, msgs); m.ServerContent == nil || m.ServerContent.ModelTurn == nil; m = next(t, msgs) {
	}
	if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityStart: &genai.ActivityStart{}}); err != nil {
		t.Fatal(err)
	}
	h = untilTurnComplete(t, msgs, true)
	if !h.interrupted || h.output == long {
		t.Errorf("after activityStart: %+v, want interrupted", h)
	}
	handle := h.handle

	// goAway, then a new connection resumes the conversation with the last handle.
	if n := s.GeminiGoAway(time.Minute); n != 1 {
		t.Fatalf("goAway told %d connections", n)
	}
	m := next(t, msgs)
	if m.GoAway == nil || m.GoAway.TimeLeft != time.Minute {
		t.Fatalf("got %+v, want goAway with a minute left", m)
	}
	_ = sess.Close()
	sess2, msgs2 := genaiLive(t, s, liveConfig(handle))
	next(t, msgs2) // setupComplete
	next(t, msgs2) // the first handle of the new connection
	if err := sess2.SendClientContent(genai.LiveClientContentInput{Turns: []*genai.Content{genai.NewContentFromText("what did I ask first?", genai.RoleUser)}}); err != nil {
		t.Fatal(err)
	}
	if h := untilTurnComplete(t, msgs2, true); h.output != "You asked about the weather in Oslo." {
		t.Errorf("resumed turn: %+v, want the first question remembered", h)
	}
}

func TestGeminiGoSDKStaleHandleClosed1008(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "gk-test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: s.GeminiURL() + "/", APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Live.Connect(ctx, "gemini-3.8-live", liveConfig("gsession_nope"))
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 1008 || !strings.Contains(ce.Text, "session not found") {
		t.Fatalf("Connect with a stale handle: %v, want close 1008 session not found", err)
	}
}

// TestGeminiMaxOutputTokens: a setup's generationConfig.maxOutputTokens ends the model's turn
// there, as the real model stops generating: with 1 (banter's hearing connections) the answer
// is one token of text and of speech, not the whole echo.
func TestGeminiMaxOutputTokens(t *testing.T) {
	s := serve(t)
	cfg := liveConfig("")
	cfg.MaxOutputTokens = 1
	sess, msgs := genaiLive(t, s, cfg)
	next(t, msgs) // setupComplete
	next(t, msgs) // the first resumption handle
	if err := sess.SendClientContent(genai.LiveClientContentInput{Turns: []*genai.Content{genai.NewContentFromText("what's the weather like today?", genai.RoleUser)}}); err != nil {
		t.Fatal(err)
	}
	h := untilTurnComplete(t, msgs, true)
	if h.output != "You" || h.audio != len(Synthesize("You", "Kore", 1)) {
		t.Errorf("said %q in %d bytes of audio, want one token, \"You\"", h.output, h.audio)
	}
}
