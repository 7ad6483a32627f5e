package decision

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// VoicePolicy is the voice pipeline's admission policy. The lead maps the
// config (bot.name, bot.aliases, voice.replyEagerness,
// voice.*WindowSeconds, voice.replyDecisionLlm) onto it. Eagerness and
// windows are taken as given (0 disables); DeferRetryAfter and
// DirectAddressConfidence use their defaults when 0.
type VoicePolicy struct {
	BotName string
	Aliases []string
	// AnswerToNickname: the bot's nickname in a guild (VoiceTurn.BotNickname)
	// is one more name there, when it is a usable name (NicknameName)
	// (bot.answerToNickname).
	AnswerToNickname bool
	// ReplyEagerness 0-100 (voice.replyEagerness, default 30): 0 answers
	// only direct addresses and follow-ups; otherwise it biases the
	// classifier and the generation guidance.
	ReplyEagerness int
	// FocusedSpeakerWindow: the speaker the bot is in conversation with
	// is answered without the classifier for this long after the focus was
	// last refreshed (DefaultVoicePolicy: 20s; 0 disables).
	FocusedSpeakerWindow time.Duration
	// RecentReplyWindow: a speaker the bot just replied to is answered
	// without the classifier for this long after the reply (DefaultVoicePolicy: 30s; 0 disables).
	RecentReplyWindow time.Duration
	// DeferRetryAfter is the retry-after of a turn deferred while the bot
	// speaks, when the end of its speech is not known (default 750ms).
	DeferRetryAfter time.Duration
	// DirectAddressConfidence is the name-match confidence from which a
	// turn takes the direct-address fast path (default 0.7).
	DirectAddressConfidence float64
	// Classifier is the YES/NO reply classifier (voice.replyDecisionLlm).
	Classifier ClassifierPolicy
}

// Voice policy defaults: the same as the configuration's (config.Default: voice.replyEagerness,
// voice.focusedSpeakerWindowSeconds, voice.recentReplyWindowSeconds).
const (
	DefaultReplyEagerness          = 30
	DefaultFocusedSpeakerWindow    = 20 * time.Second
	DefaultRecentReplyWindow       = 30 * time.Second
	DefaultDeferRetryAfter         = 750 * time.Millisecond
	DefaultDirectAddressConfidence = 0.7
)

// DefaultVoicePolicy returns the documented defaults for a bot called name,
// with the classifier off.
func DefaultVoicePolicy(name string) VoicePolicy {
	return VoicePolicy{
		BotName:                 name,
		ReplyEagerness:          DefaultReplyEagerness,
		FocusedSpeakerWindow:    DefaultFocusedSpeakerWindow,
		RecentReplyWindow:       DefaultRecentReplyWindow,
		DeferRetryAfter:         DefaultDeferRetryAfter,
		DirectAddressConfidence: DefaultDirectAddressConfidence,
	}
}

// VoiceTurn is one transcribed utterance as voice Stage A sees it.
type VoiceTurn struct {
	ID        string
	ChannelID string
	// GuildID and BotNickname: the guild of the channel and the bot's
	// nickname there ("" none), an extra name with AnswerToNickname.
	GuildID     string
	BotNickname string
	SpeakerID   string
	SpeakerName string
	Transcript  string
	Duration    time.Duration
	// At is when the utterance ended.
	At time.Time
	// Participants are the other members in the channel (not the bot).
	Participants []Participant
	// Timeline is the recent conversation, oldest first, for the
	// classifier.
	Timeline []ContextLine
	// Engagement is the session's state at At.
	Engagement Engagement
}

// Participant is a member of a voice channel.
type Participant struct {
	ID   string
	Name string
}

// Engagement is who the bot is talking with. The voice session owns it and
// updates it with Observe and BotReplied.
type Engagement struct {
	// BotSpeaking: the bot's turn is open (it is speaking or about to).
	BotSpeaking bool
	// BotSpeechEndsAt estimates when the bot stops (zero: unknown).
	BotSpeechEndsAt time.Time
	// FocusedSpeakerID is the speaker the bot is in conversation with,
	// refreshed at FocusedAt.
	FocusedSpeakerID string
	FocusedAt        time.Time
	// LastReplyToID is the speaker the bot last answered, at LastReplyAt
	// (when that reply finished).
	LastReplyToID string
	LastReplyAt   time.Time
}

