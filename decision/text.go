package decision

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// TextPolicy is the text pipeline's admission policy. The lead maps the
// config (bot.*, permissions.*, activity.*, llm.directAddressClassifier)
// onto it; DefaultTextPolicy documents the defaults. Windows and levels are
// taken as given (0 disables); the stale limits use their defaults when 0.
type TextPolicy struct {
	// BotName and Aliases are matched as addressing names (bot.name,
	// bot.aliases).
	BotName string
	Aliases []string
	// AnswerToNickname: the bot's nickname in a guild (TextTurn.BotNickname)
	// is one more name there, when it is a usable name (NicknameName)
	// (bot.answerToNickname).
	AnswerToNickname bool
	// AllowInitiativeReplies lets the bot join unaddressed conversations
	// (permissions.allowInitiativeReplies).
	AllowInitiativeReplies bool
	// InitiativeChannelIDs are channels where the bot may always take
	// initiative (permissions.initiativeChannelIds).
	InitiativeChannelIDs []string
	// RecentWindow: outside initiative channels, unaddressed turns are
	// considered only this long after the bot last spoke in the channel
	// (activity.recentWindowSeconds; DefaultTextPolicy: 5m; 0 disables).
	RecentWindow time.Duration
	// ReplyLevelInitiative and ReplyLevelNonInitiative are the eagerness
	// levels 0-100 (activity.replyLevel*) for unaddressed turns in
	// initiative channels and in other channels within RecentWindow. They
	// shape the prompt guidance; 0 admits only addressed turns. Defaults
	// (DefaultTextPolicy): 50 and 20.
	ReplyLevelInitiative    int
	ReplyLevelNonInitiative int
	// StaleAfterMessages and StaleAfter: at the pre-generation re-check an
	// unaddressed turn is dropped when this many newer messages arrived
	// (default 10) or it is this old (default 2m). Addressed turns never go
	// stale.
	StaleAfterMessages int
	StaleAfter         time.Duration
	// DirectAddress is the optional cheap classifier for ambiguous turns
	// (the name appears but is not in an addressing position). It is asked
	// only when the initiative rules would deny the turn.
	DirectAddress ClassifierPolicy
}

// Text policy defaults.
const (
	DefaultRecentWindow            = 5 * time.Minute
	DefaultReplyLevelInitiative    = 50
	DefaultReplyLevelNonInitiative = 20
	DefaultStaleAfterMessages      = 10
	DefaultStaleAfter              = 2 * time.Minute
)

// DefaultTextPolicy returns the documented defaults for a bot called name:
// initiative replies off, no initiative channels, eagerness 50/20, no
// direct-address classifier.
func DefaultTextPolicy(name string) TextPolicy {
	return TextPolicy{
		BotName:                 name,
		RecentWindow:            DefaultRecentWindow,
		ReplyLevelInitiative:    DefaultReplyLevelInitiative,
		ReplyLevelNonInitiative: DefaultReplyLevelNonInitiative,
		StaleAfterMessages:      DefaultStaleAfterMessages,
		StaleAfter:              DefaultStaleAfter,
	}
}

// TextTurn is one incoming chat message as Stage A sees it. The text
// pipeline fills it from the gateway event and its store.
type TextTurn struct {
	MessageID string
	ChannelID string
	// GuildID and BotNickname: the guild of the message and the bot's
	// nickname there ("" none), an extra name with AnswerToNickname.
	GuildID     string
	BotNickname string
	AuthorID    string
	AuthorName  string
	Content     string
	// IsSelf marks the bot's own messages, IsBot other bots' messages.
	IsSelf bool
	IsBot  bool
	// MentionsBot: the message mentions the bot (user or its managed role).
	MentionsBot bool
	// ReplyToBot: the message replies to one of the bot's own messages in
	// the same channel.
	ReplyToBot bool
	// Command: an explicit invocation (prefix or slash command); always
	// answered.
	Command bool
	// At is when the message was created; Now when the decision is taken
	// (zero: At).
	At  time.Time
	Now time.Time
	// BotLastSpokeAt is when the bot last posted in this channel (zero:
	// never or unknown).
	BotLastSpokeAt time.Time
	// Phase: PhaseEnqueue, or PhasePreGeneration for the re-check.
	Phase Phase
	// NewerMessages counts messages posted in the channel after this one
	// (used at the pre-generation re-check).
	NewerMessages int
	// QuietHours: the guild's quiet hours (text.quietHours) are in force; only turns that
	// address the bot are admitted.
	QuietHours bool
	// Recent is optional context for the direct-address classifier,
	// oldest first.
	Recent []ContextLine
	// Shown is Content as people read it in the client, for the direct-address
	// classifier's prompt: mentions as @Name, the bot's own as @BotName (empty:
	// the classifier reads Content). Stage A's own rules read Content.
	Shown string
}

