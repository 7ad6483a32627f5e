package realtime

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// pcmRamp is deterministic PCM for tests.
func pcmRamp(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func audioDelta(pcm []byte) []byte {
	return []byte(`{"type":"response.output_audio.delta","event_id":"event_1","response_id":"resp_1","item_id":"item_1","output_index":0,"content_index":0,"delta":"` +
		base64.StdEncoding.EncodeToString(pcm) + `"}`)
}

func TestDecode(t *testing.T) {
	pcm := pcmRamp(960)
	tests := []struct {
		name string
		in   string
		want Event
	}{
		{"audio delta", string(audioDelta(pcm)),
			Event{Type: EventOutputAudioDelta, ResponseID: "resp_1", ItemID: "item_1", Audio: pcm}},
		{"audio delta escaped slash", `{"type":"response.output_audio.delta","response_id":"r","item_id":"i","delta":"` +
			strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xfe}), "/", `\/`) + `"}`,
			Event{Type: EventOutputAudioDelta, ResponseID: "r", ItemID: "i", Audio: []byte{0xff, 0xff, 0xfe}}},
		{"transcript delta with escapes", `{"type":"response.output_audio_transcript.delta","response_id":"r","item_id":"i","output_index":1,"content_index":2,"delta":"Hi \"there\"\n\u00e9"}`,
			Event{Type: EventOutputAudioTranscriptDelta, ResponseID: "r", ItemID: "i", OutputIndex: 1, ContentIndex: 2, Delta: "Hi \"there\"\né"}},
		{"transcript done", `{"type":"response.output_audio_transcript.done","response_id":"r","item_id":"i","transcript":"Hello."}`,
			Event{Type: EventOutputAudioTranscriptDone, ResponseID: "r", ItemID: "i", Transcript: "Hello."}},
		{"text delta", `{"type":"response.output_text.delta","response_id":"r","item_id":"i","delta":"ok"}`,
			Event{Type: EventOutputTextDelta, ResponseID: "r", ItemID: "i", Delta: "ok"}},
		{"response created", `{"type":"response.created","event_id":"e","response":{"id":"resp_9","object":"realtime.response","status":"in_progress","output":[]}}`,
			Event{Type: EventResponseCreated, ResponseID: "resp_9", Response: ResponseInfo{ID: "resp_9", Status: "in_progress"}}},
		{"item truncated", `{"type":"conversation.item.truncated","item_id":"item_3","content_index":0,"audio_end_ms":1500}`,
			Event{Type: EventItemTruncated, ItemID: "item_3", AudioEndMs: 1500}},
		{"item added", `{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"item_4","type":"message","role":"user","content":[]}}`,
			Event{Type: EventItemAdded, ItemID: "item_4", ItemRole: "user"}},
		{"session created", `{"type":"session.created","session":{"id":"sess_1","type":"realtime","audio":{}}}`,
			Event{Type: EventSessionCreated, SessionID: "sess_1"}},
		{"committed", `{"type":"input_audio_buffer.committed","previous_item_id":"a","item_id":"b"}`,
			Event{Type: EventInputAudioCommitted, PreviousItemID: "a", ItemID: "b"}},
		{"error", `{"type":"error","error":{"type":"invalid_request_error","code":"bad","message":"nope","param":null,"event_id":"c1"}}`,
			Event{Type: EventError, Error: ErrorInfo{Type: "invalid_request_error", Code: "bad", Message: "nope", EventID: "c1"}}},
		{"unmodelled", `{"type":"response.mcp_call.in_progress","item_id":"x"}`,
			Event{Type: EventOther, Name: "response.mcp_call.in_progress", ItemID: "x"}},
		{"whitespace", " {\n\t\"type\" : \"input_audio_buffer.cleared\" } \n", Event{Type: EventInputAudioCleared}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev Event
			if err := ev.Decode([]byte(tt.in)); err != nil {
				t.Fatal(err)
			}
			if ev.Response.Status != tt.want.Response.Status || ev.Response.ID != tt.want.Response.ID {
				t.Errorf("response = %+v, want %+v", ev.Response, tt.want.Response)
			}
			ev.Response, tt.want.Response = ResponseInfo{}, ResponseInfo{}
			if !bytes.Equal(ev.Audio, tt.want.Audio) {
				t.Errorf("audio %d bytes, want %d", len(ev.Audio), len(tt.want.Audio))
			}
			ev.Audio, tt.want.Audio = nil, nil
			if !reflect.DeepEqual(ev, tt.want) {
				t.Errorf("got  %+v\nwant %+v", ev, tt.want)
			}
		})
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `null`, `{"type":`, `{"type":"response.output_audio.delta","delta":"`,
		`{"event_id":"e"}`, // no type
		`{"type":42}`,      // type not a string
		`{"type":"response.output_audio.delta","delta":"@@"}`, // bad base64
		`{"type":"response.output_audio.delta","delta":7}`,
		`{"type":"response.output_audio_transcript.delta"}`, // no delta
		`{"type":"response.done","response":"x"}`,
		`{"type":"response.done"}`,
		`{"type":"error","error":{}}`,
		`{"type":"x","output_index":"1"}`,
		`{"type":"x","item_id":5}`,
		`{"type":"x"} {}`,
		`{"type":"x",}`,
		"{\"type\":\"x\u0001\"}",
		`{"type":"response.output_audio.delta","event_id":"malformed",`, // the simulator's corruption
	} {
		var ev Event
		err := ev.Decode([]byte(in))
		if err == nil {
			t.Errorf("Decode(%q) accepted: %+v", in, ev)
			continue
		}
		if !errors.Is(err, errMalformed) {
			t.Errorf("Decode(%q) error %v does not wrap errMalformed", in, err)
		}
	}
}