// Observe updates the focus after an admitted decision on t: a direct
// address or a follow-up focuses (or keeps focus on) the speaker.
func (g *Engagement) Observe(d Decision, t *VoiceTurn) {
	if !d.Allowed() {
		return
	}
	switch d.Reason {
	case ReasonWakePing, ReasonDirectAddressFastPath, ReasonFocusedSpeaker, ReasonRecentReplyFollowup, ReasonLLMYes:
		g.FocusedSpeakerID, g.FocusedAt = t.SpeakerID, t.At
	}
}

// BotReplied records that the bot finished speaking a reply to speakerID.
func (g *Engagement) BotReplied(speakerID string, at time.Time) {
	g.LastReplyToID, g.LastReplyAt = speakerID, at
	if g.FocusedSpeakerID == speakerID {
		g.FocusedAt = at
	}
}

type voiceConfig struct {
	p     VoicePolicy
	names *guildNames
}

// VoiceEngine is voice Stage A. It is safe for concurrent use; SetPolicy
// swaps the policy atomically (hot reload).
type VoiceEngine struct {
	cfg        atomic.Pointer[voiceConfig]
	classifier Classifier
	rec        Recorder
	now        func() time.Time
}

// NewVoiceEngine returns a voice engine with policy p.
func NewVoiceEngine(p VoicePolicy, o EngineOptions) *VoiceEngine {
	e := &VoiceEngine{classifier: o.Classifier, rec: Recorder{Logger: o.Logger, Metrics: o.Metrics}, now: o.Now}
	if e.now == nil {
		e.now = time.Now
	}
	e.SetPolicy(p)
	return e
}

// SetPolicy replaces the policy for decisions that start afterwards.
func (e *VoiceEngine) SetPolicy(p VoicePolicy) {
	p.FocusedSpeakerWindow = max(p.FocusedSpeakerWindow, 0)
	p.RecentReplyWindow = max(p.RecentReplyWindow, 0)
	if p.DeferRetryAfter <= 0 {
		p.DeferRetryAfter = DefaultDeferRetryAfter
	}
	if p.DirectAddressConfidence <= 0 || p.DirectAddressConfidence > 1 {
		p.DirectAddressConfidence = DefaultDirectAddressConfidence
	}
	p.ReplyEagerness = clampLevel(p.ReplyEagerness)
	names := newGuildNames(NewNameMatcher(p.BotName, p.Aliases...), p.AnswerToNickname, PipelineVoice.String(), e.rec)
	e.cfg.Store(&voiceConfig{p: p, names: names})
}

// Policy returns the policy in force (with defaults applied).
func (e *VoiceEngine) Policy() VoicePolicy { return e.cfg.Load().p }

// MatchName runs the voice name matcher of the policy in force on a
// transcript in guild, where the bot's nickname is nick, e.g. to let a
// turn that addresses the bot skip room-aware holding. It does not
// allocate (unless the guild's nickname changed).
func (e *VoiceEngine) MatchName(guild, nick, transcript string) NameMatch {
	return e.cfg.Load().names.get(guild, nick).names.MatchVoice(transcript)
}

// Nickname returns the name the bot answers to in guild, where its
// nickname is nick: the cleaned nickname (NicknameName), or "" when it has
// none, it is not usable or AnswerToNickname is off.
func (e *VoiceEngine) Nickname(guild, nick string) string {
	return e.cfg.Load().names.get(guild, nick).name
}

// fragment describes the words of a transcript.
type fragment struct {
	words     int
	question  bool // a '?' or an opening question word
	allFiller bool // every word is filler ("uh huh", "yeah ok")
	allNoise  bool // every word is a backchannel noise ("uh", "mm", "huh")
}

// describe reads an utterance without the bot's name for the low-signal
// rule. It stops once the utterance is known to be more than a fragment.
func describe(s string) fragment {
	f := fragment{allFiller: true, allNoise: true, question: strings.IndexByte(s, '?') >= 0}
	tz := tokenizer{s: s}
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		w, _ := trimWord(s[tok.start:tok.end])
		flags := lookupWord(w)
		if f.words == 0 && flags&flagQuestion != 0 {
			f.question = true
		}
		f.words++
		f.allFiller = f.allFiller && flags&flagFiller != 0
		f.allNoise = f.allNoise && flags&flagNoise != 0
		if f.words > 3 && !f.allFiller {
			break // more than a fragment, and not filler
		}
	}
	return f
}

