package openaisim

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// The Gemini face over a plain WebSocket: what the real API refuses (and how it closes), the
// server's VAD, tool calls, frames and the connection limit.

// gmDial opens a raw Live socket with the key in the query.
func gmDial(t *testing.T, s *Server, header http.Header, query string) *websocket.Conn {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(s.GeminiURL()+GeminiLivePath+query, header)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func gmSend(t *testing.T, c *websocket.Conn, frame int, msg string) {
	t.Helper()
	if err := c.WriteMessage(frame, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// gmRead reads one server message, decoded; a close comes back as the error.
func gmRead(t *testing.T, c *websocket.Conn) (map[string]any, error) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("server message %s: %v", b, err)
	}
	return m, nil
}

// gmReadUntil reads until a message has key, returning it.
func gmReadUntil(t *testing.T, c *websocket.Conn, key string) map[string]any {
	t.Helper()
	for {
		m, err := gmRead(t, c)
		if err != nil {
			t.Fatalf("waiting for %s: %v", key, err)
		}
		if _, ok := m[key]; ok {
			return m
		}
	}
}

// gmClosed reads until the server closes, returning the close.
func gmClosed(t *testing.T, c *websocket.Conn) *websocket.CloseError {
	t.Helper()
	for {
		_, err := gmRead(t, c)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce
		}
		if err != nil {
			t.Fatalf("read: %v, want a close frame", err)
		}
	}
}

const (
	gmSetupManual = `{"setup":{"model":"models/gemini-3.8-live","generationConfig":{"responseModalities":["AUDIO"]},"realtimeInputConfig":{"automaticActivityDetection":{"disabled":true}},"tools":[{"functionDeclarations":[{"name":"lookup","description":"look up","parameters":{"type":"OBJECT"}}]}]}}`
	gmSetupAuto   = `{"setup":{"model":"models/gemini-3.8-live","inputAudioTranscription":{},"outputAudioTranscription":{}}}`
)

func gmAudioMsg(pcm []byte) string {
	return `{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"` + base64.StdEncoding.EncodeToString(pcm) + `"}}}`
}