// ContextLine is one earlier line of a conversation, for classifier prompts.
type ContextLine struct {
	Speaker string
	Text    string
	Bot     bool // said by the bot
}

// EngineOptions are the collaborators of an engine. All are optional.
type EngineOptions struct {
	// Classifier answers the classifier questions. When nil, a turn that
	// needs one comes back as OutcomePending / needs_classifier (replay
	// without -llm).
	Classifier Classifier
	// Logger and Metrics receive every decision made through Decide.
	Logger  *slog.Logger
	Metrics *Metrics
	// Now is the clock for classifier latency (default time.Now).
	Now func() time.Time
}

type textConfig struct {
	p          TextPolicy
	names      *guildNames
	initiative map[string]struct{}
}

// TextEngine is text Stage A. It is safe for concurrent use; SetPolicy
// swaps the policy atomically (hot reload).
type TextEngine struct {
	cfg        atomic.Pointer[textConfig]
	classifier Classifier
	rec        Recorder
	now        func() time.Time
}

// NewTextEngine returns a text engine with policy p.
func NewTextEngine(p TextPolicy, o EngineOptions) *TextEngine {
	e := &TextEngine{classifier: o.Classifier, rec: Recorder{Logger: o.Logger, Metrics: o.Metrics}, now: o.Now}
	if e.now == nil {
		e.now = time.Now
	}
	e.SetPolicy(p)
	return e
}

// SetPolicy replaces the policy for decisions that start afterwards.
func (e *TextEngine) SetPolicy(p TextPolicy) {
	p.RecentWindow = max(p.RecentWindow, 0)
	if p.StaleAfterMessages <= 0 {
		p.StaleAfterMessages = DefaultStaleAfterMessages
	}
	if p.StaleAfter <= 0 {
		p.StaleAfter = DefaultStaleAfter
	}
	p.ReplyLevelInitiative = clampLevel(p.ReplyLevelInitiative)
	p.ReplyLevelNonInitiative = clampLevel(p.ReplyLevelNonInitiative)
	names := newGuildNames(NewNameMatcher(p.BotName, p.Aliases...), p.AnswerToNickname, PipelineText.String(), e.rec)
	c := &textConfig{p: p, names: names, initiative: make(map[string]struct{}, len(p.InitiativeChannelIDs))}
	for _, id := range p.InitiativeChannelIDs {
		c.initiative[id] = struct{}{}
	}
	e.cfg.Store(c)
}

// Policy returns the policy in force (with defaults applied).
func (e *TextEngine) Policy() TextPolicy { return e.cfg.Load().p }

// MatchName runs the text name matcher of the policy in force on a
// message in guild, where the bot's nickname is nick. It does not allocate
// (unless the guild's nickname changed).
func (e *TextEngine) MatchName(guild, nick, content string) NameMatch {
	return e.cfg.Load().names.get(guild, nick).names.MatchText(content)
}

// Nickname returns the name the bot answers to in guild, where its
// nickname is nick: the cleaned nickname (NicknameName), or "" when it has
// none, it is not usable or AnswerToNickname is off.
func (e *TextEngine) Nickname(guild, nick string) string {
	return e.cfg.Load().names.get(guild, nick).name
}

func clampLevel(v int) int { return min(max(v, 0), 100) }

// Admit runs the deterministic part of text Stage A: no I/O, no
// allocation. In order, first match wins:
//
//	own_message, bot_author (deny); command, direct_mention, reply_to_bot,
//	name_address, alias_address, nickname_address (allow, force); room_moved_on (deny,
//	pre-generation only); then the initiative rules: quiet_hours,
//	initiative_disabled,
//	eagerness_disabled_without_direct_address, initiative_channel,
//	recent_bot_activity, not_addressed. An ambiguous turn (the name is
//	mentioned, not used to address) that the initiative rules would deny
//	comes back pending with needs_classifier when the direct-address
//	classifier is enabled; Decide then asks it.
func (e *TextEngine) Admit(t *TextTurn) Decision {
	d, _ := e.admit(e.cfg.Load(), t)
	return d
}

