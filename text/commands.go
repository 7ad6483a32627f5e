package text

import (
	"strings"

	"github.com/banterbot/banter/config"
)

// prefixCommand is "!banter topic" or "!banter(Persona) topic" (prefix and name from config).
type prefixCommand struct {
	persona string // requested persona, as typed ("" for the default)
	topic   string
}

// parsePrefixCommand recognises a prefix command at the start of content, or returns nil.
func parsePrefixCommand(cfg *config.Config, content string) *prefixCommand {
	rest, ok := strings.CutPrefix(strings.TrimSpace(content), cfg.Bot.CommandPrefix)
	if !ok {
		return nil
	}
	name := cfg.Bot.Name
	if len(rest) < len(name) || !strings.EqualFold(rest[:len(name)], name) {
		return nil
	}
	rest = rest[len(name):]
	cmd := &prefixCommand{}
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return nil
		}
		cmd.persona = strings.TrimSpace(rest[1:end])
		rest = rest[end+1:]
	} else if rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' {
		return nil // "!banters" is not the command
	}
	cmd.topic = strings.TrimSpace(rest)
	return cmd
}

// resolvePersona finds a configured persona by name, case-insensitively.
func resolvePersona(cfg *config.Config, name string) (string, bool) {
	if name == "" {
		return cfg.Bot.Persona, true
	}
	for n := range cfg.Bot.Personas {
		if strings.EqualFold(n, name) {
			return n, true
		}
	}
	return "", false
}
