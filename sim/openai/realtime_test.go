package openaisim

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// rtClient is a minimal realtime client over gorilla/websocket.
type rtClient struct {
	t    *testing.T
	conn *websocket.Conn
	sent int
}

func dialRT(t *testing.T, s *Server, model string) *rtClient {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer sk-sim-test"}}
	conn, res, err := websocket.DefaultDialer.Dial(s.RealtimeURL()+"?model="+model, h)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, res)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rtClient{t: t, conn: conn}
	if ev := c.next(); ev["type"] != "session.created" {
		t.Fatalf("first event %v", ev)
	}
	return c
}

func (c *rtClient) send(ev map[string]any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(ev); err != nil {
		c.t.Fatalf("send: %v", err)
	}
	c.sent++
}

func (c *rtClient) next() map[string]any {
	c.t.Helper()
	ev, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return ev
}

func (c *rtClient) read() (map[string]any, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := c.conn.ReadMessage()
	if err != nil {
		return nil, err
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// until reads events up to and including the first of type typ.
func (c *rtClient) until(typ string) []map[string]any {
	c.t.Helper()
	var evs []map[string]any
	for {
		ev := c.next()
		evs = append(evs, ev)
		if ev["type"] == typ {
			return evs
		}
	}
}

func (c *rtClient) appendAudio(pcm []byte) {
	c.t.Helper()
	for i := 0; i < len(pcm); i += 4800 {
		c.send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(pcm[i:min(i+4800, len(pcm))])})
	}
}

func types(evs []map[string]any) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i], _ = ev["type"].(string)
	}
	return out
}

// collect returns the concatenated transcript deltas and decoded audio.
func collect(t *testing.T, evs []map[string]any) (transcript string, audio []byte) {
	for _, ev := range evs {
		switch ev["type"] {
		case "response.output_audio_transcript.delta", "response.output_text.delta":
			transcript += ev["delta"].(string)
		case "response.output_audio.delta":
			b, err := base64.StdEncoding.DecodeString(ev["delta"].(string))
			if err != nil {
				t.Fatal(err)
			}
			audio = append(audio, b...)
		}
	}
	return transcript, audio
}

func silence(d time.Duration) []byte { return make([]byte, int(d.Seconds()*SpeechRate)*2) }

func noVAD() map[string]any {
	return map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"audio": map[string]any{"input": map[string]any{"turn_detection": nil}}}}
}

func TestRealtimeSessionUpdate(t *testing.T) {
	s := serve(t)
	c := dialRT(t, s, "gpt-realtime")
	c.send(map[string]any{"type": "session.update", "event_id": "evt_1", "session": map[string]any{"instructions": "x"}})
	ev := c.next()
	e, _ := ev["error"].(map[string]any)
	if ev["type"] != "error" || e["code"] != "missing_required_parameter" || e["param"] != "session.type" || e["event_id"] != "evt_1" {
		t.Fatalf("missing type: %v", ev)
	}
	c.send(map[string]any{"type": "session.update", "session": map[string]any{
		"type": "realtime", "instructions": "You are banter.",
		"audio": map[string]any{"input": map[string]any{"turn_detection": map[string]any{"type": "server_vad", "silence_duration_ms": 300}},
			"output": map[string]any{"voice": "marin"}},
	}})
	ev = c.next()
	sess, _ := ev["session"].(map[string]any)
	if ev["type"] != "session.updated" || sess["instructions"] != "You are banter." || sess["model"] != "gpt-realtime" {
		t.Fatalf("updated: %v", ev)
	}
	td := sess["audio"].(map[string]any)["input"].(map[string]any)["turn_detection"].(map[string]any)
	out := sess["audio"].(map[string]any)["output"].(map[string]any)
	if td["silence_duration_ms"] != 300.0 || td["threshold"] != 0.5 || out["voice"] != "marin" {
		t.Errorf("merge: td %v out %v", td, out)
	}
}