// onlyGreetings reports whether every word of s outside the match m is a
// greeting or filler ("hey banter", "banter?", "ok banter"): a wake ping.
func onlyGreetings(s string, m NameMatch) bool {
	tz := tokenizer{s: s}
	for {
		tok, ok := tz.next()
		if !ok {
			return true
		}
		if tok.start >= m.Start && tok.end <= m.End {
			continue
		}
		w, _ := trimWord(s[tok.start:tok.end])
		if lookupWord(w)&(flagGreeting|flagDiscourse|flagFiller) == 0 {
			return false
		}
	}
}

// participantNamed reports whether word is the first name of one of the
// turn's participants (or its speaker). It does not allocate.
func participantNamed(t *VoiceTurn, word string) bool {
	word, _ = trimWord(word)
	if strings.EqualFold(firstWord(t.SpeakerName), word) {
		return true
	}
	for i := range t.Participants {
		if strings.EqualFold(firstWord(t.Participants[i].Name), word) {
			return true
		}
	}
	return false
}

// Admit runs the deterministic part of voice Stage A: no I/O, no
// allocation. In order, first match wins:
//
//	missing_transcript (deny), bot_turn_open (defer, RetryAfter),
//	low_signal_fragment (deny) or direct_address_wake_ping (allow),
//	direct_address_fast_path (allow, force), addressed_to_other_participant
//	(deny), focused_speaker_followup, bot_recent_reply_followup (allow),
//	eagerness_disabled_without_direct_address (deny), then
//	eager_turn_llm_decides (allow, EagerTurn) when the classifier is off,
//	or needs_classifier (pending) for Decide to ask it.
//
// A short fragment from the speaker the bot has just answered ("yes
// please") is not low-signal unless it is only backchannel noise ("uh huh").
func (e *VoiceEngine) Admit(t *VoiceTurn) Decision {
	d, _ := e.admit(e.cfg.Load(), t)
	return d
}

