package llm

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseSendMessageArgs(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		want   SendMessageArgs
		reason ToolCallReason // ToolCallReasonUnknown = valid
	}{
		{"reply", `{"mode":"reply","target_message_id":"1234567890123456789","text":"hi there"}`,
			SendMessageArgs{SendModeReply, "1234567890123456789", "hi there"}, 0},
		{"broadcast null", `{"mode":"broadcast","target_message_id":null,"text":"hello all"}`,
			SendMessageArgs{SendModeBroadcast, "", "hello all"}, 0},
		{"broadcast missing target", `{"mode":"broadcast","text":"x"}`,
			SendMessageArgs{SendModeBroadcast, "", "x"}, 0},
		{"broadcast with target kept", `{"mode":"broadcast","target_message_id":"42","text":"x"}`,
			SendMessageArgs{SendModeBroadcast, "42", "x"}, 0},
		{"mode case and spaces", ` {"mode":" Reply ","target_message_id":" 42 ","text":"  hey  "} `,
			SendMessageArgs{SendModeReply, "42", "hey"}, 0},
		{"numeric target", `{"mode":"reply","target_message_id":1234567890123456789,"text":"x"}`,
			SendMessageArgs{SendModeReply, "1234567890123456789", "x"}, 0},
		{"string null target", `{"mode":"broadcast","target_message_id":"null","text":"x"}`,
			SendMessageArgs{SendModeBroadcast, "", "x"}, 0},
		{"extra fields ignored", `{"mode":"broadcast","target_message_id":null,"text":"x","mood":"happy"}`,
			SendMessageArgs{SendModeBroadcast, "", "x"}, 0},

		{"empty", ``, SendMessageArgs{}, ToolCallReasonNotJSON},
		{"not object", `["reply"]`, SendMessageArgs{}, ToolCallReasonNotJSON},
		{"cut off", `{"mode":"reply","target_message_id":"12","text":"hel`, SendMessageArgs{}, ToolCallReasonNotJSON},
		{"prose", `Sure! {"mode":"reply"}`, SendMessageArgs{}, ToolCallReasonNotJSON},
		{"bad mode", `{"mode":"whisper","target_message_id":null,"text":"psst"}`,
			SendMessageArgs{Text: "psst"}, ToolCallReasonBadMode},
		{"mode not string", `{"mode":1,"target_message_id":null,"text":"x"}`,
			SendMessageArgs{Text: "x"}, ToolCallReasonBadMode},
		{"missing mode", `{"target_message_id":null,"text":"x"}`, SendMessageArgs{Text: "x"}, ToolCallReasonBadMode},
		{"target object", `{"mode":"reply","target_message_id":{"id":"1"},"text":"x"}`,
			SendMessageArgs{SendModeReply, "", "x"}, ToolCallReasonBadTarget},
		{"target bool", `{"mode":"reply","target_message_id":true,"text":"x"}`,
			SendMessageArgs{SendModeReply, "", "x"}, ToolCallReasonBadTarget},
		{"target float", `{"mode":"reply","target_message_id":1.5e3,"text":"x"}`,
			SendMessageArgs{SendModeReply, "", "x"}, ToolCallReasonBadTarget},
		{"target negative", `{"mode":"reply","target_message_id":-5,"text":"x"}`,
			SendMessageArgs{SendModeReply, "", "x"}, ToolCallReasonBadTarget},
		{"target with space", `{"mode":"reply","target_message_id":"12 34","text":"x"}`,
			SendMessageArgs{SendModeReply, "", "x"}, ToolCallReasonBadTarget},
		{"target too long", `{"mode":"reply","target_message_id":"` + strings.Repeat("9", 65) + `","text":"x"}`,
			SendMessageArgs{SendModeReply, "", "x"}, ToolCallReasonBadTarget},
		{"missing text", `{"mode":"broadcast","target_message_id":null}`,
			SendMessageArgs{Mode: SendModeBroadcast}, ToolCallReasonMissingText},
		{"blank text", `{"mode":"reply","target_message_id":"1","text":"   "}`,
			SendMessageArgs{SendModeReply, "1", ""}, ToolCallReasonMissingText},
		{"text not string", `{"mode":"reply","target_message_id":"1","text":["a"]}`,
			SendMessageArgs{SendModeReply, "1", ""}, ToolCallReasonMissingText},
		{"reply without target", `{"mode":"reply","target_message_id":null,"text":"hi"}`,
			SendMessageArgs{SendModeReply, "", "hi"}, ToolCallReasonReplyWithoutTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSendMessageArgs(tt.raw)
			if got != tt.want {
				t.Errorf("args = %+v, want %+v", got, tt.want)
			}
			if tt.reason == ToolCallReasonUnknown {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var tce *ToolCallError
			if !errors.As(err, &tce) {
				t.Fatalf("err = %v, want *ToolCallError", err)
			}
			if tce.Reason != tt.reason {
				t.Errorf("reason = %v, want %v (%v)", tce.Reason, tt.reason, err)
			}
		})
	}
}

func TestEnumStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{SendModeReply.String(), "reply"},
		{SendModeBroadcast.String(), "broadcast"},
		{SendModeUnknown.String(), "unknown"},
		{ToolCallReasonReplyWithoutTarget.String(), "reply_without_target"},
		{ToolCallReason(200).String(), "ToolCallReason(200)"},
		{ResultInvalidToolCall.String(), "invalid_tool_call"},
		{OpTranscribe.String(), "transcribe"},
		{Op(99).String(), "Op(99)"},
		{ErrorKindRateLimited.String(), "rate_limited"},
		{ErrorKind(99).String(), "ErrorKind(99)"},
		{APIChatCompletions.String(), "chat_completions"},
		{RoleAssistant.String(), "assistant"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
}

func TestParseAPI(t *testing.T) {
	for in, want := range map[string]API{"": APIResponses, "responses": APIResponses,
		"chat_completions": APIChatCompletions, " Chat_Completions ": APIChatCompletions} {
		got, err := ParseAPI(in)
		if err != nil || got != want {
			t.Errorf("ParseAPI(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseAPI("completions"); err == nil || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("ParseAPI(completions) err = %v, want allowed values listed", err)
	}
}

func FuzzParseSendMessageArgs(f *testing.F) {
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
		args, err := ParseSendMessageArgs(raw)
		if err != nil {
			var tce *ToolCallError
			if !errors.As(err, &tce) || tce.Reason == ToolCallReasonUnknown {
				t.Fatalf("error %v is not a classified *ToolCallError", err)
			}
			return
		}
		// Invariants of a valid call.
		if args.Mode != SendModeReply && args.Mode != SendModeBroadcast {
			t.Fatalf("valid call with mode %v", args.Mode)
		}
		if args.Text == "" || strings.TrimSpace(args.Text) != args.Text {
			t.Fatalf("valid call with text %q", args.Text)
		}
		if args.Mode == SendModeReply && args.TargetMessageID == "" {
			t.Fatal("reply without target accepted")
		}
		if len(args.TargetMessageID) > maxTargetIDLen || strings.ContainsAny(args.TargetMessageID, " \t\r\n") ||
			!utf8.ValidString(args.TargetMessageID) {
			t.Fatalf("bad target accepted: %q", args.TargetMessageID)
		}
	})
}
