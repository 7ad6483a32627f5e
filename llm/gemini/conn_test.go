package gemini

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"google.golang.org/genai"
)

// tone16k is ms of a 220 Hz tone, pcm16 16 kHz mono.
func tone16k(ms int) []byte {
	b := make([]byte, 32*ms)
	for i := range 16 * ms {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(0.3*32767*math.Sin(2*math.Pi*220*float64(i)/16000))))
	}
	return b
}

func open(t *testing.T, s *openaisim.Server, cfg Config) *Conn {
	t.Helper()
	cfg.BaseURL, cfg.APIKey = "http"+s.GeminiURL()[2:], "gk-test"
	if cfg.Model == "" {
		cfg.Model = "gemini-3.8-live"
	}
	c, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// turn reads events to turnComplete: the audio, the transcripts, the last handle.
type turn struct {
	audio             []byte
	input, output     string
	interrupted       bool
	handle            string
	calls             []Call
	goAway            time.Duration
	sawSetup, sawTurn bool
}

func readTurn(t *testing.T, c *Conn, until func(*turn) bool) *turn {
	t.Helper()
	tr := &turn{}
	for !until(tr) {
		ev, err := c.Next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		for _, a := range ev.Audio {
			tr.audio = append(tr.audio, a...)
		}
		tr.input += ev.InputTranscript
		tr.output += ev.OutputTranscript
		tr.interrupted = tr.interrupted || ev.Interrupted
		tr.calls = append(tr.calls, ev.Calls...)
		tr.sawSetup = tr.sawSetup || ev.Kind == EventSetupComplete
		tr.sawTurn = tr.sawTurn || ev.TurnComplete
		if ev.Handle != "" {
			tr.handle = ev.Handle
		}
		if ev.Kind == EventGoAway {
			tr.goAway = ev.TimeLeft
		}
	}
	return tr
}

func turnDone(tr *turn) bool { return tr.sawTurn && tr.handle != "" }

func TestOpenSpeakAnswerResume(t *testing.T) {
	s := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, InputPattern: "oslo"}, Reply: openaisim.Reply{Text: "Rain in Oslo."}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: `(?s)oslo.*again`}, Reply: openaisim.Reply{Text: "Still Oslo."}},
	))
	s.QueueTranscripts("weather in oslo")
	c := open(t, s, Config{ManualActivity: true, Voice: "Kore", Instructions: "You are banter."})
	if tr := readTurn(t, c, func(tr *turn) bool { return tr.handle != "" }); !tr.sawSetup {
		t.Fatal("no setupComplete")
	}
	if err := c.ActivityStart(); err != nil {
		t.Fatal(err)
	}
	if err := c.SendAudio(tone16k(800), 16000); err != nil {
		t.Fatal(err)
	}
	if err := c.ActivityEnd(); err != nil {
		t.Fatal(err)
	}
	tr := readTurn(t, c, turnDone)
	if tr.input != "weather in oslo" || tr.output != "Rain in Oslo." || !bytes.Equal(tr.audio, openaisim.Synthesize("Rain in Oslo.", "Kore", 1)) {
		t.Errorf("turn: input %q output %q, %d audio bytes", tr.input, tr.output, len(tr.audio))
	}
	if n := s.GeminiGoAway(time.Second); n != 1 {
		t.Fatalf("goAway to %d", n)
	}
	if ga := readTurn(t, c, func(tr *turn) bool { return tr.goAway != 0 }); ga.goAway != time.Second {
		t.Errorf("goAway %v", ga.goAway)
	}
	_ = c.Close()
	c2 := open(t, s, Config{ManualActivity: true, Handle: tr.handle})
	readTurn(t, c2, func(tr *turn) bool { return tr.handle != "" })
	if err := c2.SendText("and again?"); err != nil {
		t.Fatal(err)
	}
	if tr := readTurn(t, c2, turnDone); tr.output != "Still Oslo." {
		t.Errorf("resumed: %q, want the conversation kept", tr.output)
	}
	sent := s.GeminiMessages()
	if sent[0].Type != "setup" || !bytes.Contains(sent[0].Raw, []byte(`"disabled":true`)) || !bytes.Contains(sent[0].Raw, []byte(`"contextWindowCompression"`)) {
		t.Errorf("setup sent: %s", sent[0].Raw)
	}
}