func (e *VoiceEngine) admit(c *voiceConfig, t *VoiceTurn) (Decision, NameMatch) {
	p := &c.p
	d := Decision{Pipeline: PipelineVoice, Stage: StageA, Signal: SignalLLMDecides, Eagerness: p.ReplyEagerness,
		TurnID: t.ID, ChannelID: t.ChannelID, UserID: t.SpeakerID}
	tz := tokenizer{s: t.Transcript}
	if _, ok := tz.next(); !ok {
		d.Outcome, d.Reason = OutcomeDeny, ReasonMissingTranscript
		return d, NameMatch{}
	}
	g := &t.Engagement
	if g.BotSpeaking {
		d.Outcome, d.Reason, d.RetryAfter = OutcomeDefer, ReasonBotTurnOpen, p.DeferRetryAfter
		if left := g.BotSpeechEndsAt.Sub(t.At); !g.BotSpeechEndsAt.IsZero() && left > 0 {
			d.RetryAfter = left
		}
		return d, NameMatch{}
	}
	names := c.names.get(t.GuildID, t.BotNickname).names
	m := names.MatchVoice(t.Transcript)
	if m.Variant && participantNamed(t, t.Transcript[m.Start:m.End]) {
		m = NameMatch{} // "hey Bender" with Bender in the channel: their name, not a look-alike of ours
	}
	if m.Kind == MatchAddress && memberNamed(t.Transcript, m, t.Participants) {
		m = NameMatch{} // "hey banter bob" with Banter Bob in the channel: theirs
	}
	addressed := m.Kind == MatchAddress && m.Confidence >= p.DirectAddressConfidence
	if m.Kind != MatchNone {
		d.Confidence = m.Confidence
	}
	if addressed {
		d.Signal, d.Force, d.DirectAddressed = SignalNameExact, true, true
		switch {
		case m.Nickname:
			d.Signal = SignalNameNickname
		case m.Alias:
			d.Signal = SignalNameAlias
		}
	}
	justAnswered := g.LastReplyToID == t.SpeakerID && !g.LastReplyAt.IsZero() && p.RecentReplyWindow > 0 &&
		t.At.Sub(g.LastReplyAt) <= p.RecentReplyWindow
	switch {
	case addressed && onlyGreetings(t.Transcript, m):
		d.Outcome, d.Reason = OutcomeAllow, ReasonWakePing
		return d, m
	case addressed:
		d.Outcome, d.Reason = OutcomeAllow, ReasonDirectAddressFastPath
		return d, m
	case m.Kind != MatchNone:
		// The name (or a look-alike): never a low-signal fragment.
	default:
		f := describe(t.Transcript)
		switch {
		case f.question:
			// A question: never a low-signal fragment.
		case justAnswered && !f.allNoise && f.words <= 3:
			// A short answer to the bot ("yes please"): not low-signal.
		case f.allFiller || f.words <= 3:
			d.Outcome, d.Reason = OutcomeDeny, ReasonLowSignalFragment
			return d, m
		}
	}
	for i := range t.Participants {
		pt := &t.Participants[i]
		if pt.ID == t.SpeakerID || (pt.Name != "" && names.MatchText(pt.Name).Kind != MatchNone) {
			continue
		}
		if addressesName(t.Transcript, pt.Name) {
			d.Outcome, d.Reason = OutcomeDeny, ReasonAddressedToOther
			return d, m
		}
	}
	switch {
	case g.FocusedSpeakerID != "" && g.FocusedSpeakerID == t.SpeakerID && p.FocusedSpeakerWindow > 0 &&
		t.At.Sub(g.FocusedAt) <= p.FocusedSpeakerWindow:
		d.Outcome, d.Reason = OutcomeAllow, ReasonFocusedSpeaker
	case justAnswered:
		d.Outcome, d.Reason = OutcomeAllow, ReasonRecentReplyFollowup
	case p.ReplyEagerness == 0 && !(m.Kind == MatchAddress && p.Classifier.Enabled):
		// A name (or a look-alike) in an addressing position below the fast
		// path is the borderline: it still goes to the classifier.
		d.Outcome, d.Reason = OutcomeDeny, ReasonEagernessDisabled
	case !p.Classifier.Enabled:
		d.Outcome, d.Reason, d.EagerTurn = OutcomeAllow, ReasonEagerTurn, true
	default:
		d.Outcome, d.Reason = OutcomePending, ReasonNeedsClassifier
	}
	return d, m
}

// Decide runs Admit and, for a turn that needs it, the YES/NO classifier
// with the speaker, transcript, participants, recent timeline, engagement
// and eagerness: llm_yes admits; llm_no, classifier_unclear_answer,
// classifier_error and classifier_timeout deny (fail closed). Without a
// classifier the decision stays pending. The decision is logged
// (voice_turn_addressing, with extra attributes) and counted.
func (e *VoiceEngine) Decide(ctx context.Context, t *VoiceTurn, extra ...slog.Attr) Decision {
	c := e.cfg.Load()
	d, m := e.admit(c, t)
	if d.Outcome == OutcomePending && e.classifier != nil {
		p := c.p.Classifier
		req := ClassifierRequest{Purpose: PurposeReplyDecision, Model: p.Model, MaxTokens: classifierMaxTokens,
			System: ReplyClassifierSystemPrompt(&c.p), User: replyClassifierUserPrompt(&c.p, t, m, c.names.get(t.GuildID, t.BotNickname).name)}
		var ans YesNo
		res := runClassifier(ctx, e.classifier, p, req, e.now, func(raw string) bool {
			ans = ParseYesNo(raw)
			return ans != AnswerUnclear
		})
		d.applyClassifier(p.Model, res)
		switch {
		case !res.ok:
			d.Outcome, d.Reason = OutcomeDeny, res.reason
		case ans == AnswerYes:
			d.Outcome, d.Reason = OutcomeAllow, ReasonLLMYes
		default:
			d.Outcome, d.Reason = OutcomeDeny, ReasonLLMNo
		}
	}
	e.rec.Record(ctx, d, extra...)
	return d
}