func TestDecodeResetsFields(t *testing.T) {
	var ev Event
	if err := ev.Decode([]byte(`{"type":"response.output_audio_transcript.delta","response_id":"r","item_id":"i","output_index":3,"delta":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := ev.Decode([]byte(`{"type":"input_audio_buffer.cleared"}`)); err != nil {
		t.Fatal(err)
	}
	if ev.ResponseID != "" || ev.ItemID != "" || ev.OutputIndex != 0 || ev.Delta != "" {
		t.Errorf("stale fields after decode: %+v", ev)
	}
}

func TestDecodeAudioAllocs(t *testing.T) {
	msg := audioDelta(pcmRamp(4800)) // 100 ms at 24 kHz
	var ev Event
	if err := ev.Decode(msg); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(1000, func() {
		if err := ev.Decode(msg); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("Decode of an audio delta allocates %v times, want 0", n)
	}
}

func TestAppendAudioAllocs(t *testing.T) {
	pcm := pcmRamp(960)
	buf := InputAudioAppendCommand{Audio: pcm}.AppendJSON(nil)
	n := testing.AllocsPerRun(1000, func() {
		buf = InputAudioAppendCommand{Audio: pcm}.AppendJSON(buf[:0])
	})
	if n != 0 {
		t.Errorf("AppendJSON allocates %v times, want 0", n)
	}
}

// TestCommandsRoundTrip decodes every command's JSON as the server would.
func TestCommandsRoundTrip(t *testing.T) {
	thr := 0.6
	tests := []struct {
		cmd  Command
		want map[string]any // dotted path -> value
	}{
		{SessionUpdateCommand{Session{Instructions: "Be brief.", Voice: "marin", InputTranscriptionModel: "gpt-4o-transcribe"}},
			map[string]any{"type": "session.update", "session.type": "realtime", "session.instructions": "Be brief.",
				"session.audio.output.voice": "marin", "session.audio.input.format.type": "audio/pcm",
				"session.audio.input.format.rate": 24000.0, "session.audio.output.format.rate": 24000.0,
				"session.audio.input.turn_detection": nil, "session.output_modalities.0": "audio",
				"session.audio.input.transcription.model": "gpt-4o-transcribe"}},
		{SessionUpdateCommand{Session{TurnDetection: &TurnDetection{Type: "server_vad", Threshold: &thr, SilenceDurationMs: 400}}},
			map[string]any{"session.audio.input.turn_detection.type": "server_vad",
				"session.audio.input.turn_detection.threshold": 0.6, "session.audio.input.turn_detection.silence_duration_ms": 400.0}},
		{InputAudioAppendCommand{Audio: []byte{1, 2, 3}}, map[string]any{"type": "input_audio_buffer.append", "audio": "AQID"}},
		{InputAudioCommitCommand{}, map[string]any{"type": "input_audio_buffer.commit"}},
		{InputAudioClearCommand{}, map[string]any{"type": "input_audio_buffer.clear"}},
		{ItemCreateCommand{Role: "user", Text: `say "hi"`}, map[string]any{"type": "conversation.item.create",
			"item.type": "message", "item.role": "user", "item.content.0.type": "input_text", "item.content.0.text": `say "hi"`}},
		{ItemCreateCommand{Role: "assistant", Text: "ok"}, map[string]any{"item.content.0.type": "output_text"}},
		{ResponseCreateCommand{}, map[string]any{"type": "response.create"}},
		{ResponseCreateCommand{Instructions: "Say: hello", OutOfBand: true, Metadata: map[string]string{"turn": "7"}},
			map[string]any{"response.instructions": "Say: hello", "response.conversation": "none", "response.metadata.turn": "7"}},
		{ResponseCancelCommand{}, map[string]any{"type": "response.cancel"}},
		{ResponseCancelCommand{ResponseID: "resp_é"}, map[string]any{"response_id": "resp_é"}},
		{ItemTruncateCommand{ItemID: "item_2", AudioEnd: 1234 * time.Millisecond},
			map[string]any{"type": "conversation.item.truncate", "item_id": "item_2", "content_index": 0.0, "audio_end_ms": 1234.0}},
		{ItemDeleteCommand{ItemID: "item_3"}, map[string]any{"type": "conversation.item.delete", "item_id": "item_3"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd.Type(), func(t *testing.T) {
			b := tt.cmd.AppendJSON([]byte("prefix"))
			if !bytes.HasPrefix(b, []byte("prefix")) {
				t.Fatal("AppendJSON dropped the prefix")
			}
			var v any
			if err := json.Unmarshal(b[len("prefix"):], &v); err != nil {
				t.Fatalf("invalid JSON %s: %v", b, err)
			}
			if typ := v.(map[string]any)["type"]; typ != tt.cmd.Type() {
				t.Errorf("type %v, want %v", typ, tt.cmd.Type())
			}
			for path, want := range tt.want {
				got, ok := lookup(v, path)
				if !ok || got != want {
					t.Errorf("%s = %v (present %v), want %v in %s", path, got, ok, want, b)
				}
			}
		})
	}
}

func lookup(v any, path string) (any, bool) {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			i := int(p[0] - '0')
			if len(p) != 1 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func TestEventTypeString(t *testing.T) {
	for ty := EventError; ty < numEventTypes; ty++ {
		if got := eventTypeOf([]byte(ty.String())); got != ty {
			t.Errorf("eventTypeOf(%q) = %v", ty.String(), got)
		}
	}
	if EventType(200).String() != "EventType(200)" || EventUnknown.String() != "unknown" {
		t.Error("String of out-of-range/zero types")
	}
}

// FuzzDecode feeds arbitrary server messages to the decoder: it must never
// panic, must agree with encoding/json on syntax, and must only accept
// events with a type.
func FuzzDecode(f *testing.F) {
	f.Add(audioDelta(pcmRamp(30)))
	f.Add([]byte(`{"type":"response.done","response":{"id":"r","status":"cancelled","status_details":{"type":"cancelled","reason":"client_cancelled"}}}`))
	f.Add([]byte(`{"type":"error","error":{"type":"x","message":"m"}}`))
	f.Add([]byte(`{"type":"response.output_audio_transcript.delta","delta":"\ud83d\ude00"}`))
	f.Add([]byte(`{"type":"x","a":[1,-2.5e3,{"b":[true,false,null]}],"c":"\u0041"}`))
	f.Add([]byte(`{"type":"response.output_audio.delta","event_id":"malformed",`))
	f.Add([]byte(`{"type":"x","n":01}`))
	f.Add([]byte(`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev Event
		err := ev.Decode(data)
		scanErr := forEachMember(data, func(_, _ []byte) error { return nil })
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		jsonOK := json.Valid(data) && len(trimmed) > 0 && trimmed[0] == '{'
		if depthExceeded(data) {
			return // we refuse deep nesting that encoding/json accepts
		}
		if (scanErr == nil) != jsonOK {
			t.Fatalf("scanner says %v, encoding/json valid-object says %v for %q", scanErr, jsonOK, data)
		}
		if err == nil && (ev.Type == EventUnknown || !jsonOK) {
			t.Fatalf("accepted %q as %+v", data, ev)
		}
		if err != nil && !errors.Is(err, errMalformed) {
			t.Fatalf("error %v not classified as malformed", err)
		}
	})
}

func depthExceeded(data []byte) bool {
	d, inStr, esc := 0, false, false
	for _, c := range data {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			if d++; d > maxDepth {
				return true
			}
		case !inStr && (c == '}' || c == ']'):
			d--
		}
	}
	return false
}

// BenchmarkDecodeAudioDelta compares the decoder on a 100 ms audio delta
// with the obvious encoding/json + base64.DecodeString baseline.
func BenchmarkDecodeAudioDelta(b *testing.B) {
	msg := audioDelta(pcmRamp(4800))
	b.Run("Event.Decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		var ev Event
		for b.Loop() {
			if err := ev.Decode(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline_encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			var v struct {
				Type, EventID, ResponseID, ItemID string
				OutputIndex, ContentIndex         int
				Delta                             string
			}
			if err := json.Unmarshal(msg, &v); err != nil {
				b.Fatal(err)
			}
			if _, err := base64.StdEncoding.DecodeString(v.Delta); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendAudio(b *testing.B) {
	pcm := pcmRamp(960) // 20 ms at 24 kHz
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = InputAudioAppendCommand{Audio: pcm}.AppendJSON(buf[:0])
		}
	})
	b.Run("baseline_json_Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(pcm)})
		}
	})
}
