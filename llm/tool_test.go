package llm

import (
	"strings"
	"testing"
)

func TestEnumStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{HostedWebSearch.String(), "web_search"},
		{HostedTool(9).String(), "HostedTool(9)"},
		{ToolChoiceAuto.String(), "auto"},
		{ToolChoiceRequired.String(), "required"},
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
