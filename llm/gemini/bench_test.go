package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"google.golang.org/genai"
)

// BenchmarkReceiveAudioPart measures what reading one 200 ms audio part costs banter on top of
// the socket: the SDK's decoding (JSON to a map, the map re-encoded and decoded into
// LiveServerMessage, as genai's Session.Receive does) and FromMessage.
func BenchmarkReceiveAudioPart(b *testing.B) {
	raw := []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` +
		base64.StdEncoding.EncodeToString(make([]byte, 9600)) + `"}}]}}}`)
	b.ReportAllocs()
	b.SetBytes(9600)
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(m); err != nil {
			b.Fatal(err)
		}
		var msg genai.LiveServerMessage
		if err := json.Unmarshal(buf.Bytes(), &msg); err != nil {
			b.Fatal(err)
		}
		if ev, err := FromMessage(&msg); err != nil || len(ev.Audio[0]) != 9600 {
			b.Fatal(err)
		}
	}
}
