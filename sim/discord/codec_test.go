package discordsim

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDecodeClientPayload(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantOp   Opcode
		wantCode CloseCode // 0: no error
		check    func(t *testing.T, p clientPayload)
	}{
		{"discordgo identify with newline", `{"op":2,"d":{"token":"Bot abc","properties":{"$os":"linux"},"compress":true,"large_threshold":250,"presence":{"status":""},"intents":3243773}}` + "\n", OpIdentify, 0,
			func(t *testing.T, p clientPayload) {
				if p.Identify.Token != "abc" || !p.Identify.Compress || *p.Identify.Intents != 3243773 {
					t.Errorf("%+v", p.Identify)
				}
			}},
		{"discord.js identify", `{"op":2,"d":{"token":"abc","properties":{"os":"linux"},"intents":33409,"compress":false,"shard":[0,1],"presence":{"activities":[],"since":null,"status":"online"}}}`, OpIdentify, 0,
			func(t *testing.T, p clientPayload) {
				if p.Identify.Token != "abc" || len(p.Identify.Shard) != 2 {
					t.Errorf("%+v", p.Identify)
				}
			}},
		{"heartbeat seq", `{"op":1,"d":41}`, OpHeartbeat, 0, func(t *testing.T, p clientPayload) {
			if p.Heartbeat == nil || *p.Heartbeat != 41 {
				t.Errorf("%v", p.Heartbeat)
			}
		}},
		{"heartbeat null", `{"op":1,"d":null}`, OpHeartbeat, 0, func(t *testing.T, p clientPayload) {
			if p.Heartbeat != nil {
				t.Errorf("%v", *p.Heartbeat)
			}
		}},
		{"resume", `{"op":6,"d":{"token":"Bot abc","session_id":"s","seq":3}}`, OpResume, 0, func(t *testing.T, p clientPayload) {
			if *p.Resume != (resumeCommand{"abc", "s", 3}) {
				t.Errorf("%+v", p.Resume)
			}
		}},
		{"voice leave", `{"op":4,"d":{"guild_id":"1","channel_id":null,"self_mute":false,"self_deaf":false}}`, OpVoiceStateUpdate, 0, func(t *testing.T, p clientPayload) {
			if p.Voice.ChannelID != nil || p.Voice.GuildID != "1" {
				t.Errorf("%+v", p.Voice)
			}
		}},
		{"presence ignored", `{"op":3,"d":{"status":"idle"}}`, OpPresenceUpdate, 0, nil},
		{"members", `{"op":8,"d":{"guild_id":["1"],"limit":0}}`, OpRequestGuildMembers, 0, nil},
		{"not json", `hello`, opUnknown, CloseDecodeError, nil},
		{"two values", `{"op":1,"d":1}{"op":1}`, opUnknown, CloseDecodeError, nil},
		{"no op", `{"d":1}`, opUnknown, CloseDecodeError, nil},
		{"unknown op", `{"op":99,"d":null}`, 99, CloseUnknownOpcode, nil},
		{"identify without d", `{"op":2}`, OpIdentify, CloseDecodeError, nil},
		{"identify empty token", `{"op":2,"d":{"token":"  ","intents":1}}`, OpIdentify, CloseAuthenticationFailed, nil},
		{"heartbeat string", `{"op":1,"d":"x"}`, OpHeartbeat, CloseDecodeError, nil},
		{"voice without guild", `{"op":4,"d":{"channel_id":"2"}}`, OpVoiceStateUpdate, CloseDecodeError, nil},
		{"intents as string", `{"op":2,"d":{"token":"a","intents":"1"}}`, OpIdentify, CloseDecodeError, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := decodeClientPayload([]byte(tc.in))
			if p.Op != tc.wantOp {
				t.Errorf("op %v, want %v", p.Op, tc.wantOp)
			}
			var ce *codecError
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantCode != 0 && (!errors.As(err, &ce) || ce.Code != tc.wantCode):
				t.Fatalf("error %v, want close code %d", err, tc.wantCode)
			}
			if tc.check != nil && err == nil {
				tc.check(t, p)
			}
		})
	}
}

func TestCodecErrorAs(t *testing.T) {
	_, err := decodeClientPayload([]byte(`{"op":77}`))
	var ce *codecError
	if !errors.As(err, &ce) || ce.Code != CloseUnknownOpcode || ce.Unwrap() == nil {
		t.Fatalf("errors.As: %v", err)
	}
}

// FuzzDecodeClientPayload feeds untrusted client frames to the decoder: it
// must never panic, must give every error a gateway close code, and what it
// accepts must be internally consistent.
func FuzzDecodeClientPayload(f *testing.F) {
	for _, s := range []string{
		`{"op":2,"d":{"token":"Bot abc","properties":{"$os":"linux"},"compress":true,"intents":3243773}}` + "\n",
		`{"op":2,"d":{"token":"abc","intents":33409,"shard":[0,1]}}`,
		`{"op":1,"d":41}`, `{"op":1,"d":null}`, `{"op":1}`,
		`{"op":6,"d":{"token":"abc","session_id":"s","seq":3}}`,
		`{"op":4,"d":{"guild_id":"1","channel_id":null}}`,
		`{"op":4,"d":{"guild_id":"1","channel_id":"2","self_deaf":true}}`,
		`{"op":8,"d":{"guild_id":"1","query":"","limit":0}}`,
		`{"op":3,"d":{}}`, `{"op":-1}`, `[]`, `null`, ``, `{"op":2,"d":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeClientPayload(data)
		if err != nil {
			var ce *codecError
			if !errors.As(err, &ce) || ce.Code < 4000 || ce.Code > 4014 {
				t.Fatalf("error without a close code: %v", err)
			}
			return
		}
		switch p.Op {
		case OpIdentify:
			if p.Identify == nil || p.Identify.Token == "" {
				t.Fatal("identify accepted without a token")
			}
		case OpResume:
			if p.Resume == nil {
				t.Fatal("resume without body")
			}
		case OpVoiceStateUpdate:
			if p.Voice == nil || p.Voice.GuildID == "" {
				t.Fatal("voice state without guild")
			}
		case OpRequestGuildMembers:
			if p.Members == nil {
				t.Fatal("members request without body")
			}
		case OpHeartbeat, OpPresenceUpdate:
		default:
			t.Fatalf("accepted opcode %v", p.Op)
		}
		if !json.Valid(data) {
			t.Fatal("accepted invalid JSON")
		}
	})
}

func TestEnumStrings(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{OpIdentify.String(), "Identify"},
		{Opcode(99).String(), "Opcode(99)"},
		{CloseAuthenticationFailed.String(), "authentication failed"},
		{CloseCode(4999).String(), "CloseCode(4999)"},
		{ChannelPublicThread.String(), "PUBLIC_THREAD"},
		{MessageReply.String(), "REPLY"},
		{OriginInteraction.String(), "interaction"},
		{GatewayResumed.String(), "resumed"},
		{GatewayEventKind(99).String(), "GatewayEventKind(99)"},
		{CallbackDeferredChannelMessage.String(), "DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE"},
		{InteractionCallbackType(99).String(), "InteractionCallbackType(99)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
