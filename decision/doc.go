// Package decision is banter's decision engine: one two-stage policy that
// decides, for text and voice alike, whether the bot speaks, and says why.
//
// Stage A (admission) runs before the reply model. TextEngine and
// VoiceEngine evaluate a turn (TextTurn, VoiceTurn) against a policy
// (TextPolicy, VoicePolicy) and return a Decision: outcome, Reason (a
// stable code such as "direct_address_fast_path"), addressing Signal
// ("direct", "name_exact", "name_alias", "name_nickname", "llm_direct_address",
// "llm_decides"), confidence, whether the reply is forced, and the
// classifier's model and raw answer when one was asked. Admit is the
// deterministic part: a pure function of the turn, no I/O, no allocation.
// Decide adds the optional classifiers, which come in through the
// Classifier interface (the engine builds the prompts, parses YES/NO or a
// confidence, bounds attempts and timeouts and fails closed), and records
// the decision as a structured log event and in Metrics.
//
// Stage B (ParseReply, ReplyDecision, StreamFilter) reads the model's
// answer: "[SKIP]", a trailing "[SKIP]", a structured {"skip":true} or an
// empty reply skip the turn, and no sentinel ever reaches Discord or TTS.
// Guidance, ForceReplyLines, EagernessGuidance and ClassifierBias give the
// pipelines the prompt wording that goes with a decision: eagerness levels
// shape wording, they are not random percentages.
//
// NameMatcher finds the bot's name and aliases: as an address ("hey
// banter, ...", "banter, ...", "..., banter?", "heybanter", "@banter") or
// as a mere mention ("I asked banter"), never inside other words
// ("bantering"); for speech transcripts also speech-recognition variants
// ("hey banner, ...") with a confidence. Names match in any case under
// Unicode simple case folding, also where a letter's other case has another
// length ("STRAẞE" is "Straße"). WithNickname adds the bot's
// guild nickname (cleaned by NicknameName) as one more name; the engines
// keep one such matcher per guild (TextTurn.BotNickname,
// VoiceTurn.BotNickname, with AnswerToNickname).
//
// The package does no I/O of its own and imports nothing of text, voice,
// llm or discord; the replay subpackage runs recorded conversations through
// it offline. docs/decision.md explains every rule and reason code.
//
// Performance: go test -bench 'StageA$|Naive' on this 2-core AMD EPYC
// shared with other builds (load average 12.6; cpu-ns/op is the process CPU
// time per decision, which the other tenants disturb less than wall time).
// The mix covers addressed, talking-about, ASR-variant, filler,
// aimed-at-someone-else and long turns; 0 allocations (TestStageAZeroAllocs
// locks that in). The same-run baseline is a naive lower-case-and-split
// name search over the same transcripts (1 allocation):
//
//	BenchmarkTextStageA-2      378.0 ns/op   360.6 cpu-ns/op    0 B/op  0 allocs/op
//	BenchmarkVoiceStageA-2     655.1 ns/op   461.0 cpu-ns/op    0 B/op  0 allocs/op
//	BenchmarkBaselineNaive-2   377.5 ns/op   326.9 cpu-ns/op  174 B/op  1 allocs/op
//
// Stage A stays well under 2 µs per decision (1.0-1.7x the naive baseline);
// at load average 20-30 wall time rose to 1.7-2.4 µs while CPU time stayed
// at 0.42-0.60 µs.
package decision
