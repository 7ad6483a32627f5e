package decision

// Reason says why a decision came out the way it did. Text and voice share
// one set of reason codes; the string form of each is stable (it appears in
// logs, metrics labels and replay output) and documented in docs/decision.md.
type Reason uint8

// Reason codes. The zero value is ReasonUnknown.
const (
	ReasonUnknown Reason = iota

	// Text Stage A.
	ReasonOwnMessage        // deny: the bot's own message
	ReasonBotAuthor         // deny: another bot wrote it
	ReasonCommand           // allow, force: an explicit command (prefix or slash command)
	ReasonDirectMention     // allow, force: the message mentions the bot
	ReasonReplyToBot        // allow, force: a reply to one of the bot's messages
	ReasonNameAddress       // allow, force: the bot's name used to address it
	ReasonAliasAddress      // allow, force: a configured alias used to address it
	ReasonNicknameAddress   // allow, force: the bot's guild nickname used to address it
	ReasonLLMDirectAddress  // allow: the direct-address classifier is confident enough
	ReasonInitiativeChannel // allow: initiative replies on, initiative channel
	ReasonRecentBotActivity // allow: initiative replies on, the bot spoke recently here
	ReasonInitiativeDisabled
	ReasonNotAddressed
	ReasonRoomMovedOn // deny at the pre-generation re-check: the turn went stale

	// Shared.
	ReasonEagernessDisabled // deny: eagerness 0 and no direct address
	ReasonNeedsClassifier   // pending: a classifier is required but none was supplied
	ReasonClassifierUnclear // deny: the classifier answered neither YES nor NO
	ReasonClassifierError   // deny: the classifier call failed
	ReasonClassifierTimeout // deny: the classifier call timed out
	ReasonLLMYes            // allow: the classifier said YES
	ReasonLLMNo             // deny: the classifier said NO

	// Voice Stage A, in evaluation order.
	ReasonMissingTranscript
	ReasonBotTurnOpen
	ReasonLowSignalFragment
	ReasonWakePing
	ReasonDirectAddressFastPath
	ReasonAddressedToOther
	ReasonFocusedSpeaker
	ReasonRecentReplyFollowup
	ReasonEagerTurn  // allow: classifier disabled, generation decides ([SKIP])
	ReasonQuietHours // deny (text): the guild's quiet hours, and the turn does not address the bot

	// Stage B.
	ReasonModelReplied
	ReasonLLMSkip
	ReasonEmptyReply

	// Budgets.
	ReasonBudgetCap // deny: the guild's daily spending cap is reached (voice stops speaking)

	// Voice state.
	ReasonServerMuted // deny (voice): a moderator server-muted the bot; a reply would go unheard

	reasonCount // number of reasons; keep last
)

var reasonNames = [reasonCount]string{
	ReasonUnknown:               "unknown",
	ReasonOwnMessage:            "own_message",
	ReasonBotAuthor:             "bot_author",
	ReasonCommand:               "command",
	ReasonDirectMention:         "direct_mention",
	ReasonReplyToBot:            "reply_to_bot",
	ReasonNameAddress:           "name_address",
	ReasonAliasAddress:          "alias_address",
	ReasonNicknameAddress:       "nickname_address",
	ReasonLLMDirectAddress:      "llm_direct_address",
	ReasonInitiativeChannel:     "initiative_channel",
	ReasonRecentBotActivity:     "recent_bot_activity",
	ReasonInitiativeDisabled:    "initiative_disabled",
	ReasonNotAddressed:          "not_addressed",
	ReasonRoomMovedOn:           "room_moved_on",
	ReasonEagernessDisabled:     "eagerness_disabled_without_direct_address",
	ReasonNeedsClassifier:       "needs_classifier",
	ReasonClassifierUnclear:     "classifier_unclear_answer",
	ReasonClassifierError:       "classifier_error",
	ReasonClassifierTimeout:     "classifier_timeout",
	ReasonLLMYes:                "llm_yes",
	ReasonLLMNo:                 "llm_no",
	ReasonMissingTranscript:     "missing_transcript",
	ReasonBotTurnOpen:           "bot_turn_open",
	ReasonLowSignalFragment:     "low_signal_fragment",
	ReasonWakePing:              "direct_address_wake_ping",
	ReasonDirectAddressFastPath: "direct_address_fast_path",
	ReasonAddressedToOther:      "addressed_to_other_participant",
	ReasonFocusedSpeaker:        "focused_speaker_followup",
	ReasonRecentReplyFollowup:   "bot_recent_reply_followup",
	ReasonEagerTurn:             "eager_turn_llm_decides",
	ReasonQuietHours:            "quiet_hours",
	ReasonModelReplied:          "model_replied",
	ReasonLLMSkip:               "llm_skip",
	ReasonEmptyReply:            "empty_reply",
	ReasonBudgetCap:             "budget_cap",
	ReasonServerMuted:           "server_muted",
}

