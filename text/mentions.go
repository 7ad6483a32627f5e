package text

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// mentionNames are the names readableMentions puts in place of Discord's mention markup, by id.
// An id missing from them is left as the markup Discord wrote (nothing is invented).
type mentionNames struct {
	users    map[string]string // user id → the name people see (nick, global name, username)
	roles    map[string]string // role id → role name
	channels map[string]string // channel id → channel name
	// self is the bot's user id and selfRoles its own roles' ids: their mentions stay as
	// written, since the prompt says what they mean ("you").
	self      string
	selfRoles []string
}

// readableMentions rewrites the markup Discord uses in message content into what a person sees
// in the client: <@ID> and <@!ID> as @Name, <@&ID> as @RoleName, <#ID> as #channel-name,
// custom emoji <:name:ID> and <a:name:ID> as :name:, timestamps <t:UNIX> and <t:UNIX:STYLE>
// as a UTC date and time, slash-command mentions </name:ID> as /name. The bot's own mention
// and its own roles' stay as written, as does every id names does not know and anything that
// is not well-formed markup. The content is untrusted: names are cleaned of line breaks and
// control characters, and nothing is read twice.
func readableMentions(content string, names mentionNames) string {
	if !strings.Contains(content, "<") {
		return content
	}
	var b strings.Builder
	b.Grow(len(content))
	for {
		i := strings.IndexByte(content, '<')
		if i < 0 {
			b.WriteString(content)
			return b.String()
		}
		b.WriteString(content[:i])
		content = content[i:]
		end := strings.IndexByte(content, '>')
		if end < 0 {
			b.WriteString(content)
			return b.String()
		}
		// The last '<' before the '>' starts the candidate ("<<@1>"): what precedes it is text.
		if j := strings.LastIndexByte(content[:end], '<'); j > 0 {
			b.WriteString(content[:j])
			content = content[j:]
			end -= j
		}
		if shown, ok := names.readable(content[1:end]); ok {
			b.WriteString(shown)
		} else {
			b.WriteString(content[:end+1])
		}
		content = content[end+1:]
	}
}

// readable is what the markup inner (between '<' and '>') reads as, or false to keep it.
func (n mentionNames) readable(inner string) (string, bool) {
	switch {
	case strings.HasPrefix(inner, "@&"):
		id := inner[2:]
		if !isSnowflake(id) || slices.Contains(n.selfRoles, id) {
			return "", false
		}
		return known("@", n.roles, id)
	case strings.HasPrefix(inner, "@"):
		id := strings.TrimPrefix(inner[1:], "!")
		if !isSnowflake(id) || id == n.self {
			return "", false
		}
		return known("@", n.users, id)
	case strings.HasPrefix(inner, "#"):
		id := inner[1:]
		if !isSnowflake(id) {
			return "", false
		}
		return known("#", n.channels, id)
	case strings.HasPrefix(inner, "t:"):
		return timestamp(inner[2:])
	case strings.HasPrefix(inner, ":"), strings.HasPrefix(inner, "a:"):
		return emoji(inner[strings.IndexByte(inner, ':')+1:])
	case strings.HasPrefix(inner, "/"):
		return command(inner[1:])
	}
	return "", false
}

// known is prefix and the cleaned name of id in names, or false when there is none.
func known(prefix string, names map[string]string, id string) (string, bool) {
	name := cleanName(names[id])
	if name == "" {
		return "", false
	}
	return prefix + name, true
}

// emoji reads "name:ID" as :name:.
func emoji(rest string) (string, bool) {
	name, id, ok := strings.Cut(rest, ":")
	if !ok || !isSnowflake(id) || !isWord(name) {
		return "", false
	}
	return ":" + name + ":", true
}

// command reads "name:ID" (the name may have subcommands: "memory show:ID") as /name.
func command(rest string) (string, bool) {
	name, id, ok := strings.Cut(rest, ":")
	if !ok || !isSnowflake(id) || name == "" || len(name) > 100 {
		return "", false
	}
	for _, w := range strings.Split(name, " ") {
		if !isCommandWord(w) {
			return "", false
		}
	}
	return "/" + name, true
}

// timestamp reads "UNIX" or "UNIX:STYLE" as a UTC date and time: the model reads one form
// whatever the style (relative, date only, …) shows a person.
func timestamp(rest string) (string, bool) {
	secs, style, hasStyle := strings.Cut(rest, ":")
	if hasStyle && (len(style) != 1 || !strings.Contains("tTdDfFR", style)) {
		return "", false
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || secs[0] == '+' || n < 0 || n > maxTimestamp {
		return "", false
	}
	return time.Unix(n, 0).UTC().Format("2006-01-02 15:04 UTC"), true
}

// maxTimestamp is the last second of year 9999, the last Discord's client shows.
const maxTimestamp = 253402300799

// cleanName is name on one line: control characters and line breaks become spaces, runs of
// spaces one, and it is trimmed. A name shown inline must not start a line of its own in the
// prompt (a nickname could otherwise pose as a line of the conversation).
func cleanName(name string) string {
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	}), " ")
}

// isWord reports whether s is a custom emoji's name: 1 to 32 letters, digits or underscores.
func isWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if r != '_' && (r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// isCommandWord reports whether s is one word of a slash command's name: 1 to 32 lower-case
// letters, digits, '-' or '_' (Discord allows letters of other scripts too).
func isCommandWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if r != '-' && r != '_' && !unicode.IsDigit(r) && !(unicode.IsLetter(r) && !unicode.IsUpper(r)) {
			return false
		}
	}
	return true
}
