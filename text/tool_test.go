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

func TestParseLookup(t *testing.T) {
	tests := []struct {
		name, tool, raw string
		query, id       string
		reason          string // "" = valid
	}{
		{"query", "memory_lookup", `{"query":"  lighthouse   key "}`, "lighthouse key", "", ""},
		{"long query cut", "web_search", `{"query":"` + strings.Repeat("a", 400) + `"}`, strings.Repeat("a", 300) + "…", "", ""},
		{"empty query", "memory_lookup", `{"query":"   "}`, "", "", "bad_query"},
		{"query not a string", "web_search", `{"query":["a"]}`, "", "", "bad_query"},
		{"no query", "web_search", `{}`, "", "", "bad_query"},
		{"not json", "memory_lookup", `{"query":`, "", "", "not_json"},
		{"message id", "image_lookup", `{"message_id":"1234567890123456789"}`, "", "1234567890123456789", ""},
		{"numeric id", "image_lookup", `{"message_id":42}`, "", "42", ""},
		{"null id", "image_lookup", `{"message_id":null}`, "", "", "bad_target"},
		{"id with space", "image_lookup", `{"message_id":"1 2"}`, "", "", "bad_target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseLookup(tt.tool, tt.raw)
			var tce *toolCallError
			switch {
			case tt.reason == "" && c.err != nil:
				t.Fatalf("unexpected error %v", c.err)
			case tt.reason != "" && (!errors.As(c.err, &tce) || tce.reason != tt.reason):
				t.Fatalf("err = %v, want reason %s", c.err, tt.reason)
			}
			if c.query != tt.query || c.messageID != tt.id {
				t.Errorf("query %q id %q, want %q %q", c.query, c.messageID, tt.query, tt.id)
			}
		})
	}
}

// FuzzParseLookup: whatever arguments the model sends a lookup, the parser returns a usable
// call (a bounded, non-empty, single-spaced query, or a message id of the right shape) or a
// classified error.
func FuzzParseLookup(f *testing.F) {
	for _, s := range []string{`{"query":"pizza place"}`, `{"message_id":"123"}`, `{"message_id":12}`, `{"query":"\u0000"}`,
		`{"query":"a\tb\nc"}`, `{"query":1e999}`, `{"message_id":"\ud800"}`, `[]`, `null`, `{"query":"` + strings.Repeat("é", 400) + `"}`} {
		f.Add("memory_lookup", s)
		f.Add("image_lookup", s)
	}
	f.Fuzz(func(t *testing.T, tool, raw string) {
		c := parseLookup(tool, raw)
		if c.err != nil {
			var tce *toolCallError
			if !errors.As(c.err, &tce) || tce.reason == "" {
				t.Fatalf("error %v is not a classified *toolCallError", c.err)
			}
			return
		}
		if tool == imageLookupName {
			if c.messageID == "" || len(c.messageID) > maxTargetIDLen || strings.ContainsAny(c.messageID, " \t\r\n") {
				t.Fatalf("bad message id accepted: %q", c.messageID)
			}
			return
		}
		if c.query == "" || utf8.RuneCountInString(c.query) > maxQueryLen+1 || strings.Join(strings.Fields(c.query), " ") != c.query {
			t.Fatalf("bad query accepted: %q", c.query)
		}
	})
}
