package decision

import "strings"

// Eagerness (activity.replyLevelInitiative, activity.replyLevelNonInitiative,
// voice.replyEagerness) is a 0-100 signal of how readily the bot joins
// conversations it was not addressed in. It is not a probability: it picks
// the wording of the generation guidance (EagernessGuidance) and of the
// YES/NO classifier's bias (ClassifierBias). Level 0 is enforced by Stage A
// (eagerness_disabled_without_direct_address).

// EagernessBand is a named range of eagerness levels.
type EagernessBand uint8

// Bands. Levels map to bands as: 0 off, 1-20 reserved, 21-40 low, 41-60
// balanced, 61-80 chatty, 81-100 eager.
const (
	BandOff EagernessBand = iota
	BandReserved
	BandLow
	BandBalanced
	BandChatty
	BandEager
)

var bandNames = [...]string{"off", "reserved", "low", "balanced", "chatty", "eager"}

// String returns the band name, e.g. "balanced".
func (b EagernessBand) String() string {
	if int(b) < len(bandNames) {
		return bandNames[b]
	}
	return "off"
}

// Band returns the band of an eagerness level (clamped to 0-100).
func Band(level int) EagernessBand {
	switch level = clampLevel(level); {
	case level == 0:
		return BandOff
	case level <= 20:
		return BandReserved
	case level <= 40:
		return BandLow
	case level <= 60:
		return BandBalanced
	case level <= 80:
		return BandChatty
	}
	return BandEager
}

var eagernessGuidance = [...]string{
	BandOff: "Only speak when someone addresses you directly. This turn was not addressed to you: answer exactly [SKIP].",
	BandReserved: "You are very reserved. Nobody addressed you; join in only if you have something clearly useful " +
		"that answers a question nobody else can. Otherwise answer exactly [SKIP]. Skipping is the normal choice.",
	BandLow: "You are reserved. Nobody addressed you; speak up only when you can add something specific and " +
		"welcome to the conversation. Otherwise answer exactly [SKIP]; most turns like this should be skipped.",
	BandBalanced: "Nobody addressed you directly. Join in when you have something relevant, helpful or fun to add; " +
		"answer exactly [SKIP] when people are talking among themselves or your reply would be filler.",
	BandChatty: "You are chatty. Nobody addressed you directly, but feel free to react and join in when the topic " +
		"interests you. Answer exactly [SKIP] only when the conversation is clearly not for you.",
	BandEager: "You are very eager to take part. Join in on almost every turn; answer exactly [SKIP] only when a " +
		"reply would interrupt a private exchange between other people or be unsafe.",
}

// EagernessGuidance returns the prompt guidance for an unaddressed turn at
// the given eagerness level (text initiative turns, voice eager turns).
func EagernessGuidance(level int) string { return eagernessGuidance[Band(level)] }

var classifierBias = [...]string{
	BandOff:      "Answer YES only if the speaker is clearly talking to the assistant.",
	BandReserved: "Be very conservative: answer YES only when the speaker is clearly talking to the assistant or asking it something. When in doubt, answer NO.",
	BandLow:      "Be conservative: answer YES when the speaker is talking to the assistant or asks something only it can answer. When in doubt, answer NO.",
	BandBalanced: "Answer YES when the utterance invites a response from the assistant or it could naturally join in; answer NO when people are talking among themselves.",
	BandChatty:   "Lean towards YES: answer YES unless the utterance is aimed at someone else, is private between others, or needs no response.",
	BandEager:    "Answer YES unless the utterance is clearly aimed at someone else by name, is filler, or is private between others.",
}

// ClassifierBias returns the YES/NO classifier's bias wording for the given
// eagerness level.
func ClassifierBias(level int) string { return classifierBias[Band(level)] }

// SkipInstruction tells the model how to decline a turn.
const SkipInstruction = "If you decide not to reply, answer exactly [SKIP] and nothing else."

// ForceReplyLines returns the prompt lines for a force-responded turn (a
// direct, name_exact, name_alias or name_nickname signal, or an explicit command): the
// reply is required and [SKIP] is reserved for safety. who names the
// person (may be empty). For other signals it returns nil.
func ForceReplyLines(d Decision, who string) []string {
	if !d.Force {
		return nil
	}
	who = nonEmpty(who, "The user")
	how := "addressed you directly"
	switch d.Reason {
	case ReasonDirectMention:
		how = "mentioned you"
	case ReasonReplyToBot:
		how = "replied to your message"
	case ReasonNameAddress, ReasonAliasAddress, ReasonNicknameAddress, ReasonDirectAddressFastPath, ReasonWakePing:
		how = "called you by name"
	case ReasonCommand:
		how = "invoked you with a command"
	}
	return []string{
		who + " " + how + ". You must reply to them.",
		"Do not answer [SKIP] unless replying would be unsafe or against your rules; only then answer exactly [SKIP].",
	}
}

// Guidance returns the prompt guidance for an admitted Stage A decision:
// the force lines for force-responded turns, or the eagerness guidance plus
// SkipInstruction for the rest. who names the person who spoke.
func Guidance(d Decision, who string) string {
	if lines := ForceReplyLines(d, who); lines != nil {
		return strings.Join(lines, "\n")
	}
	switch {
	case d.DirectAddressed:
		return "You were probably addressed. Reply if the message is meant for you. " + SkipInstruction
	case d.Reason == ReasonFocusedSpeaker || d.Reason == ReasonRecentReplyFollowup:
		return "The speaker is continuing their conversation with you. Reply unless it is clearly not meant for you. " + SkipInstruction
	case d.Reason == ReasonLLMYes:
		return "You decided this turn deserves a response. Keep it short and natural. " + SkipInstruction
	}
	return EagernessGuidance(d.Eagerness) + "\n" + SkipInstruction
}
