package openaisim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

func FuzzParseResponsesRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"gpt-5-mini","input":"hi"}`,
		`{"model":"m","instructions":"be nice","input":[{"role":"user","content":"x"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"y"}]}]}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}],"tools":[{"type":"function","name":"f","parameters":{}}],"tool_choice":{"type":"function","name":"f"}}`,
		`{"model":"m","tool_choice":"required","tools":[{"type":"web_search"}]}`,
		`{"model":"m","input":[{"role":"developer","content":[{"type":"input_image"}]}]}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]}]}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://cdn.discordapp.com/a.png"},{"type":"input_image","file_id":"file_1"}]}]}`,
		`{"model":`, `null`, `[]`, `{"model":"m","input":7}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, p, err := parseResponsesRequest(body)
		if err != nil {
			if _, ok := asRequestError(err); !ok {
				t.Fatalf("error %v is not a requestError", err)
			}
			return
		}
		if req.Model == "" || p.model != req.Model {
			t.Fatalf("accepted without model: %q", body)
		}
		if p.lastUser != "" && !strings.Contains(p.flat, p.lastUser) {
			t.Fatalf("last user text %q missing from prompt %q", p.lastUser, p.flat)
		}
		if p.policy == toolPolicyRequired && len(p.tools) == 0 {
			t.Fatalf("required tool choice without tools accepted: %q", body)
		}
	})
}

func FuzzParseChatRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"u"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}],"stream":true}`,
		`{"model":"m","messages":[]}`, `{"model":"m","messages":[{"role":"tool","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"u"},{"type":"image_url","image_url":{"url":"https://cdn.discordapp.com/a.png","detail":"auto"}}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lG"}}]}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, p, err := parseChatRequest(body)
		if err != nil {
			return
		}
		if p.model == "" {
			t.Fatal("accepted without model")
		}
		if p.lastUser != "" && !strings.Contains(p.flat, p.lastUser) {
			t.Fatalf("last user text missing from prompt")
		}
	})
}

func FuzzParseWAV(f *testing.F) {
	f.Add(EncodeWAV(make([]byte, 480), SpeechRate))
	f.Add(EncodeWAV(nil, 16000))
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\xc0\x5d\x00\x00\x80\xbb\x00\x00\x02\x00\x10\x00data\xff\xff\xff\xff\x01\x02"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVELIST\x03\x00\x00\x00abc\x00fmt \x10\x00\x00\x00"))
	f.Add([]byte("RIFF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := parseWAV(b)
		if err != nil {
			return
		}
		if w.DataOffset < 12 || w.DataLen < 0 || w.DataOffset+w.DataLen > len(b) {
			t.Fatalf("data %d+%d outside %d bytes", w.DataOffset, w.DataLen, len(b))
		}
		if w.Duration() < 0 {
			t.Fatalf("negative duration %v", w.Duration())
		}
	})
}

func multipartBody(t testing.TB, fields map[string]string, filename string, file []byte) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if filename != "" {
		fw, err := mw.CreateFormFile("file", filename)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(file)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func FuzzParseTranscriptionForm(f *testing.F) {
	ct, body := multipartBody(f, map[string]string{"model": "whisper-1", "response_format": "verbose_json"}, "a.wav", EncodeWAV(make([]byte, 9600), SpeechRate))
	f.Add(ct, body)
	ct, body = multipartBody(f, map[string]string{"model": "gpt-4o-transcribe", "stream": "true"}, "a.pcm", make([]byte, 9600))
	f.Add(ct, body)
	ct, body = multipartBody(f, map[string]string{"model": "m"}, "", nil)
	f.Add(ct, body)
	f.Add("multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\nRIFF\r\n--x--\r\n"))
	f.Add("text/plain", []byte("hello"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		form, err := parseTranscriptionForm(contentType, bytes.NewReader(body), 1<<20)
		if err != nil {
			return
		}
		if form.Model == "" || form.Duration < 100_000_000 || len(form.File) > 1<<20 {
			t.Fatalf("accepted bad form: model %q duration %v size %d", form.Model, form.Duration, len(form.File))
		}
	})
}

func FuzzSpeechRequest(f *testing.F) {
	f.Add([]byte(`{"model":"tts-1","input":"hi","voice":"alloy","response_format":"pcm"}`))
	f.Add([]byte(`{"model":"tts-1","input":"hi","voice":{"id":"v"},"response_format":"wav","speed":4.5}`))
	f.Add([]byte(`{"model":"tts-1","input":"","voice":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, voice, err := parseSpeechRequest(body)
		if err != nil {
			return
		}
		if voice == "" || req.Input == "" || (req.ResponseFormat != "pcm" && req.ResponseFormat != "wav") {
			t.Fatalf("accepted %q", body)
		}
	})
}

// FuzzRealtimeClientEvent sends arbitrary client events to a live session
// and checks the session keeps answering (no panic, no hang, no drop).
func FuzzRealtimeClientEvent(f *testing.F) {
	pcm := base64.StdEncoding.EncodeToString(Synthesize("hi", "alloy", 1))
	for _, seed := range []string{
		`{"type":"session.update","session":{"type":"realtime","instructions":"x","audio":{"input":{"turn_detection":{"type":"server_vad","threshold":"high"}}}}}`,
		`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null,"transcription":{"model":"m"}}}}}`,
		`{"type":"input_audio_buffer.append","audio":"` + pcm + `"}`,
		`{"type":"input_audio_buffer.commit"}`,
		`{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
		`{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_audio","audio":"` + pcm[:64] + `"}]}}`,
		`{"type":"conversation.item.create","item":{"type":"message","role":"user","content":"nope"}}`,
		`{"type":"conversation.item.truncate","item_id":"item_sim000001","audio_end_ms":-5}`,
		`{"type":"response.create","response":{"output_modalities":["text"],"instructions":"y"}}`,
		`{"type":"response.create","response":[1]}`,
		`{"type":"response.cancel","response_id":"nope"}`,
		`{"type":7}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	s := serve(f, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Reply: Reply{Text: "ok"}}))
	conn, _, err := websocket.DefaultDialer.Dial(s.RealtimeURL()+"?model=gpt-realtime", nil)
	if err != nil {
		f.Fatal(err)
	}
	defer conn.Close()
	f.Fuzz(func(t *testing.T, ev []byte) {
		if err := conn.WriteMessage(websocket.TextMessage, ev); err != nil {
			t.Fatal(err)
		}
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"input_audio_buffer.clear","event_id":"sentinel"}`)); err != nil {
			t.Fatal(err)
		}
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				t.Fatalf("session died after %q: %v", ev, err)
			}
			var msg struct{ Type string }
			if json.Unmarshal(b, &msg) != nil {
				t.Fatalf("malformed server event %q", b)
			}
			if msg.Type == "input_audio_buffer.cleared" {
				return
			}
		}
	})
}