// ReplyClassifierSystemPrompt returns the YES/NO classifier's instructions
// for policy p: the configured prompt or the built-in one, plus the bias
// wording for the eagerness level.
func ReplyClassifierSystemPrompt(p *VoicePolicy) string {
	var b strings.Builder
	if p.Classifier.SystemPrompt != "" {
		b.WriteString(p.Classifier.SystemPrompt)
	} else {
		b.WriteString("You are the turn-taking judge for ")
		b.WriteString(nonEmpty(p.BotName, "the assistant"))
		b.WriteString(", a voice assistant in a Discord voice channel with several people. ")
		b.WriteString("Decide whether it should speak in response to the latest utterance. ")
		b.WriteString("Utterances aimed at another person by name are not for it. ")
		b.WriteString("Answer with exactly one word: YES or NO.")
	}
	b.WriteString("\n")
	b.WriteString(ClassifierBias(p.ReplyEagerness))
	return b.String()
}

// nick is the bot's nickname in the turn's guild, when it answers to one.
func replyClassifierUserPrompt(p *VoicePolicy, t *VoiceTurn, m NameMatch, nick string) string {
	name := nonEmpty(p.BotName, "the assistant")
	var parts strings.Builder
	for i, pt := range t.Participants {
		if i > 0 {
			parts.WriteString(", ")
		}
		parts.WriteString(nonEmpty(pt.Name, pt.ID))
	}
	if len(t.Participants) == 0 {
		parts.WriteString(nonEmpty(t.SpeakerName, "one person"))
	}
	var engagement string
	g := &t.Engagement
	switch {
	case g.FocusedSpeakerID != "":
		engagement = name + " was last in conversation with " + speakerName(t, g.FocusedSpeakerID) + ", " + ago(t.At.Sub(g.FocusedAt)) + "."
	case g.LastReplyToID != "":
		engagement = name + " last replied to " + speakerName(t, g.LastReplyToID) + ", " + ago(t.At.Sub(g.LastReplyAt)) + "."
	default:
		engagement = name + " is not in a conversation with anyone."
	}
	var timeline strings.Builder
	for _, l := range lastLines(t.Timeline) {
		writeLine(&timeline, l.Speaker, l.Text, l.Bot, name)
	}
	var cue string
	if m.Kind != MatchNone {
		cue = "the transcript contains \"" + t.Transcript[m.Start:m.End] + "\""
		if m.Variant {
			heard := p.BotName
			if m.Nickname {
				heard = nick
			}
			cue += ", possibly a misheard \"" + heard + "\""
		}
		cue += ", not in an addressing position."
	}
	speaker := nonEmpty(t.SpeakerName, "someone")
	if tmpl := p.Classifier.UserPrompt; tmpl != "" {
		return strings.NewReplacer("{{botName}}", name, "{{speaker}}", speaker, "{{transcript}}", t.Transcript,
			"{{participants}}", parts.String(), "{{engagement}}", engagement, "{{eagerness}}", strconv.Itoa(p.ReplyEagerness),
			"{{timeline}}", timeline.String(), "{{nameCue}}", cue).Replace(tmpl)
	}
	var b strings.Builder
	if nick != "" {
		b.WriteString("In this server " + name + " is also called \"" + nick + "\".\n")
	}
	b.WriteString("Participants: " + parts.String() + "\n")
	b.WriteString("Engagement: " + engagement + "\n")
	b.WriteString("Eagerness: " + strconv.Itoa(p.ReplyEagerness) + "/100\n")
	if timeline.Len() > 0 {
		b.WriteString("Recent conversation, oldest first:\n" + timeline.String())
	}
	b.WriteString("Latest utterance, from " + speaker + ": \"" + t.Transcript + "\"\n")
	if cue != "" {
		b.WriteString("Name cue: " + cue + "\n")
	}
	b.WriteString("Should " + name + " respond? Answer YES or NO.")
	return b.String()
}

func speakerName(t *VoiceTurn, id string) string {
	if id == t.SpeakerID && t.SpeakerName != "" {
		return t.SpeakerName + " (the speaker)"
	}
	for _, pt := range t.Participants {
		if pt.ID == id && pt.Name != "" {
			return pt.Name
		}
	}
	return "someone else"
}

func ago(d time.Duration) string {
	return d.Round(time.Second).String() + " ago"
}