func (e *TextEngine) admit(c *textConfig, t *TextTurn) (Decision, NameMatch) {
	d := Decision{Pipeline: PipelineText, Stage: StageA, Phase: t.Phase, Signal: SignalLLMDecides,
		TurnID: t.MessageID, ChannelID: t.ChannelID, UserID: t.AuthorID}
	_, initiative := c.initiative[t.ChannelID]
	level := c.p.ReplyLevelNonInitiative
	if initiative {
		level = c.p.ReplyLevelInitiative
	}
	d.Eagerness = level
	deny := func(r Reason) Decision { d.Outcome, d.Reason = OutcomeDeny, r; return d }
	force := func(r Reason, s Signal, conf float64) Decision {
		d.Outcome, d.Reason, d.Signal, d.Confidence = OutcomeAllow, r, s, conf
		d.Force, d.DirectAddressed = true, true
		return d
	}
	switch {
	case t.IsSelf:
		return deny(ReasonOwnMessage), NameMatch{}
	case t.IsBot:
		return deny(ReasonBotAuthor), NameMatch{}
	case t.Command:
		return force(ReasonCommand, SignalDirect, 1), NameMatch{}
	}
	var mentionConf float64
	if t.MentionsBot {
		var addressed bool
		if addressed, mentionConf = MentionAddresses(t.Content); addressed {
			return force(ReasonDirectMention, SignalDirect, 1), NameMatch{}
		}
	}
	gn := c.names.get(t.GuildID, t.BotNickname)
	m := gn.names.MatchText(t.Content)
	if m.Kind == MatchAddress && (memberNamed(t.Content, m, t.Recent) || (m.Variant && speakerNamed(t.Recent, t.Content[m.Start:m.End]))) {
		m = NameMatch{} // "banter bob, gg" with Banter Bob around, "hey baxter" with Baxter: theirs
	}
	switch {
	case t.MentionsBot:
		m = NameMatch{Kind: MatchMention, Confidence: mentionConf} // "why is @banter so slow": about it
	case t.ReplyToBot && !ReplyAimedElsewhere(t.Content, m):
		return force(ReasonReplyToBot, SignalDirect, 1), NameMatch{}
	}
	if m.Kind == MatchAddress {
		switch {
		case m.Nickname:
			return force(ReasonNicknameAddress, SignalNameNickname, m.Confidence), m
		case m.Alias:
			return force(ReasonAliasAddress, SignalNameAlias, m.Confidence), m
		}
		return force(ReasonNameAddress, SignalNameExact, m.Confidence), m
	}
	if m.Kind == MatchMention {
		d.Confidence = m.Confidence // talked about: a weak cue, reported
	}
	now := t.Now
	if now.IsZero() {
		now = t.At
	}
	if t.Phase == PhasePreGeneration && (t.NewerMessages >= c.p.StaleAfterMessages || now.Sub(t.At) > c.p.StaleAfter) {
		return deny(ReasonRoomMovedOn), m
	}
	recent := !t.BotLastSpokeAt.IsZero() && c.p.RecentWindow > 0 && now.Sub(t.BotLastSpokeAt) <= c.p.RecentWindow
	switch {
	case t.QuietHours:
		d.Reason = ReasonQuietHours
	case !c.p.AllowInitiativeReplies:
		d.Reason = ReasonInitiativeDisabled
	case (initiative || recent) && level == 0:
		d.Reason = ReasonEagernessDisabled
	case initiative:
		d.Outcome, d.Reason = OutcomeAllow, ReasonInitiativeChannel
		return d, m
	case recent:
		d.Outcome, d.Reason = OutcomeAllow, ReasonRecentBotActivity
		return d, m
	default:
		d.Reason = ReasonNotAddressed
	}
	d.Outcome = OutcomeDeny
	if m.Kind == MatchMention && c.p.DirectAddress.Enabled && m.Confidence >= confMention {
		d.Outcome, d.Reason = OutcomePending, ReasonNeedsClassifier
	}
	return d, m
}