func TestToolCallAnswered(t *testing.T) {
	s := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, InputPattern: "time"}, Times: 1,
			Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "clock", Arguments: `{"zone":"UTC"}`, CallID: "c1"}}}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: `function_response c1: .*noon`}, Reply: openaisim.Reply{Text: "It is noon."}},
	))
	c := open(t, s, Config{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "clock", Description: "the time"}}}}})
	readTurn(t, c, func(tr *turn) bool { return tr.handle != "" })
	if err := c.SendText("what time is it"); err != nil {
		t.Fatal(err)
	}
	tr := readTurn(t, c, func(tr *turn) bool { return len(tr.calls) > 0 })
	if got := tr.calls[0]; got.ID != "c1" || got.Name != "clock" || string(got.Args) != `{"zone":"UTC"}` {
		t.Fatalf("call %+v", got)
	}
	if err := c.SendToolResponse(ToolResult{ID: "c1", Name: "clock", Response: map[string]any{"time": "noon"}}); err != nil {
		t.Fatal(err)
	}
	if tr := readTurn(t, c, turnDone); tr.output != "It is noon." {
		t.Errorf("after the tool: %q", tr.output)
	}
}

func TestCloseClassified(t *testing.T) {
	tests := []struct {
		name   string
		rule   openaisim.Rule
		handle string
		model  string
		code   int
		action Action
	}{
		{name: "stale handle", handle: "gsession_gone", code: 1008, action: ActionRestart},
		{name: "unknown model", model: "gemini-0-nope", code: 1008, action: ActionGiveUp},
		{name: "internal", rule: openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiLive}, Fault: openaisim.Fault{CloseCode: 1011}}, code: 1011, action: ActionResume},
		{name: "invalid", rule: openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiLive}, Fault: openaisim.Fault{CloseCode: 1007}}, code: 1007, action: ActionGiveUp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openaitest.Serve(t, openaisim.WithRules(tc.rule))
			_, err := Open(t.Context(), Config{BaseURL: "http" + s.GeminiURL()[2:], APIKey: "k", Model: orModel(tc.model), Handle: tc.handle})
			var ce *CloseError
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Action() != tc.action || ce.Explain() == "" {
				t.Fatalf("Open: %v, want close %d → %v", err, tc.code, tc.action)
			}
		})
	}
}

func orModel(m string) string {
	if m == "" {
		return "gemini-3.8-live"
	}
	return m
}

func TestOpenHonoursContext(t *testing.T) {
	s := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiLive},
		Latency: openaisim.Latency{TimeToFirstToken: time.Hour}}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the dial goes on in the background; setupComplete would take an hour
	if _, err := Open(ctx, Config{BaseURL: "http" + s.GeminiURL()[2:], APIKey: "k", Model: "gemini-3.8-live"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open: %v, want context.Canceled", err)
	}
}

// FuzzFromMessage: any server message the SDK decodes is read or refused, never a panic, and
// tool-call arguments always come out as JSON.
func FuzzFromMessage(f *testing.F) {
	for _, seed := range []string{`{"setupComplete":{}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAA="}},{"text":"hi"}]},"outputTranscription":{"text":"hi"}}}`,
		`{"serverContent":{"interrupted":true}}`, `{"serverContent":{"turnComplete":true},"usageMetadata":{"totalTokenCount":12}}`,
		`{"toolCall":{"functionCalls":[{"id":"a","name":"f","args":{"x":[1,2]}}]}}`, `{"toolCall":{"functionCalls":[{"name":"f"}]}}`,
		`{"goAway":{"timeLeft":"1.5s"}}`, `{"sessionResumptionUpdate":{"newHandle":"h","resumable":true}}`, `{}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m genai.LiveServerMessage
		if json.Unmarshal(data, &m) != nil {
			return
		}
		ev, err := FromMessage(&m)
		if err != nil {
			return
		}
		for _, c := range ev.Calls {
			if c.ID == "" || !json.Valid(c.Args) {
				t.Fatalf("call %+v", c)
			}
		}
	})
}
