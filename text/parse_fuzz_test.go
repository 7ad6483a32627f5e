package text

import (
	"strings"
	"testing"

	"github.com/banterbot/banter/config"
)

func FuzzParsePrefixCommand(f *testing.F) {
	cfg := config.Default()
	cfg.Bot.Name, cfg.Bot.CommandPrefix = "banter", "!"
	f.Add("!banter(pirate) tell me a tale")
	f.Add("!banter what's up")
	f.Add("!banters nope")
	f.Add("!banter(unclosed")
	f.Add("!BANTER")
	f.Fuzz(func(t *testing.T, content string) {
		cmd := parsePrefixCommand(cfg, content)
		if cmd == nil {
			return
		}
		trimmed := strings.TrimSpace(content)
		if !strings.HasPrefix(strings.ToLower(trimmed), "!banter") {
			t.Fatalf("%q parsed as a command %+v", content, cmd)
		}
		if !strings.Contains(content, cmd.topic) || !strings.Contains(content, cmd.persona) {
			t.Fatalf("%q: command %+v holds text not in the message", content, cmd)
		}
	})
}