func TestGeminiRefusals(t *testing.T) {
	slowSetup := Rule{Match: Match{Endpoint: EndpointGeminiLive}, Latency: Latency{TimeToFirstToken: time.Hour}}
	toolCall := Rule{Match: Match{Endpoint: EndpointGeminiResponse}, Reply: Reply{ToolCalls: []ToolCall{{Name: "lookup", Arguments: `{"q":"x"}`}}}}
	tests := []struct {
		name     string
		rules    []Rule
		setup    string // "" : none sent
		ready    bool   // wait for setupComplete before sending msgs
		msgs     []string
		code     int
		contains string
	}{
		{name: "first message not setup", msgs: []string{`{"clientContent":{"turnComplete":true}}`}, code: 1007, contains: "first message must be setup"},
		{name: "unknown top-level field", msgs: []string{`{"setup":{"model":"models/gemini-3.8-live"},"extra":1}`}, code: 1007, contains: `Unknown name "extra"`},
		{name: "two oneof fields", msgs: []string{`{"setup":{"model":"models/gemini-3.8-live"},"toolResponse":{}}`}, code: 1007, contains: "Oneof field"},
		{name: "unknown nested field", msgs: []string{`{"setup":{"model":"models/gemini-3.8-live","generationConfig":{"responseMimeType":"text/plain"}}}`}, code: 1007, contains: `Unknown name "responseMimeType"`},
		{name: "snake_case field", msgs: []string{`{"setup":{"model":"models/gemini-3.8-live","generation_config":{}}}`}, code: 1007, contains: `Unknown name "generation_config"`},
		{name: "not JSON", msgs: []string{`{"setup":`}, code: 1007, contains: "Invalid JSON payload"},
		{name: "unknown model", msgs: []string{`{"setup":{"model":"models/gpt-realtime"}}`}, code: 1008, contains: "is not found for API version v1beta"},
		{name: "two response modalities", msgs: []string{`{"setup":{"model":"models/gemini-3.8-live","generationConfig":{"responseModalities":["AUDIO","TEXT"]}}}`}, code: 1007, contains: "only one response modality"},
		{name: "stale resumption handle", msgs: []string{`{"setup":{"model":"models/gemini-3.8-live","sessionResumption":{"handle":"nope"}}}`}, code: 1008, contains: "session not found"},
		{name: "message before setupComplete", rules: []Rule{slowSetup}, setup: gmSetupAuto, msgs: []string{gmAudioMsg(tone16k(20))}, code: 1007, contains: "before setupComplete"},
		{name: "second setup", setup: gmSetupAuto, ready: true, msgs: []string{gmSetupAuto}, code: 1007, contains: "only be sent once"},
		{name: "activityStart with automatic detection", setup: gmSetupAuto, ready: true, msgs: []string{`{"realtimeInput":{"activityStart":{}}}`}, code: 1007, contains: "automaticActivityDetection.disabled"},
		{name: "not pcm", setup: gmSetupAuto, ready: true, msgs: []string{`{"realtimeInput":{"audio":{"mimeType":"audio/opus","data":""}}}`}, code: 1007, contains: "unsupported audio mimeType"},
		{name: "unknown tool response id", setup: gmSetupManual, ready: true, msgs: []string{`{"toolResponse":{"functionResponses":[{"id":"x","name":"lookup","response":{}}]}}`}, code: 1007, contains: "no pending function call"},
		{name: "audio during a blocking tool call", rules: []Rule{toolCall}, setup: gmSetupManual, ready: true,
			msgs: []string{`{"clientContent":{"turns":[{"role":"user","parts":[{"text":"look it up"}]}],"turnComplete":true}}`, "await toolCall", gmAudioMsg(tone16k(20))},
			code: 1008, contains: "tool call is pending"},
		{name: "scripted close after setup", rules: []Rule{{Match: Match{Endpoint: EndpointGeminiLive}, Fault: Fault{CloseCode: 1011}}}, setup: gmSetupAuto, code: 1011, contains: "Internal error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, WithRules(tc.rules...))
			c := gmDial(t, s, nil, "?key=gk-test")
			if tc.setup != "" {
				gmSend(t, c, websocket.TextMessage, tc.setup)
			}
			if tc.ready {
				gmReadUntil(t, c, "setupComplete")
			}
			for _, m := range tc.msgs {
				if m == "await toolCall" {
					gmReadUntil(t, c, "toolCall")
					continue
				}
				gmSend(t, c, websocket.TextMessage, m)
			}
			ce := gmClosed(t, c)
			if ce.Code != tc.code || !strings.Contains(ce.Text, tc.contains) {
				t.Errorf("closed %d %q, want %d containing %q", ce.Code, ce.Text, tc.code, tc.contains)
			}
		})
	}
}

func TestGeminiKey(t *testing.T) {
	s := serve(t, WithGeminiAPIKey("gk-right"))
	tests := []struct {
		name   string
		query  string
		header http.Header
		ok     bool
	}{
		{name: "query", query: "?key=gk-right", ok: true},
		{name: "header", header: http.Header{"X-Goog-Api-Key": {"gk-right"}}, ok: true},
		{name: "none"},
		{name: "wrong", query: "?key=gk-wrong"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := websocket.DefaultDialer.Dial(s.GeminiURL()+GeminiLivePath+tc.query, tc.header)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				_ = c.Close()
				return
			}
			if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("dial: %v %v, want 403", err, resp)
			}
		})
	}
}

