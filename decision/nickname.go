package decision

import (
	"log/slog"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The bot's guild nickname (the name a server's admins gave it) is one more
// name in that guild only, matched like an alias. A nickname is used only
// when it is a name people can address: NicknameName cleans it and says why
// it is not.

// Why a guild nickname is not used as a name (the reason of a bot_nickname
// event with status "ignored").
const (
	NicknameNoWords      = "no_words"        // nothing but punctuation, symbols or emoji once decorations are dropped
	NicknameFewLetters   = "too_few_letters" // fewer than 2 letters in all
	NicknameCommonWord   = "common_word"     // every word is one people say anyway ("ok", "you", "the one", "bot")
	minNicknameLetters   = 2
	maxNicknameNameBytes = 64 // Discord allows 32 characters; a longer one is cut
)

// nicknameCommon are words that are not in the matcher's word lists but
// would still make the bot answer lines that are not meant for it.
var nicknameCommon = [...]string{"bot", "bots", "everyone", "everybody", "someone", "somebody", "anyone", "anybody",
	"guys", "all", "yall", "y'all", "folks", "people", "chat", "here", "there", "server"}

// NicknameName returns the name the bot answers to for a guild nickname
// nick: the nickname without decorations (parts in (), [] or {}, and words
// with no letter or digit such as emoji), and "" with the reason when it is
// no usable name. An empty nick (none set) gives "", "".
//
//	"Jarvis 🤖"      → "Jarvis"
//	"[AI] Jarvis"    → "Jarvis"
//	"ok"             → "", common_word
//	"!!"             → "", no_words
func NicknameName(nick string) (name, reason string) {
	if strings.TrimSpace(nick) == "" {
		return "", ""
	}
	if len(nick) > maxNicknameNameBytes {
		n := maxNicknameNameBytes
		for n > 0 && !utf8.RuneStart(nick[n]) {
			n--
		}
		nick = nick[:n]
	}
	var kept []string
	letters, common := 0, true
	tz := tokenizer{s: stripBrackets(nick)}
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		w := tz.s[tok.start:tok.end]
		for { // quotes, underscores and a possessive, as the matcher trims the words it reads
			t, _ := trimWord(w)
			if t == w {
				break
			}
			w = t
		}
		hasAlnum := false
		for _, r := range w {
			switch {
			case unicode.IsLetter(r):
				letters++
				hasAlnum = true
			case unicode.IsDigit(r):
				hasAlnum = true
			}
		}
		if !hasAlnum {
			continue
		}
		kept = append(kept, w)
		common = common && isCommonNickWord(w)
	}
	switch {
	case len(kept) == 0:
		return "", NicknameNoWords
	case letters < minNicknameLetters:
		return "", NicknameFewLetters
	case common:
		return "", NicknameCommonWord
	}
	return strings.Join(kept, " "), ""
}

func isCommonNickWord(w string) bool {
	if lookupWord(w) != 0 {
		return true
	}
	for _, c := range nicknameCommon {
		if strings.EqualFold(w, c) {
			return true
		}
	}
	return false
}

// stripBrackets drops the parts of s in (), [] or {} (unbalanced openers
// drop the rest): "[AI] Jarvis (he/him)" → " Jarvis ".
func stripBrackets(s string) string {
	if !strings.ContainsAny(s, "([{") {
		return s
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '(', '[', '{':
			depth++
			b.WriteByte(' ')
			continue
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
			b.WriteByte(' ')
			continue
		}
		if depth == 0 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// WithNickname returns a matcher with m's names and aliases plus name (a
// cleaned guild nickname, see NicknameName), which matches like an alias
// and reports NameMatch.Nickname. A name equal to the bot's name or an
// alias adds nothing: it matches as that name. m is not changed.
func (m *NameMatcher) WithNickname(name string) *NameMatcher {
	n := &NameMatcher{}
	if m != nil {
		n.forms = append(make([]nameForm, 0, len(m.forms)+1), m.forms...)
	}
	n.addForm(name, false, true)
	return n
}

// guildName is the name matcher of one guild: the policy's names plus the
// bot's nickname there, when it is in use.
type guildName struct {
	raw   string       // the nickname as Discord has it ("" none)
	name  string       // the name in use ("" none or ignored)
	names *NameMatcher // the policy's matcher, plus name
}

// guildNames caches the matcher of each guild whose turns carried a bot
// nickname, for one policy (a new policy starts a new cache). A guild's
// entry is replaced when its nickname changes; the change is logged once
// (bot_nickname), and an ignored nickname counted once
// (banter_bot_nickname_ignored_total).
type guildNames struct {
	base     *guildName
	on       bool // bot.answerToNickname
	pipeline string
	logger   *slog.Logger
	metrics  *Metrics // nil: not counted
	byGuild  sync.Map // guild ID → *guildName
}

// EventBotNickname is logged when a guild's bot nickname is first seen or
// changes: status in_use (with the name answered to), ignored (with the
// reason) or cleared.
const EventBotNickname = "bot_nickname"

func newGuildNames(names *NameMatcher, on bool, pipeline string, rec Recorder) *guildNames {
	logger := rec.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &guildNames{base: &guildName{names: names}, on: on, pipeline: pipeline, logger: logger, metrics: rec.Metrics}
}

// get returns the matcher for a turn in guild whose bot nickname is nick.
// It allocates only when the guild's nickname changed.
func (g *guildNames) get(guild, nick string) *guildName {
	if !g.on || guild == "" {
		return g.base
	}
	v, ok := g.byGuild.Load(guild)
	if ok && v.(*guildName).raw == nick {
		return v.(*guildName)
	}
	if !ok && nick == "" {
		return g.base // never had one
	}
	gn := &guildName{raw: nick, names: g.base.names}
	name, reason := NicknameName(nick)
	if name != "" {
		gn.name, gn.names = name, g.base.names.WithNickname(name)
	}
	var stored bool
	if ok {
		stored = g.byGuild.CompareAndSwap(guild, v, gn)
	} else {
		_, loaded := g.byGuild.LoadOrStore(guild, gn)
		stored = !loaded
	}
	if stored { // another turn may have raced us to it: log once
		attrs := []any{"pipeline", g.pipeline, "guild_id", guild, "nickname", nick}
		switch {
		case nick == "":
			g.logger.Info(EventBotNickname, append(attrs, "status", "cleared")...)
		case name == "":
			g.metrics.NicknameIgnored(g.pipeline, reason)
			g.logger.Warn(EventBotNickname, append(attrs, "status", "ignored", "reason", reason)...)
		default:
			g.logger.Info(EventBotNickname, append(attrs, "status", "in_use", "name", name)...)
		}
	}
	return gn
}