// Decide runs Admit and, for a pending ambiguous turn, the direct-address
// classifier: a confidence at or above the threshold admits it as
// llm_direct_address (not forced: the model may still [SKIP]); otherwise it
// is denied with llm_no, classifier_unclear_answer, classifier_error or
// classifier_timeout. Without a classifier the decision stays pending. The
// decision is logged (reply_admission, with extra attributes) and counted.
func (e *TextEngine) Decide(ctx context.Context, t *TextTurn, extra ...slog.Attr) Decision {
	c := e.cfg.Load()
	d, m := e.admit(c, t)
	if d.Outcome == OutcomePending && e.classifier != nil {
		p := c.p.DirectAddress
		req := ClassifierRequest{Purpose: PurposeDirectAddress, Model: p.Model, MaxTokens: classifierMaxTokens,
			System: directAddressSystemPrompt(c.p, p, c.names.get(t.GuildID, t.BotNickname).name), User: directAddressUserPrompt(c.p, t, m)}
		var conf float64
		res := runClassifier(ctx, e.classifier, p, req, e.now, func(raw string) bool {
			v, ok := ParseConfidence(raw)
			conf = v
			return ok
		})
		d.applyClassifier(p.Model, res)
		switch {
		case !res.ok:
			d.Outcome, d.Reason = OutcomeDeny, res.reason
		case conf >= p.threshold():
			d.Outcome, d.Reason, d.Signal, d.Confidence = OutcomeAllow, ReasonLLMDirectAddress, SignalLLMDirectAddress, conf
			d.DirectAddressed = true
		default:
			d.Outcome, d.Reason, d.Confidence = OutcomeDeny, ReasonLLMNo, conf
		}
	}
	e.rec.Record(ctx, d, extra...)
	return d
}

func directAddressSystemPrompt(tp TextPolicy, p ClassifierPolicy, nick string) string {
	if p.SystemPrompt != "" {
		return p.SystemPrompt
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You judge whether a Discord chat message is addressed to the assistant named %q", tp.BotName)
	also := tp.Aliases
	if nick != "" {
		also = append(slices.Clip(also), nick)
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, " (also called %s)", strings.Join(also, ", "))
	}
	b.WriteString(": spoken to, asked or told something, as opposed to merely mentioned or talked about. ")
	b.WriteString("Answer with only a number from 0 to 1: your confidence that the message is addressed to the assistant.")
	return b.String()
}

func directAddressUserPrompt(tp TextPolicy, t *TextTurn, m NameMatch) string {
	var recent strings.Builder
	for _, l := range lastLines(t.Recent) {
		writeLine(&recent, l.Speaker, l.Text, l.Bot, tp.BotName)
	}
	author := nonEmpty(t.AuthorName, "someone")
	content := clip(nonEmpty(t.Shown, t.Content), maxJudgedBytes)
	if tmpl := tp.DirectAddress.UserPrompt; tmpl != "" {
		return strings.NewReplacer("{{botName}}", tp.BotName, "{{author}}", author, "{{content}}", content,
			"{{recent}}", recent.String()).Replace(tmpl)
	}
	var b strings.Builder
	if recent.Len() > 0 {
		b.WriteString("Recent messages, oldest first:\n" + recent.String() + "\n")
	}
	fmt.Fprintf(&b, "Message to judge, from %s:\n%s\n", author, content)
	if name := t.Content[m.Start:m.End]; name != "" {
		fmt.Fprintf(&b, "\nThe name appears as %q.\n", name)
	} else if m.Kind == MatchMention && t.MentionsBot {
		fmt.Fprintf(&b, "\nThe name appears as %q.\n", "@"+tp.BotName) // as the client shows the mention
	}
	b.WriteString("Confidence (0 to 1) that the message is addressed to the assistant:")
	return b.String()
}

// Classifier prompts stay small: at most this many context lines, each cut
// to this many bytes.
// The message being judged is cut to maxJudgedBytes.
const (
	maxPromptLines     = 12
	maxPromptLineBytes = 300
	maxJudgedBytes     = 1000
)

// lastLines returns the newest maxPromptLines lines.
func lastLines(ls []ContextLine) []ContextLine {
	if len(ls) > maxPromptLines {
		return ls[len(ls)-maxPromptLines:]
	}
	return ls
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func writeLine(b *strings.Builder, speaker, text string, bot bool, botName string) {
	text = clip(text, maxPromptLineBytes)
	if bot {
		speaker = botName + " (you)"
	}
	fmt.Fprintf(b, "[%s] %s\n", nonEmpty(speaker, "someone"), text)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
