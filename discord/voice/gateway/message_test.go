package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		op      Opcode
		seq     int
		wantErr bool
	}{
		{"hello-no-seq", `{"op":8,"d":{"heartbeat_interval":41250.5}}`, OpHello, NoSeq, false},
		{"speaking-with-seq", `{"op":5,"d":{"speaking":0,"delay":0,"ssrc":110},"seq":10}`, OpSpeaking, 10, false},
		{"resumed-null", `{"op":9,"d":null}`, OpResumed, NoSeq, false},
		{"unknown-op", `{"op":18,"d":{"any":1},"seq":3}`, Opcode(18), 3, false},
		{"no-op", `{"d":{}}`, OpUnknown, 0, true},
		{"negative-seq", `{"op":5,"d":{},"seq":-2}`, OpUnknown, 0, true},
		{"not-json", `{"op":`, OpUnknown, 0, true},
		{"op-string", `{"op":"5"}`, OpUnknown, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := DecodeText([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tt.wantErr)
			}
			if err == nil && (m.Op != tt.op || m.Seq != tt.seq || m.Binary) {
				t.Errorf("got op %v seq %d binary %t; want %v %d", m.Op, m.Seq, m.Binary, tt.op, tt.seq)
			}
		})
	}
}

func TestDecodePayloads(t *testing.T) {
	m, _ := DecodeText([]byte(`{"op":2,"d":{"ssrc":1,"ip":"127.0.0.1","port":1234,"modes":["aead_aes256_gcm_rtpsize","aead_xchacha20_poly1305_rtpsize"],"heartbeat_interval":1}}`))
	var r ReadyEvent
	if err := m.Decode(&r); err != nil || r.SSRC != 1 || r.Port != 1234 || len(r.Modes) != 2 {
		t.Errorf("Ready = %+v, %v", r, err)
	}
	key := make([]int, 32)
	key[0], key[31] = 251, 11
	raw, _ := EncodeEvent(OpSessionDescription, NoSeq, map[string]any{"mode": "aead_aes256_gcm_rtpsize", "secret_key": key, "dave_protocol_version": 1, "audio_codec": "opus"})
	m, _ = DecodeText(raw)
	var sd SessionDescriptionEvent
	if err := m.Decode(&sd); err != nil {
		t.Fatal(err)
	}
	if k, err := sd.Key(); err != nil || k[0] != 251 || k[31] != 11 || sd.DAVEProtocolVersion != 1 {
		t.Errorf("Key = %v, %v", k, err)
	}
	for _, bad := range [][]int{make([]int, 31), append(make([]int, 31), 256), append(make([]int, 31), -1)} {
		if _, err := (&SessionDescriptionEvent{SecretKey: bad}).Key(); err == nil {
			t.Errorf("Key(%v) accepted", bad)
		}
	}
	m, _ = DecodeText([]byte(`{"op":9,"d":null}`))
	if err := m.Decode(&struct{}{}); err == nil {
		t.Error("Decode of null data succeeded")
	}
	m, _ = DecodeText([]byte(`{"op":2,"d":{"ssrc":"x"}}`))
	if err := m.Decode(&r); err == nil {
		t.Error("Decode of wrongly typed ssrc succeeded")
	}
}

func TestBinaryFrames(t *testing.T) {
	ev := AppendBinaryEvent(nil, 0x0102, OpMLSExternalSender, []byte{0xaa, 0xbb})
	if !bytes.Equal(ev, []byte{0x01, 0x02, 25, 0xaa, 0xbb}) {
		t.Errorf("event frame = %x", ev)
	}
	m, err := DecodeBinary(ev)
	if err != nil || m.Op != OpMLSExternalSender || m.Seq != 0x0102 || !m.Binary || !bytes.Equal(m.Payload, []byte{0xaa, 0xbb}) {
		t.Errorf("DecodeBinary = %+v, %v", m, err)
	}
	if err := m.Decode(&struct{}{}); err == nil {
		t.Error("Decode of binary message succeeded")
	}
	if _, err := DecodeBinary([]byte{0, 1}); err == nil {
		t.Error("2-byte binary frame accepted")
	}
	if got := AppendBinaryCommand(nil, OpMLSKeyPackage, []byte{1, 2}); !bytes.Equal(got, []byte{26, 1, 2}) {
		t.Errorf("command frame = %x", got)
	}
}