func TestRealtimeManualTurn(t *testing.T) {
	const reply = "Sure thing, I'll be right there."
	s := serve(t, WithRules(Rule{Name: "long audio", Match: Match{Endpoint: EndpointRealtimeResponse, MinAudio: 800 * time.Millisecond}, Reply: Reply{Text: reply}}))
	c := dialRT(t, s, "gpt-realtime")
	c.send(noVAD())
	c.until("session.updated")
	c.appendAudio(Synthesize("can you come over here please", "alloy", 1))
	c.send(map[string]any{"type": "input_audio_buffer.commit"})
	evs := c.until("conversation.item.done")
	if strings.Join(types(evs), ",") != "input_audio_buffer.committed,conversation.item.added,conversation.item.done" {
		t.Fatalf("commit events %v", types(evs))
	}
	userItem := evs[0]["item_id"].(string)
	c.send(map[string]any{"type": "response.create"})
	evs = c.until("response.done")
	want := []string{"response.created", "response.output_item.added", "conversation.item.added", "response.content_part.added"}
	if got := types(evs); strings.Join(got[:4], ",") != strings.Join(want, ",") {
		t.Errorf("head %v", got[:4])
	}
	tail := []string{"response.output_audio.done", "response.output_audio_transcript.done", "response.content_part.done", "response.output_item.done", "conversation.item.done", "response.done"}
	if got := types(evs); strings.Join(got[len(got)-6:], ",") != strings.Join(tail, ",") {
		t.Errorf("tail %v", got[len(got)-6:])
	}
	transcript, audio := collect(t, evs)
	if transcript != reply {
		t.Errorf("transcript %q", transcript)
	}
	if got, want := pcmDuration(len(audio), SpeechRate), SpeechDuration(reply, 1); got != want {
		t.Errorf("audio %v, want %v", got, want)
	}
	done := evs[len(evs)-1]["response"].(map[string]any)
	if done["status"] != "completed" || len(done["output"].([]any)) != 1 {
		t.Errorf("done %v", done)
	}
	r := s.RequestsFor(EndpointRealtimeResponse)
	if len(r) != 1 || r[0].Rule != "long audio" || r[0].AudioDuration < 800*time.Millisecond {
		t.Errorf("recorded %+v", r)
	}
	if ev := s.RealtimeEvents(); len(ev) != c.sent || ev[len(ev)-1].Type != "response.create" {
		t.Errorf("recorded %d client events, sent %d", len(ev), c.sent)
	}
	_ = userItem
}

func TestRealtimeServerVAD(t *testing.T) {
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse, InputPattern: "(?i)banter"}, Reply: Reply{Text: "Hi!"}}))
	s.QueueTranscripts("hey banter")
	c := dialRT(t, s, "gpt-realtime")
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"audio": map[string]any{"input": map[string]any{
			"transcription":  map[string]any{"model": "gpt-4o-transcribe"},
			"turn_detection": map[string]any{"type": "server_vad", "silence_duration_ms": 200, "prefix_padding_ms": 100},
		}}}})
	c.until("session.updated")
	speech := Synthesize("hey banter", "alloy", 1)
	c.appendAudio(silence(300 * time.Millisecond))
	c.appendAudio(speech)
	c.appendAudio(silence(600 * time.Millisecond))
	evs := c.until("response.done")
	got := types(evs)
	want := []string{"input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped", "input_audio_buffer.committed",
		"conversation.item.added", "conversation.item.done", "conversation.item.input_audio_transcription.delta"}
	if strings.Join(got[:len(want)], ",") != strings.Join(want, ",") {
		t.Fatalf("events %v", got)
	}
	// speech starts at 300 ms (its first 20 ms frame may still be below the
	// threshold); audio_start_ms backs off by the 100 ms prefix padding
	if st := evs[0]["audio_start_ms"].(float64); st < 200 || st > 240 {
		t.Errorf("audio_start_ms %v, want 200..240 (300 ms silence - 100 ms padding)", st)
	}
	end := evs[1]["audio_end_ms"].(float64)
	speechEnd := 300 + float64(SpeechDuration("hey banter", 1).Milliseconds())
	if end < speechEnd-150 || end > speechEnd+50 {
		t.Errorf("audio_end_ms %v, speech ends at %v", end, speechEnd)
	}
	if evs[0]["item_id"] != evs[2]["item_id"] {
		t.Errorf("item ids differ: %v %v", evs[0]["item_id"], evs[2]["item_id"])
	}
	if tr, _ := collect(t, evs); tr != "Hi!" {
		t.Errorf("reply %q", tr)
	}
	var completed map[string]any
	for _, ev := range evs {
		if ev["type"] == "conversation.item.input_audio_transcription.completed" {
			completed = ev
		}
	}
	if completed == nil || completed["transcript"] != "hey banter" {
		t.Errorf("transcription %v", completed)
	}
	if r := s.RequestsFor(EndpointRealtimeTranscription); len(r) != 1 || r[0].LastUserText != "hey banter" {
		t.Errorf("recorded transcription %+v", r)
	}
}

