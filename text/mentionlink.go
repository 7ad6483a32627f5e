package text

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// linkMentions turns the "@Name" the model writes of a person listed in its prompt (people:
// the participants, by their listed name or the preferred name of their /persona that labels
// their lines, and the users mentioned) into Discord's mention, <@ID>, so that the name
// shows as a link to them, as the model's reading of the conversation showed mentions as
// @Name. A name matches exactly as listed (case and spaces included) and whole: after "@" at
// the start or after a character that is not a letter, digit, underscore or '<', and followed by
// none of those; the longest listed name wins ("@Ann Lee" over "@Ann"). A name two people
// share links neither, "everyone" and "here" never link (they are mass mentions, defused when
// sent), nor does an "@" inside a link, nor anything in inline code or a code block (Discord
// shows no mention there).
// Whether a mention pings is allowed_mentions' business, not this: the text pipeline lets
// none ping but the replied-to author's, per permissions.pingRepliedUser.
func linkMentions(text string, people []participant) string {
	names := linkable(people)
	if len(names) == 0 || !strings.Contains(text, "@") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	inURL := false // the word so far holds "://": an "@" in it is part of a link ("https://x.social/@Alice")
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == '`':
			n := codeSpan(text[i:])
			b.WriteString(text[i : i+n])
			i += n
			continue
		case c == '@' && !inURL && (i == 0 || (!isNameRune(lastRune(text[:i])) && text[i-1] != '<')):
			if name, ok := longestName(text[i+1:], names); ok {
				b.WriteString("<@" + names[name] + ">")
				i += 1 + len(name)
				continue
			}
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			inURL = false
		case c == ':' && strings.HasPrefix(text[i:], "://"):
			inURL = true
		}
		b.WriteByte(text[i])
		i++
	}
	return b.String()
}

// linkable maps each listed name that may link to its user's id: names two ids share, and the
// mass mentions' words, are left out.
func linkable(people []participant) map[string]string {
	names := map[string]string{}
	shared := map[string]bool{}
	add := func(name, id string) {
		name = cleanName(name)
		if name == "" || id == "" || strings.EqualFold(name, "everyone") || strings.EqualFold(name, "here") {
			return
		}
		if other, ok := names[name]; ok && other != id {
			shared[name] = true
		}
		names[name] = id
	}
	for _, p := range people {
		add(p.name, p.id)
		if p.persona != nil {
			add(p.persona.PreferredName, p.id) // the name their lines are labelled with
		}
	}
	for name := range shared {
		delete(names, name)
	}
	return names
}

// longestName is the longest of names that rest starts with and that ends where a name may end.
func longestName(rest string, names map[string]string) (string, bool) {
	var candidates []string
	for name := range names {
		if strings.HasPrefix(rest, name) {
			candidates = append(candidates, name)
		}
	}
	sort.Slice(candidates, func(i, j int) bool { return len(candidates[i]) > len(candidates[j]) })
	for _, name := range candidates {
		if next, _ := utf8.DecodeRuneInString(rest[len(name):]); len(rest) == len(name) || !isNameRune(next) {
			return name, true
		}
	}
	return "", false
}

// codeSpan is the length of the code span or block s starts with (a run of backticks to the
// next run of the same length), or of the run itself when nothing closes it.
func codeSpan(s string) int {
	run := len(s) - len(strings.TrimLeft(s, "`"))
	fence := s[:run]
	if end := strings.Index(s[run:], fence); end >= 0 {
		return run + end + run
	}
	return run
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// isNameRune reports whether r continues a word: a letter, a digit or an underscore.
func isNameRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