// String returns the stable reason code, e.g. "direct_address_fast_path".
func (r Reason) String() string {
	if r < reasonCount {
		return reasonNames[r]
	}
	return "unknown"
}

// MarshalText implements encoding.TextMarshaler with the reason code.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Reasons lists every defined reason code except ReasonUnknown, in
// declaration order. It returns a fresh slice.
func Reasons() []Reason {
	out := make([]Reason, 0, reasonCount-1)
	for r := Reason(1); r < reasonCount; r++ {
		out = append(out, r)
	}
	return out
}

// ParseReason returns the reason with the given code, or ReasonUnknown and
// false.
func ParseReason(s string) (Reason, bool) {
	for r := Reason(1); r < reasonCount; r++ {
		if reasonNames[r] == s {
			return r, true
		}
	}
	return ReasonUnknown, false
}

// Signal is the addressing signal of a turn, strongest first.
type Signal uint8

// Addressing signals. The zero value is SignalUnknown.
const (
	SignalUnknown          Signal = iota
	SignalDirect                  // mention, or a reply to the bot's own message
	SignalNameExact               // the bot's name used to address it
	SignalNameAlias               // a configured alias used to address it
	SignalNameNickname            // the bot's guild nickname used to address it
	SignalLLMDirectAddress        // the direct-address classifier was confident
	SignalLLMDecides              // no addressing signal: the model decides
)

var signalNames = [...]string{
	SignalUnknown:          "unknown",
	SignalDirect:           "direct",
	SignalNameExact:        "name_exact",
	SignalNameAlias:        "name_alias",
	SignalNameNickname:     "name_nickname",
	SignalLLMDirectAddress: "llm_direct_address",
	SignalLLMDecides:       "llm_decides",
}

// String returns the signal name, e.g. "name_exact".
func (s Signal) String() string {
	if int(s) < len(signalNames) {
		return signalNames[s]
	}
	return "unknown"
}

// MarshalText implements encoding.TextMarshaler with the signal name.
func (s Signal) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// HighCertainty reports whether the signal is certain enough to force a
// reply (direct, name_exact, name_alias, name_nickname).
func (s Signal) HighCertainty() bool {
	return s == SignalDirect || s == SignalNameExact || s == SignalNameAlias || s == SignalNameNickname
}

// Outcome is the verdict of a decision.
type Outcome uint8

// Outcomes. The zero value is OutcomeUnknown.
const (
	OutcomeUnknown Outcome = iota
	OutcomeAllow           // the turn goes on (to generation, or to Discord/TTS in Stage B)
	OutcomeDeny            // the turn stops here
	OutcomeDefer           // voice: try again after RetryAfter (the bot is speaking)
	OutcomePending         // a classifier is needed and none was supplied (replay without -llm)
)

var outcomeNames = [...]string{"unknown", "allow", "deny", "defer", "pending"}

// String returns "allow", "deny", "defer", "pending" or "unknown".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Pipeline says which pipeline a decision belongs to.
type Pipeline uint8

// Pipelines. The zero value is PipelineUnknown.
const (
	PipelineUnknown Pipeline = iota
	PipelineText
	PipelineVoice
)

// String returns "text", "voice" or "unknown".
func (p Pipeline) String() string {
	switch p {
	case PipelineText:
		return "text"
	case PipelineVoice:
		return "voice"
	}
	return "unknown"
}

// Stage says which stage produced a decision.
type Stage uint8

// Stages. The zero value is StageUnknown.
const (
	StageUnknown Stage = iota
	StageA             // admission: may the turn reach the reply model?
	StageB             // the model's own answer: reply or [SKIP]
)

// String returns "A", "B" or "unknown".
func (s Stage) String() string {
	switch s {
	case StageA:
		return "A"
	case StageB:
		return "B"
	}
	return "unknown"
}

// Phase says when a text Stage A decision is taken.
type Phase uint8

// Phases. PhaseEnqueue is the zero value: the usual first evaluation.
const (
	PhaseEnqueue       Phase = iota // when the message arrives
	PhasePreGeneration              // again right before generation
)

// String returns "enqueue" or "pre_generation".
func (p Phase) String() string {
	if p == PhasePreGeneration {
		return "pre_generation"
	}
	return "enqueue"
}