func TestGeminiBinaryFramesToolCallAndVAD(t *testing.T) {
	s := serve(t, WithRules(
		Rule{Match: Match{Endpoint: EndpointGeminiResponse, InputPattern: "look"}, Reply: Reply{ToolCalls: []ToolCall{{Name: "lookup", Arguments: `{"q":"rain"}`, CallID: "call-1"}}}, Times: 1},
		Rule{Match: Match{Endpoint: EndpointGeminiResponse, PromptPattern: `function_response call-1: \{"result":"wet"\}`}, Reply: Reply{Text: "It is wet."}},
	))
	s.QueueTranscripts("look it up")
	c := gmDial(t, s, http.Header{"X-Goog-Api-Key": {"gk-test"}}, "")
	gmSend(t, c, websocket.BinaryMessage, `{"setup":{"model":"models/gemini-3.8-live","inputAudioTranscription":{},"outputAudioTranscription":{},"tools":[{"functionDeclarations":[{"name":"lookup"}]}]}}`)
	typ, _, err := c.ReadMessage()
	if err != nil || typ != websocket.BinaryMessage {
		t.Fatalf("setupComplete frame %d %v, want binary", typ, err)
	}
	// The server's VAD: speech, then silence past silenceDurationMs, makes a turn.
	gmSend(t, c, websocket.BinaryMessage, gmAudioMsg(tone16k(400)))
	gmSend(t, c, websocket.TextMessage, gmAudioMsg(make([]byte, 32*700)))
	in := gmReadUntil(t, c, "serverContent")
	if got := in["serverContent"].(map[string]any)["inputTranscription"].(map[string]any)["text"]; got != "look it up" {
		t.Fatalf("input transcription %v", in)
	}
	call := gmReadUntil(t, c, "toolCall")["toolCall"].(map[string]any)["functionCalls"].([]any)[0].(map[string]any)
	if call["id"] != "call-1" || call["name"] != "lookup" || call["args"].(map[string]any)["q"] != "rain" {
		t.Fatalf("toolCall %v", call)
	}
	gmSend(t, c, websocket.TextMessage, `{"toolResponse":{"functionResponses":[{"id":"call-1","name":"lookup","response":{"result":"wet"}}]}}`)
	var out string
	for {
		m := gmReadUntil(t, c, "serverContent")["serverContent"].(map[string]any)
		if ot, ok := m["outputTranscription"].(map[string]any); ok {
			out += ot["text"].(string)
		}
		if m["turnComplete"] == true {
			break
		}
	}
	if out != "It is wet." {
		t.Errorf("answer after the tool %q", out)
	}
}

func TestGeminiConnectionLimit(t *testing.T) {
	s := serve(t, WithGeminiConnectionLimit(300*time.Millisecond, 200*time.Millisecond), WithGeminiTextFrames())
	c := gmDial(t, s, nil, "?key=gk-test")
	gmSend(t, c, websocket.TextMessage, gmSetupAuto)
	typ, _, err := c.ReadMessage()
	if err != nil || typ != websocket.TextMessage {
		t.Fatalf("setupComplete frame %d %v, want text", typ, err)
	}
	if ga := gmReadUntil(t, c, "goAway")["goAway"].(map[string]any); ga["timeLeft"] != "0.2s" {
		t.Errorf("goAway %v", ga)
	}
	if ce := gmClosed(t, c); ce.Code != websocket.CloseNormalClosure {
		t.Errorf("closed %d %q at the limit", ce.Code, ce.Text)
	}
}

// FuzzGeminiClientMessage: any bytes a client sends are either one message of one kind or a
// 1007 close, never a panic.
func FuzzGeminiClientMessage(f *testing.F) {
	for _, seed := range []string{gmSetupManual, gmSetupAuto, gmAudioMsg(tone16k(20)), `{"realtimeInput":{"activityStart":{}}}`,
		`{"toolResponse":{"functionResponses":[{"id":"a","response":{"x":1}}]}}`, `{"clientContent":{"turns":[{"role":"user","parts":[{"text":"hi"}]}],"turnComplete":true}}`,
		`{"setup":{},"realtimeInput":{}}`, `{"setup":{"contextWindowCompression":{"triggerTokens":"100000","slidingWindow":{"targetTokens":50000}}}}`, `[]`, `null`, ``} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kind, m, cerr := decodeGeminiClientMessage(data)
		if cerr != nil {
			if cerr.Code != 1007 || m != nil {
				t.Fatalf("refusal %v with message %v", cerr, m)
			}
			return
		}
		set := 0
		for _, p := range []bool{m.Setup != nil, m.ClientContent != nil, m.RealtimeInput != nil, m.ToolResponse != nil} {
			if p {
				set++
			}
		}
		if set != 1 || !contains(gmMessageKinds, kind) {
			t.Fatalf("kind %q with %d fields set", kind, set)
		}
	})
}