// TestEncodeCommands checks our payloads against the documented/captured
// examples (API voice-connections, discord-clients.md §3.2).
func TestEncodeCommands(t *testing.T) {
	tests := []struct {
		op   Opcode
		d    any
		want string
	}{
		{OpIdentify, IdentifyCommand{ServerID: "41771983423143937", UserID: "104694319306248192", SessionID: "my_session_id", Token: "my_token", MaxDAVEProtocolVersion: 1},
			`{"op":0,"d":{"server_id":"41771983423143937","user_id":"104694319306248192","session_id":"my_session_id","token":"my_token","max_dave_protocol_version":1}}`},
		{OpSelectProtocol, SelectProtocolCommand{Protocol: "udp", Data: SelectProtocolData{Address: "127.0.0.1", Port: 60621, Mode: "aead_aes256_gcm_rtpsize"}},
			`{"op":1,"d":{"protocol":"udp","data":{"address":"127.0.0.1","port":60621,"mode":"aead_aes256_gcm_rtpsize"}}}`},
		{OpHeartbeat, HeartbeatCommand{T: 1501184119561, SeqAck: 10}, `{"op":3,"d":{"t":1501184119561,"seq_ack":10}}`},
		{OpSpeaking, SpeakingCommand{Speaking: SpeakingMicrophone, SSRC: 1}, `{"op":5,"d":{"speaking":1,"delay":0,"ssrc":1}}`},
		{OpResume, ResumeCommand{ServerID: "41771983423143937", SessionID: "my_session_id", Token: "my_token", SeqAck: 10},
			`{"op":7,"d":{"server_id":"41771983423143937","session_id":"my_session_id","token":"my_token","seq_ack":10}}`},
	}
	for _, tt := range tests {
		got, err := EncodeCommand(tt.op, tt.d)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%v:\n got %s\nwant %s", tt.op, got, tt.want)
		}
	}
	ev, _ := EncodeEvent(OpSpeaking, 10, SpeakingCommand{SSRC: 110})
	if string(ev) != `{"op":5,"d":{"speaking":0,"delay":0,"ssrc":110},"seq":10}` {
		t.Errorf("event = %s", ev)
	}
}

func TestCloseActions(t *testing.T) {
	tests := []struct {
		code CloseCode
		want CloseAction
	}{
		{1000, ActionResume}, {1001, ActionResume}, {CloseAbnormal, ActionResume}, {CloseServerCrashed, ActionResume},
		{CloseSessionInvalid, ActionNewSession}, {CloseSessionTimeout, ActionNewSession}, {CloseAuthenticationFailed, ActionNewSession},
		{CloseServerNotFound, ActionBackoff}, {CloseRateLimited, ActionBackoff},
		{CloseDisconnected, ActionStop}, {CloseCallTerminated, ActionStop},
		{CloseUnknownOpcode, ActionClientBug}, {CloseDecodeError, ActionClientBug}, {CloseNotAuthenticated, ActionClientBug},
		{CloseAlreadyAuthenticated, ActionClientBug}, {CloseUnknownProtocol, ActionClientBug}, {CloseUnknownEncryption, ActionClientBug},
		{CloseDAVERequired, ActionClientBug}, {CloseBadRequest, ActionClientBug},
		{4999, ActionNewSession},
	}
	for _, tt := range tests {
		if got := tt.code.Action(); got != tt.want {
			t.Errorf("%v.Action() = %v, want %v", tt.code, got, tt.want)
		}
	}
	if s := CloseSessionInvalid.String(); s != "4006 session no longer valid" {
		t.Errorf("String = %q", s)
	}
	if s := OpHello.String(); s != "Hello" {
		t.Errorf("String = %q", s)
	}
	if s := Opcode(99).String(); s != "Opcode(99)" {
		t.Errorf("String = %q", s)
	}
}

// FuzzDecode runs the voice WS decoder on arbitrary frames, text and binary,
// and decodes every payload type from whatever parses.
func FuzzDecode(f *testing.F) {
	f.Add(false, []byte(`{"op":2,"d":{"ssrc":1,"ip":"127.0.0.1","port":1234,"modes":["aead_aes256_gcm_rtpsize"]},"seq":1}`))
	f.Add(false, []byte(`{"op":4,"d":{"mode":"aead_aes256_gcm_rtpsize","secret_key":[1,2,3],"dave_protocol_version":1}}`))
	f.Add(false, []byte(`{"op":8,"d":{"heartbeat_interval":13750.25}}`))
	f.Add(true, []byte{0, 5, 25, 0x40, 0x41})
	f.Fuzz(func(t *testing.T, binary bool, frame []byte) {
		var m Message
		var err error
		if binary {
			m, err = DecodeBinary(frame)
		} else {
			m, err = DecodeText(frame)
		}
		if err != nil {
			return
		}
		if m.Seq < NoSeq {
			t.Fatalf("seq %d", m.Seq)
		}
		for _, v := range []any{&ReadyEvent{}, &HelloEvent{}, &SpeakingEvent{}, &ClientsConnectEvent{}, &ClientDisconnectEvent{}, &HeartbeatACKEvent{}} {
			_ = m.Decode(v)
		}
		var sd SessionDescriptionEvent
		if m.Decode(&sd) == nil {
			if k, err := sd.Key(); err == nil && len(k) != 32 {
				t.Fatalf("key of %d bytes", len(k))
			}
		}
		if !m.Binary {
			if _, err := json.Marshal(m.Data); err != nil {
				t.Fatalf("data not JSON: %v", err)
			}
		}
	})
}