func TestRealtimeCancelAndTruncate(t *testing.T) {
	s := serve(t, WithRules(Rule{Reply: Reply{Text: "this is a long reply that will be cut off before it ends"},
		Latency: Latency{PerToken: 20 * time.Millisecond}}))
	c := dialRT(t, s, "gpt-realtime")
	c.send(noVAD())
	c.until("session.updated")
	c.send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": "talk to me"}}}})
	c.until("conversation.item.done")
	c.send(map[string]any{"type": "response.create"})
	evs := c.until("response.output_audio.delta")
	var itemID string
	for _, ev := range evs {
		if ev["type"] == "response.output_item.added" {
			itemID = ev["item"].(map[string]any)["id"].(string)
		}
	}
	c.send(map[string]any{"type": "response.create", "event_id": "evt_dup"})
	c.send(map[string]any{"type": "response.cancel"})
	evs = c.until("response.done")
	var dupErr map[string]any
	for _, ev := range evs {
		if ev["type"] == "error" {
			dupErr = ev["error"].(map[string]any)
		}
	}
	if dupErr == nil || dupErr["code"] != "conversation_already_has_active_response" || dupErr["event_id"] != "evt_dup" {
		t.Errorf("second response.create: %v", dupErr)
	}
	resp := evs[len(evs)-1]["response"].(map[string]any)
	if resp["status"] != "cancelled" || resp["status_details"].(map[string]any)["reason"] != "client_cancelled" {
		t.Fatalf("done %v", resp)
	}
	c.send(map[string]any{"type": "conversation.item.truncate", "item_id": itemID, "content_index": 0, "audio_end_ms": 100})
	ev := c.next()
	if ev["type"] != "conversation.item.truncated" || ev["audio_end_ms"] != 100.0 || ev["item_id"] != itemID {
		t.Fatalf("truncate: %v", ev)
	}
	if tr := s.Truncations(); len(tr) != 1 || tr[0].AudioEndMs != 100 || tr[0].ItemID != itemID || tr[0].AudioMs < 100 {
		t.Errorf("truncations %+v", tr)
	}
	c.send(map[string]any{"type": "conversation.item.truncate", "item_id": itemID, "content_index": 0, "audio_end_ms": 999999})
	if ev := c.next(); ev["type"] != "error" || ev["error"].(map[string]any)["param"] != "audio_end_ms" {
		t.Errorf("truncate beyond end: %v", ev)
	}
}

func TestRealtimeBargeIn(t *testing.T) {
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Reply: Reply{Text: "a very slow answer with many many words in it"},
		Latency: Latency{PerToken: 30 * time.Millisecond}}))
	c := dialRT(t, s, "gpt-realtime")
	c.send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": "go"}}}})
	c.until("conversation.item.done")
	c.send(map[string]any{"type": "response.create"})
	c.until("response.output_audio.delta")
	c.appendAudio(Synthesize("wait stop", "echo", 1))
	evs := c.until("response.done")
	if !strings.Contains(strings.Join(types(evs), ","), "input_audio_buffer.speech_started") {
		t.Errorf("no speech_started in %v", types(evs))
	}
	resp := evs[len(evs)-1]["response"].(map[string]any)
	if resp["status"] != "cancelled" || resp["status_details"].(map[string]any)["reason"] != "turn_detected" {
		t.Errorf("done %v", resp)
	}
}