// TestRunGeminiStandalone: `banter sim gemini` prints its base URL; a Live client sets up on
// it, and the control API's goaway reaches the client.
func TestRunGeminiStandalone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- RunGeminiStandalone(ctx, "127.0.0.1:0", pw); pw.Close() }()
	sc := bufio.NewScanner(pr)
	var base string
	for base == "" && sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "base URL:"); ok {
			base = strings.Fields(v)[0]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("banner base URL %q", base)
	}
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+GeminiLivePath+"?key=k", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gmSend(t, c, websocket.TextMessage, gmSetupAuto)
	gmReadUntil(t, c, "setupComplete")
	resp, err := http.Post(base+"/_sim/gemini/goaway?time_left=3s", "", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("control goaway: %v %v", resp, err)
	}
	resp.Body.Close()
	if ga := gmReadUntil(t, c, "goAway")["goAway"].(map[string]any); ga["timeLeft"] != "3s" {
		t.Errorf("goAway %v", ga)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestGeminiToolCallCancellation: an interrupted turn discards the non-blocking calls still
// pending: toolCallCancellation names them, and a late response to one is refused.
func TestGeminiToolCallCancellation(t *testing.T) {
	s := serve(t, WithRules(
		Rule{Match: Match{Endpoint: EndpointGeminiResponse, InputPattern: "look"}, Times: 1,
			Reply: Reply{ToolCalls: []ToolCall{{Name: "lookup", Arguments: `{}`, CallID: "nb-1"}}}},
		Rule{Match: Match{Endpoint: EndpointGeminiResponse, InputPattern: "story"}, Reply: Reply{Text: sdkStory},
			Latency: Latency{PerToken: 20 * time.Millisecond}},
	))
	c := gmDial(t, s, nil, "?key=k")
	gmSend(t, c, websocket.TextMessage, `{"setup":{"model":"models/gemini-3.8-live","tools":[{"functionDeclarations":[{"name":"lookup","behavior":"NON_BLOCKING"}]}]}}`)
	gmReadUntil(t, c, "setupComplete")
	text := func(s string) string {
		return `{"clientContent":{"turns":[{"role":"user","parts":[{"text":"` + s + `"}]}],"turnComplete":true}}`
	}
	gmSend(t, c, websocket.TextMessage, text("look it up"))
	gmReadUntil(t, c, "toolCall")
	for m := gmReadUntil(t, c, "serverContent"); m["serverContent"].(map[string]any)["turnComplete"] != true; m = gmReadUntil(t, c, "serverContent") {
	}
	gmSend(t, c, websocket.TextMessage, text("tell me a story"))
	gmReadUntil(t, c, "serverContent") // the story streams
	gmSend(t, c, websocket.TextMessage, text("stop"))
	if ids := gmReadUntil(t, c, "toolCallCancellation")["toolCallCancellation"].(map[string]any)["ids"].([]any); len(ids) != 1 || ids[0] != "nb-1" {
		t.Fatalf("toolCallCancellation ids %v", ids)
	}
	gmSend(t, c, websocket.TextMessage, `{"toolResponse":{"functionResponses":[{"id":"nb-1","response":{}}]}}`)
	if ce := gmClosed(t, c); ce.Code != 1007 {
		t.Errorf("a response to a cancelled call: closed %d %q, want 1007", ce.Code, ce.Text)
	}
}
