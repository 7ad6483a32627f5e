package conform

import (
	"strings"
	"testing"
)

func TestRequest(t *testing.T) {
	d, err := Discord()
	if err != nil {
		t.Fatal(err)
	}
	o, err := OpenAI()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		c                  *Checker
		method, path, body string
		wantErr            string // "" for a conforming request
	}{
		{"message create", d, "POST", "/api/v10/channels/123/messages", `{"content":"hi","message_reference":{"message_id":"456"},"allowed_mentions":{"parse":[]}}`, ""},
		{"message create v9", d, "POST", "/api/v9/channels/123/messages", `{"content":"hi"}`, ""},
		{"message content not a string", d, "POST", "/api/v10/channels/123/messages", `{"content":42}`, "content"},
		{"message content too long", d, "POST", "/api/v10/channels/123/messages", `{"content":"` + strings.Repeat("a", 4001) + `"}`, "content"},
		{"reaction", d, "PUT", "/api/v10/channels/123/messages/456/reactions/👍/@me", ``, ""},
		{"reaction of another user removed", d, "DELETE", "/api/v10/channels/123/messages/456/reactions/👍/789", ``, ""},
		{"message with an attachment entry", d, "POST", "/api/v10/channels/123/messages", `{"content":"look","attachments":[{"id":"0","filename":"cat.png"}]}`, ""},
		{"typing without body", d, "POST", "/api/v10/channels/123/typing", ``, ""},
		{"users @me", d, "GET", "/api/v10/users/@me", ``, ""},
		{"member nick, roles and mute", d, "PATCH", "/api/v10/guilds/1/members/2", `{"nick":"n","roles":["3"],"mute":true}`, ""},
		// Modify Current Member, its own operation (nick, avatar, bio, banner), not Modify Guild Member's.
		{"current member nick", d, "PATCH", "/api/v10/guilds/1/members/@me", `{"nick":"n"}`, ""},
		{"current member nick too long", d, "PATCH", "/api/v10/guilds/1/members/@me", `{"nick":"` + strings.Repeat("n", 33) + `"}`, "nick"},
		{"current member bio too long", d, "PATCH", "/api/v10/guilds/1/members/@me", `{"bio":"` + strings.Repeat("b", 191) + `"}`, "bio"},
		{"unknown route", d, "POST", "/api/v10/channels/123/bogus", `{}`, "not an operation"},
		{"wrong method", d, "PUT", "/api/v10/channels/123/messages", `{}`, "not an operation"},
		{"responses", o, "POST", "/v1/responses", `{"model":"gpt-5-mini","input":"hi","max_output_tokens":100}`, ""},
		// The spec's unions overlap (a user message with parts is both an EasyInputMessage
		// and an InputMessage): read as anyOf, not exactly one.
		{"responses with image parts", o, "POST", "/v1/responses", `{"model":"gpt-5-mini","input":[{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"https://cdn.discordapp.com/a.png","detail":"auto"}]}]}`, ""},
		{"responses input item of no kind", o, "POST", "/v1/responses", `{"model":"gpt-5-mini","input":[{"role":"user","content":[{"type":"input_sound"}]}]}`, "input"},
		{"responses web search", o, "POST", "/v1/responses", `{"model":"gpt-5-mini","input":"news?","tools":[{"type":"web_search"}]}`, ""},
		{"chat", o, "POST", "/v1/chat/completions", `{"model":"gpt-5-nano","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1024}`, ""},
		{"chat bad role", o, "POST", "/v1/chat/completions", `{"model":"gpt-5-nano","messages":[{"role":"robot","content":"hi"}]}`, "messages"},
		{"chat without messages", o, "POST", "/v1/chat/completions", `{"model":"gpt-5-nano"}`, "messages"},
		{"speech", o, "POST", "/v1/audio/speech", `{"model":"gpt-4o-mini-tts","input":"hi","voice":"alloy","response_format":"pcm"}`, ""},
		{"speech bad format", o, "POST", "/v1/audio/speech", `{"model":"gpt-4o-mini-tts","input":"hi","voice":"alloy","response_format":"ogg"}`, "response_format"},
		{"transcription multipart", o, "POST", "/v1/audio/transcriptions", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			err := tt.c.Request(tt.method, tt.path, body)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("conforming request refused: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("violation accepted")
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %v lacks %q", err, tt.wantErr)
			}
		})
	}
}

func TestRealtimeClientEvent(t *testing.T) {
	o, err := OpenAI()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, raw string
		ok        bool
	}{
		{"append", `{"type":"input_audio_buffer.append","audio":"AAAA"}`, true},
		{"response create", `{"type":"response.create"}`, true},
		{"unknown type", `{"type":"input_audio_buffer.explode"}`, false},
		{"append without audio", `{"type":"input_audio_buffer.append"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := o.RealtimeClientEvent([]byte(tt.raw))
			if (err == nil) != tt.ok {
				t.Errorf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