func TestRealtimeToolCall(t *testing.T) {
	args := `{"channel_id":"not-a-real-id","content":"hi"}`
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse, Tool: "send_discord_message"},
		Reply: Reply{ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: args}}}}))
	c := dialRT(t, s, "gpt-realtime")
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"tools": []any{map[string]any{"type": "function", "name": "send_discord_message", "parameters": map[string]any{"type": "object"}}}}})
	c.until("session.updated")
	c.send(map[string]any{"type": "response.create"})
	evs := c.until("response.done")
	var done map[string]any
	deltas := ""
	for _, ev := range evs {
		switch ev["type"] {
		case "response.function_call_arguments.delta":
			deltas += ev["delta"].(string)
		case "response.function_call_arguments.done":
			done = ev
		}
	}
	if done == nil || done["arguments"] != args || done["name"] != "send_discord_message" || deltas != args || done["call_id"] == "" {
		t.Errorf("tool call: done %v deltas %q", done, deltas)
	}
	if r := s.RequestsFor(EndpointRealtimeResponse); len(r) != 1 || len(r[0].Tools) != 1 {
		t.Errorf("recorded %+v", r)
	}
}

func TestRealtimeErrors(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		code  string
		param string
	}{
		{name: "invalid json", raw: `{"type":`, code: "invalid_json"},
		{name: "unknown type", raw: `{"type":"response.explode"}`, code: "invalid_value", param: "type"},
		{name: "empty commit", raw: `{"type":"input_audio_buffer.commit"}`, code: "input_audio_buffer_commit_empty"},
		{name: "cancel without response", raw: `{"type":"response.cancel"}`, code: "response_cancel_not_active"},
		{name: "bad base64", raw: `{"type":"input_audio_buffer.append","audio":"***"}`, code: "invalid_value", param: "audio"},
		{name: "bad item type", raw: `{"type":"conversation.item.create","item":{"type":"hologram"}}`, code: "invalid_value", param: "item.type"},
		{name: "truncate unknown item", raw: `{"type":"conversation.item.truncate","item_id":"item_x","content_index":0,"audio_end_ms":5}`, code: "item_truncate_invalid_item_id", param: "item_id"},
		{name: "bad input rate", raw: `{"type":"session.update","session":{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcm","rate":16000}}}}}`, code: "invalid_value", param: "session.audio.input.format.rate"},
		{name: "bad turn detection", raw: `{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":{"type":"magic"}}}}}`, code: "invalid_value", param: "session.audio.input.turn_detection.type"},
	}
	s := serve(t)
	c := dialRT(t, s, "gpt-realtime")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.conn.WriteMessage(websocket.TextMessage, []byte(tt.raw)); err != nil {
				t.Fatal(err)
			}
			ev := c.next()
			e, _ := ev["error"].(map[string]any)
			param, _ := e["param"].(string)
			if ev["type"] != "error" || e["code"] != tt.code || param != tt.param || e["message"] == "" {
				t.Errorf("got %v", ev)
			}
		})
	}
	if n := len(s.RealtimeEvents()); n != len(tests) {
		t.Errorf("recorded %d client events, want %d", n, len(tests))
	}
}

