package voicesim

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gorilla/websocket"
)

func TestDecodeClientFrame(t *testing.T) {
	tests := []struct {
		name    string
		mt      int
		in      string
		op      Op
		binary  bool
		wantErr bool
	}{
		{"identify", websocket.TextMessage, `{"op":0,"d":{"server_id":"1"}}`, OpIdentify, false, false},
		{"heartbeat", websocket.TextMessage, `{"op":3,"d":{"t":1,"seq_ack":-1}}`, OpHeartbeat, false, false},
		{"trailing newline", websocket.TextMessage, "{\"op\":5,\"d\":{}}\n", OpSpeaking, false, false},
		{"binary key package", websocket.BinaryMessage, "\x1a\x00\x01", OpMLSKeyPackage, true, false},
		{"binary empty", websocket.BinaryMessage, "", 0, true, true},
		{"no op", websocket.TextMessage, `{"d":{}}`, 0, false, true},
		{"op too large", websocket.TextMessage, `{"op":256,"d":{}}`, 0, false, true},
		{"op negative", websocket.TextMessage, `{"op":-1,"d":{}}`, 0, false, true},
		{"op string", websocket.TextMessage, `{"op":"0","d":{}}`, 0, false, true},
		{"not json", websocket.TextMessage, `op=0`, 0, false, true},
		{"ping frame type", websocket.PingMessage, `x`, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := decodeClientFrame(tt.mt, []byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (f.Op != tt.op || f.Binary != tt.binary) {
				t.Fatalf("frame %+v", f)
			}
		})
	}
}

func TestDecodePayload(t *testing.T) {
	tests := []struct {
		name    string
		op      Op
		d       string
		v       any
		missing bool
		wantErr bool
	}{
		{"identify ok", OpIdentify, `{"server_id":"1","user_id":"2","session_id":"3","token":"4","max_dave_protocol_version":1}`, &identifyPayload{}, false, false},
		{"identify no session", OpIdentify, `{"server_id":"1","user_id":"2","token":"4"}`, &identifyPayload{}, true, true},
		{"resume ok", OpResume, `{"server_id":"1","session_id":"3","token":"4","seq_ack":10}`, &resumePayload{}, false, false},
		{"resume no token", OpResume, `{"server_id":"1","session_id":"3"}`, &resumePayload{}, true, true},
		{"select ok", OpSelectProtocol, `{"protocol":"udp","data":{"address":"127.0.0.1","port":1,"mode":"aead_aes256_gcm_rtpsize"}}`, &selectProtocolPayload{}, false, false},
		{"select no mode", OpSelectProtocol, `{"protocol":"udp","data":{}}`, &selectProtocolPayload{}, true, true},
		{"heartbeat no t", OpHeartbeat, `{"seq_ack":1}`, &heartbeatPayload{}, true, true},
		{"wrong type", OpSpeaking, `{"speaking":"yes"}`, &speakingPayload{}, false, true},
		{"null", OpIdentify, `null`, &identifyPayload{}, false, true},
		{"array", OpIdentify, `[]`, &identifyPayload{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decodePayload(tt.op, json.RawMessage(tt.d), tt.v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tt.wantErr)
			}
			if errors.Is(err, errMissingField) != tt.missing {
				t.Fatalf("err %v, missing %v", err, tt.missing)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{OpIdentify.String(), "Identify"},
		{OpMLSWelcome.String(), "MLSWelcome"},
		{Op(99).String(), "Op(99)"},
		{CloseAuthFailed.String(), "authentication failed"},
		{CloseCode(4999).String(), "close(4999)"},
		{ModeAES256GCMRTPSize.String(), "aead_aes256_gcm_rtpsize"},
		{ModeUnknown.String(), "unknown"},
		{ToServer.String(), "to-server"},
		{DirectionUnknown.String(), "unknown"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	for _, c := range []struct {
		code CloseCode
		want bool
	}{{1000, true}, {1006, true}, {4015, true}, {4006, false}, {4014, false}} {
		if c.code.Resumable() != c.want {
			t.Errorf("%d.Resumable() = %v", c.code, !c.want)
		}
	}
}

func TestServerFrames(t *testing.T) {
	if got := string(encodeServerJSON(OpSpeaking, 10, serverSpeakingPayload{UserID: "1", SSRC: 110, Speaking: 1})); got != `{"op":5,"d":{"user_id":"1","ssrc":110,"speaking":1},"seq":10}` {
		t.Errorf("json %s", got)
	}
	if got := string(encodeServerJSON(OpResumed, -1, nil)); got != `{"op":9,"d":null}` {
		t.Errorf("json %s", got)
	}
	if got := appendServerBinary(nil, 0x1234, OpMLSProposals, []byte{9}); string(got) != "\x12\x34\x1b\x09" {
		t.Errorf("binary %x", got)
	}
}

// FuzzDecodeClientFrame feeds arbitrary client messages through the frame
// decoder and every payload decoder the server uses.
func FuzzDecodeClientFrame(f *testing.F) {
	seeds := []string{
		`{"op":0,"d":{"server_id":"1","user_id":"2","session_id":"3","token":"4","max_dave_protocol_version":1}}`,
		`{"op":1,"d":{"protocol":"udp","data":{"address":"127.0.0.1","port":5,"mode":"aead_aes256_gcm_rtpsize"}}}`,
		`{"op":3,"d":{"t":1501184119561,"seq_ack":10}}`,
		`{"op":3,"d":1501184119561}`,
		`{"op":5,"d":{"speaking":5,"delay":0,"ssrc":1}}`,
		`{"op":7,"d":{"server_id":"1","session_id":"3","token":"4","seq_ack":-1}}`,
		`{"op":23,"d":{"transition_id":3}}`,
		"\x1a\x00\x01\x00\x02",
		"\x1c",
		`{"op":1e3}`,
	}
	for _, s := range seeds {
		f.Add(s[0] != '{', []byte(s))
	}
	f.Fuzz(func(t *testing.T, binary bool, data []byte) {
		mt := websocket.TextMessage
		if binary {
			mt = websocket.BinaryMessage
		}
		fr, err := decodeClientFrame(mt, data)
		if err != nil {
			return
		}
		if fr.Binary != binary {
			t.Fatalf("binary %v decoded as %v", binary, fr.Binary)
		}
		for _, v := range []any{&identifyPayload{}, &resumePayload{}, &selectProtocolPayload{}, &heartbeatPayload{}, &speakingPayload{}, &transitionPayload{}} {
			_ = decodePayload(fr.Op, fr.D, v)
		}
	})
}
