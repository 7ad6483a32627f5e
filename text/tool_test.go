package text

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseSendArgs(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		want   sendArgs
		reason string // "" = valid
	}{
		{"reply", `{"mode":"reply","target_message_id":"1234567890123456789","text":"hi there"}`,
			sendArgs{sendModeReply, "1234567890123456789", "hi there"}, ""},
		{"broadcast null", `{"mode":"broadcast","target_message_id":null,"text":"hello all"}`,
			sendArgs{sendModeBroadcast, "", "hello all"}, ""},
		{"broadcast missing target", `{"mode":"broadcast","text":"x"}`,
			sendArgs{sendModeBroadcast, "", "x"}, ""},
		{"broadcast with target kept", `{"mode":"broadcast","target_message_id":"42","text":"x"}`,
			sendArgs{sendModeBroadcast, "42", "x"}, ""},
		{"mode case and spaces", ` {"mode":" Reply ","target_message_id":" 42 ","text":"  hey  "} `,
			sendArgs{sendModeReply, "42", "hey"}, ""},
		{"numeric target", `{"mode":"reply","target_message_id":1234567890123456789,"text":"x"}`,
			sendArgs{sendModeReply, "1234567890123456789", "x"}, ""},
		{"string null target", `{"mode":"broadcast","target_message_id":"null","text":"x"}`,
			sendArgs{sendModeBroadcast, "", "x"}, ""},
		{"extra fields ignored", `{"mode":"broadcast","target_message_id":null,"text":"x","mood":"happy"}`,
			sendArgs{sendModeBroadcast, "", "x"}, ""},

		{"empty", ``, sendArgs{}, "not_json"},
		{"not object", `["reply"]`, sendArgs{}, "not_json"},
		{"cut off", `{"mode":"reply","target_message_id":"12","text":"hel`, sendArgs{}, "not_json"},
		{"prose", `Sure! {"mode":"reply"}`, sendArgs{}, "not_json"},
		{"bad mode", `{"mode":"whisper","target_message_id":null,"text":"psst"}`,
			sendArgs{Text: "psst"}, "bad_mode"},
		{"mode not string", `{"mode":1,"target_message_id":null,"text":"x"}`,
			sendArgs{Text: "x"}, "bad_mode"},
		{"missing mode", `{"target_message_id":null,"text":"x"}`, sendArgs{Text: "x"}, "bad_mode"},
		{"target object", `{"mode":"reply","target_message_id":{"id":"1"},"text":"x"}`,
			sendArgs{sendModeReply, "", "x"}, "bad_target"},
		{"target bool", `{"mode":"reply","target_message_id":true,"text":"x"}`,
			sendArgs{sendModeReply, "", "x"}, "bad_target"},
		{"target float", `{"mode":"reply","target_message_id":1.5e3,"text":"x"}`,
			sendArgs{sendModeReply, "", "x"}, "bad_target"},
		{"target negative", `{"mode":"reply","target_message_id":-5,"text":"x"}`,
			sendArgs{sendModeReply, "", "x"}, "bad_target"},
		{"target with space", `{"mode":"reply","target_message_id":"12 34","text":"x"}`,
			sendArgs{sendModeReply, "", "x"}, "bad_target"},
		{"target too long", `{"mode":"reply","target_message_id":"` + strings.Repeat("9", 65) + `","text":"x"}`,
			sendArgs{sendModeReply, "", "x"}, "bad_target"},
		{"missing text", `{"mode":"broadcast","target_message_id":null}`,
			sendArgs{Mode: sendModeBroadcast}, "missing_text"},
		{"blank text", `{"mode":"reply","target_message_id":"1","text":"   "}`,
			sendArgs{sendModeReply, "1", ""}, "missing_text"},
		{"text not string", `{"mode":"reply","target_message_id":"1","text":["a"]}`,
			sendArgs{sendModeReply, "1", ""}, "missing_text"},
		{"reply without target", `{"mode":"reply","target_message_id":null,"text":"hi"}`,
			sendArgs{sendModeReply, "", "hi"}, "reply_without_target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSendArgs(tt.raw)
			if got != tt.want {
				t.Errorf("args = %+v, want %+v", got, tt.want)
			}
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var tce *toolCallError
			if !errors.As(err, &tce) {
				t.Fatalf("err = %v, want *toolCallError", err)
			}
			if tce.reason != tt.reason {
				t.Errorf("reason = %v, want %v (%v)", tce.reason, tt.reason, err)
			}
		})
	}
}

func FuzzParseSendArgs(f *testing.F) {
	for _, s := range []string{
		`{"mode":"reply","target_message_id":"1234567890123456789","text":"hi"}`,
		`{"mode":"broadcast","target_message_id":null,"text":"hello"}`,
		`{"mode":"reply","target_message_id":12,"text":"x"}`,
		`{"mode":"reply","target_message_id":"\u0000","text":"x"}`,
		`{"mode":"reply","text":"\ud800"}`,
		`{"mode":`, `null`, `{}`, `{"text":1e999}`, "{\"mode\":\"reply\",\"text\":\"\xff\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		args, err := parseSendArgs(raw)
		if err != nil {
			var tce *toolCallError
			if !errors.As(err, &tce) || tce.reason == "" {
				t.Fatalf("error %v is not a classified *toolCallError", err)
			}
			return
		}
		// Invariants of a valid call.
		if args.Mode != sendModeReply && args.Mode != sendModeBroadcast {
			t.Fatalf("valid call with mode %v", args.Mode)
		}
		if args.Text == "" || strings.TrimSpace(args.Text) != args.Text {
			t.Fatalf("valid call with text %q", args.Text)
		}
		if args.Mode == sendModeReply && args.TargetMessageID == "" {
			t.Fatal("reply without target accepted")
		}
		if len(args.TargetMessageID) > maxTargetIDLen || strings.ContainsAny(args.TargetMessageID, " \t\r\n") ||
			!utf8.ValidString(args.TargetMessageID) {
			t.Fatalf("bad target accepted: %q", args.TargetMessageID)
		}
	})
}