// TestRealtimeCloseWithActiveResponse: Close ends sockets and response
// goroutines; the package's goleak check verifies nothing is left.
func TestRealtimeCloseWithActiveResponse(t *testing.T) {
	s, err := Start("127.0.0.1:0", WithRules(Rule{Fault: Fault{Timeout: true}}))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	quick := websocket.Dialer{HandshakeTimeout: 100 * time.Millisecond}
	conn, _, err := quick.Dial(s.RealtimeURL()+"?model=gpt-realtime", h)
	if err == nil {
		t.Fatal("handshake should hang under a Timeout rule matching every endpoint")
	}
	_ = conn
	s.ResetRules()
	if err := s.AddRule(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Fault: Fault{Timeout: true}}); err != nil {
		t.Fatal(err)
	}
	conn, _, err = websocket.DefaultDialer.Dial(s.RealtimeURL()+"?model=gpt-realtime", h)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteJSON(map[string]any{"type": "response.create"}); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"response.created"`) {
			break
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.ReadMessage(); err == nil {
		t.Error("socket still open after Close")
	}
}

func TestRealtimeItemCreatedOption(t *testing.T) {
	s := serve(t, WithItemCreatedEvents())
	c := dialRT(t, s, "gpt-realtime")
	c.send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": "hi"}}}})
	evs := c.until("conversation.item.done")
	if got := strings.Join(types(evs), ","); got != "conversation.item.created,conversation.item.added,conversation.item.done" {
		t.Errorf("events %s", got)
	}
}

func TestRealtimeTextOutOfBandAndTranscriptionFailure(t *testing.T) {
	s := serve(t, WithRules(
		Rule{Match: Match{Endpoint: EndpointRealtimeTranscription}, Fault: Fault{Status: 500}, Times: 1},
		Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Reply: Reply{Text: "text only"}},
	))
	c := dialRT(t, s, "gpt-realtime-mini")
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"audio": map[string]any{"input": map[string]any{"turn_detection": nil, "transcription": map[string]any{"model": "gpt-4o-transcribe"}}}}})
	c.until("session.updated")

	// transcription failure
	c.appendAudio(Synthesize("hello", "alloy", 1))
	c.send(map[string]any{"type": "input_audio_buffer.commit"})
	evs := c.until("conversation.item.input_audio_transcription.failed")
	failed := evs[len(evs)-1]
	if e, _ := failed["error"].(map[string]any); e["type"] != "server_error" || failed["item_id"] != evs[0]["item_id"] {
		t.Errorf("failed event %v", failed)
	}

	// out-of-band text response: no conversation items, conversation_id null
	c.send(map[string]any{"type": "response.create", "response": map[string]any{"conversation": "none", "output_modalities": []any{"text"}}})
	evs = c.until("response.done")
	text, audio := collect(t, evs)
	if text != "text only" || len(audio) != 0 {
		t.Errorf("text %q, %d audio bytes", text, len(audio))
	}
	for _, ev := range evs {
		if strings.HasPrefix(ev["type"].(string), "conversation.item.") {
			t.Errorf("out-of-band response added %v", ev["type"])
		}
	}
	if resp := evs[len(evs)-1]["response"].(map[string]any); resp["conversation_id"] != nil || resp["output_modalities"].([]any)[0] != "text" {
		t.Errorf("done %v", resp)
	}
	if r := s.RequestsFor(EndpointRealtimeTranscription); len(r) != 1 || r[0].Status != 500 {
		t.Errorf("recorded %+v", r)
	}
	if r := s.RequestsFor(EndpointRealtimeResponse); len(r) != 1 || r[0].Model != "gpt-realtime-mini" || r[0].RequestID == "" {
		t.Errorf("recorded %+v", r)
	}
}

// TestRealtimeBackToBackResponses: a response.create sent right after
// response.done is accepted.
func TestRealtimeBackToBackResponses(t *testing.T) {
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Reply: Reply{Text: "ok"}}))
	c := dialRT(t, s, "gpt-realtime")
	for i := 0; i < 20; i++ {
		c.send(map[string]any{"type": "response.create", "response": map[string]any{"output_modalities": []any{"text"}}})
		for _, ev := range c.until("response.done") {
			if ev["type"] == "error" {
				t.Fatalf("response %d: %v", i, ev)
			}
		}
	}
}
