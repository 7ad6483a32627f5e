// Package config is banter's configuration: the YAML schema, its built-in defaults, the
// environment overlay for secrets, validation with field paths, and live reload.
//
// One YAML file configures the bot. It is found through -config, then BANTER_CONFIG, then
// ./banter.yaml when present; without any, the built-in defaults apply. Secrets never live in
// the file: DISCORD_TOKEN, OPENAI_API_KEY and OPENAI_BASE_URL come from the environment.
//
// docs/config.md is the reference for every key; banter.example.yaml shows them all.
package config

import (
	"slices"
	"time"
)

// Config is the whole configuration. The zero value is not useful: start from Default or Load.
type Config struct {
	Bot         Bot         `yaml:"bot"`
	Discord     Discord     `yaml:"discord"`
	Permissions Permissions `yaml:"permissions"`
	Activity    Activity    `yaml:"activity"`
	Context     Context     `yaml:"context"`
	Text        Text        `yaml:"text"`
	// Providers are named OpenAI-compatible endpoints that model slots can use (provider:).
	Providers        map[string]Provider `yaml:"providers"`
	LLM              LLM                 `yaml:"llm"`
	ReplyFollowupLLM ReplyFollowupLLM    `yaml:"replyFollowupLlm"`
	Lookups          Lookups             `yaml:"lookups"`
	MemoryLLM        MemoryLLM           `yaml:"memoryLlm"`
	Memory           Memory              `yaml:"memory"`
	Embeddings       Embeddings          `yaml:"embeddings"`
	Images           Images              `yaml:"images"`
	Voice            Voice               `yaml:"voice"`
	Safety           Safety              `yaml:"safety"`
	Metrics          Metrics             `yaml:"metrics"`
	Store            Store               `yaml:"store"`
	Log              Log                 `yaml:"log"`
	// Prices are what each model costs, by model name: the shipped table (DefaultPrices)
	// with the file's models replacing or adding theirs. docs/cost.md.
	Prices map[string]Price `yaml:"prices"`
	// Budget is the daily spending budgets (caps, cheaper models, quiet mode). docs/cost.md.
	Budget Budget `yaml:"budget"`

	// Secrets come from the environment only and are never printed.
	Secrets Secrets `yaml:"-" json:"-"`
}

// Bot is who the bot is: its name, the names it also answers to, and its personas.
type Bot struct {
	// Name is the bot's name as people address it ("hey banter").
	Name string `yaml:"name"`
	// Aliases are other names that address the bot.
	Aliases []string `yaml:"aliases"`
	// AnswerToNickname: the bot's nickname in a guild (set by the server's admins) is one more
	// name in that guild, matched like an alias and named in the persona prompt (default true).
	AnswerToNickname bool `yaml:"answerToNickname"`
	// Persona names the default persona, a key of Personas.
	Persona string `yaml:"persona"`
	// Personas are the characters the bot can play, by name.
	Personas map[string]Persona `yaml:"personas"`
	// CommandPrefix starts text commands such as "!banter(Persona) topic".
	CommandPrefix string `yaml:"commandPrefix"`
}

// Persona is one character the bot can play.
type Persona struct {
	// Prompt is the system prompt that sets the character.
	Prompt string `yaml:"prompt"`
	// Description is a one-line summary shown by /persona.
	Description string `yaml:"description"`
}

// Discord holds where and how the bot reaches Discord.
type Discord struct {
	// APIURL is the base URL of Discord's HTTP API host. Point it at the simulator for local runs.
	APIURL string `yaml:"apiUrl"`
	// VoiceCAFile is a PEM file of extra certificate authorities trusted for the voice WebSocket
	// (the simulator's CA); empty uses the system roots only.
	VoiceCAFile string `yaml:"voiceCaFile"`
	// RegisterSlashCommands registers /persona, /join and /leave at start.
	RegisterSlashCommands bool `yaml:"registerSlashCommands"`
	// ShutdownTimeoutSeconds bounds how long in-flight work may finish after SIGINT/SIGTERM.
	ShutdownTimeoutSeconds int `yaml:"shutdownTimeoutSeconds"`
	// SendAttemptTimeoutSeconds bounds one attempt of a message create: an attempt without an
	// answer by then (a request that hung or never reached Discord) is retried with the same
	// nonce; a create gives up after three times this in all.
	SendAttemptTimeoutSeconds float64 `yaml:"sendAttemptTimeoutSeconds"`
	// Shards is the bot's total shard count: "auto" (Discord's recommendation from
	// GET /gateway/bot) or a number. Every process of one bot must use the same count.
	Shards string `yaml:"shards"`
	// ShardIDs are the shards this process runs ("0-3", "0,2", "" for every shard, or the
	// share given by ProcessCount and ProcessIndex); BANTER_SHARD_IDS overrides it.
	ShardIDs string `yaml:"shardIds"`
	// ProcessCount and ProcessIndex split the shards over several processes when ShardIDs is
	// empty: process i runs the shards s with s % ProcessCount == i. BANTER_PROCESS_INDEX
	// overrides ProcessIndex (a StatefulSet's pod index).
	ProcessCount int `yaml:"processCount"`
	ProcessIndex int `yaml:"processIndex"`
}

// Permissions decide where the bot may speak and whom it ignores.
type Permissions struct {
	// AllowInitiativeReplies lets the bot join conversations it was not addressed in.
	AllowInitiativeReplies bool `yaml:"allowInitiativeReplies"`
	// InitiativeChannelIDs are channels where the bot may speak up on its own.
	InitiativeChannelIDs []string `yaml:"initiativeChannelIds"`
	// AllowedChannelIDs limits the bot to these channels (and their threads); empty allows all.
	AllowedChannelIDs []string `yaml:"allowedChannelIds"`
	// BlockedUserIDs are users the bot ignores entirely.
	BlockedUserIDs []string `yaml:"blockedUserIds"`
	// PingRepliedUser lets a reply notify the author of the message it replies to. Model text can
	// never ping @everyone, @here or roles.
	PingRepliedUser bool `yaml:"pingRepliedUser"`
}

// Activity tunes how eager and how busy the bot is in text channels.
type Activity struct {
	// ReplyLevelInitiative is the eagerness (0-100) in initiative channels.
	ReplyLevelInitiative int `yaml:"replyLevelInitiative"`
	// ReplyLevelNonInitiative is the eagerness (0-100) elsewhere.
	ReplyLevelNonInitiative int `yaml:"replyLevelNonInitiative"`
	// ReplyCoalesceWindowSeconds gathers a burst of messages into one reply attempt.
	ReplyCoalesceWindowSeconds float64 `yaml:"replyCoalesceWindowSeconds"`
	// ReplyCoalesceMaxMessages closes a burst early once it has this many messages.
	ReplyCoalesceMaxMessages int `yaml:"replyCoalesceMaxMessages"`
	// MaxPromptsPerHour caps reply attempts (calls to the reply model, its lookups and the
	// follow-up pass included in its attempt) per channel in a sliding hour. Direct-address
	// classifier calls are not counted.
	MaxPromptsPerHour int `yaml:"maxPromptsPerHour"`
	// ExplicitReservePromptsPerHour of that cap is kept for turns that address the bot.
	ExplicitReservePromptsPerHour int `yaml:"explicitReservePromptsPerHour"`
	// PerUserPromptShare (0-1] is the share of MaxPromptsPerHour that the turns of one user may
	// use in a channel (rounded up); 1 turns the per-user limit off.
	PerUserPromptShare float64 `yaml:"perUserPromptShare"`
	// InitiativeReplyShare is the share (0-1) of threaded initiative candidates sent as replies.
	InitiativeReplyShare float64 `yaml:"initiativeReplyShare"`
	// RecentWindowSeconds: after the bot spoke in a channel, follow-ups within this window may be
	// admitted without an address when initiative replies are allowed.
	RecentWindowSeconds int `yaml:"recentWindowSeconds"`
	// QueueCapacity bounds pending reply attempts per channel.
	QueueCapacity int `yaml:"queueCapacity"`
}

// Context shapes what the reply model sees.
type Context struct {
	// ReplyChainDepth is how many messages of a reply chain are walked back.
	ReplyChainDepth int `yaml:"replyChainDepth"`
	// IncludeOwnMessagesInHistory shows the bot's own lines in the history.
	IncludeOwnMessagesInHistory bool `yaml:"includeOwnMessagesInHistory"`
	// HistoryLimit is the most recent messages fetched for context.
	HistoryLimit int `yaml:"historyLimit"`
	// ClusterGapMinutes ends a conversation cluster at a silence longer than this.
	ClusterGapMinutes int `yaml:"clusterGapMinutes"`
	// ClusterLookback is how many messages clustering may walk back.
	ClusterLookback int `yaml:"clusterLookback"`
	// MaxCharsPerMessage truncates each message shown to the model.
	MaxCharsPerMessage int `yaml:"maxCharsPerMessage"`
	// TokenBudget caps the whole context; the oldest lines are dropped first.
	TokenBudget int `yaml:"tokenBudget"`
	// MaxParticipants caps the participants block.
	MaxParticipants int `yaml:"maxParticipants"`
}

// Text tunes how the text pipeline answers.
type Text struct {
	// ForcedReplyOnSkip is what a turn that must be answered (a mention, a reply to the bot, a
	// command, the bot's name) gets when the model answers nothing or [SKIP]: "placeholder"
	// sends ForcedReplyPlaceholder, "silent" sends nothing. A refusal (a safety skip) is
	// never replaced.
	ForcedReplyOnSkip string `yaml:"forcedReplyOnSkip"`
	// ForcedReplyPlaceholder is the short reply sent in that case.
	ForcedReplyPlaceholder string `yaml:"forcedReplyPlaceholder"`
	// TargetedReplies lets the model choose which message of a coalesced burst (or the message
	// being replied to) an addressed reply answers; off, it always answers the trigger.
	TargetedReplies bool `yaml:"targetedReplies"`
	// CatchUpMaxAgeMinutes bounds what a catch-up (at start, after a gateway gap) and the
	// recovery of open turns answer: a missed message older than this is stored and declined
	// (logged), and a channel with no known position is read back this far.
	CatchUpMaxAgeMinutes int `yaml:"catchUpMaxAgeMinutes"`
	// TargetMaxAgeMinutes: a message older than this is never a model-chosen reply target
	// (stated in the reply model's instructions and checked on its answer).
	TargetMaxAgeMinutes int `yaml:"targetMaxAgeMinutes"`
	// QuietHours are per-guild windows in which only direct addresses are answered.
	QuietHours []QuietHours `yaml:"quietHours"`
}

// CatchUpMaxAge is text.catchUpMaxAgeMinutes as a duration.
func (t Text) CatchUpMaxAge() time.Duration {
	return time.Duration(t.CatchUpMaxAgeMinutes) * time.Minute
}

// LLM is the reply model for text and the OpenAI-compatible endpoint.
type LLM struct {
	// Provider names the endpoint of this slot and the default of every other slot; empty is
	// the built-in "openai" provider (baseUrl, api, OPENAI_API_KEY below).
	Provider string `yaml:"provider"`
	// Model generates text replies.
	Model string `yaml:"model"`
	// API is "responses" (OpenAI Responses API) or "chat_completions" for servers that only
	// offer chat completions.
	API string `yaml:"api"`
	// BaseURL of the OpenAI-compatible API; OPENAI_BASE_URL overrides it.
	BaseURL string `yaml:"baseUrl"`
	// TimeoutSeconds bounds one model request.
	TimeoutSeconds int `yaml:"timeoutSeconds"`
	// MaxRetries for 429 and 5xx answers.
	MaxRetries int `yaml:"maxRetries"`
	// RequestsPerMinute is the built-in provider's request budget, shared by every process on
	// one Postgres store (0: none, only the provider's own 429s).
	RequestsPerMinute int `yaml:"requestsPerMinute"`
	// DirectAddressClassifier is the optional cheap model asked whether an ambiguous message
	// addresses the bot.
	DirectAddressClassifier DirectAddressClassifier `yaml:"directAddressClassifier"`
}

// DirectAddressClassifier configures the llm_direct_address signal.
type DirectAddressClassifier struct {
	Enabled bool `yaml:"enabled"`
	// Provider names a providers entry; empty uses llm.provider.
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// Threshold is the confidence (0-1) above which a message counts as addressed.
	Threshold float64 `yaml:"threshold"`
	// ReasoningEffort is sent with each classifier call to a reasoning model: "lowest" (the
	// lowest the model accepts: minimal for gpt-5, gpt-5-mini and gpt-5-nano), "default" (not
	// sent: the API's default, medium), or a value of the API's enum.
	ReasoningEffort string `yaml:"reasoningEffort"`
}

// ReplyFollowupLLM is the follow-up pass of the two-stage reply: with it enabled, the reply
// model may ask for lookups (Lookups), and when it does, this model writes the final reply (or
// [SKIP]) from their results. When the reply model asks for none, its answer is final.
type ReplyFollowupLLM struct {
	// Enabled offers the lookups switched on in Lookups to the reply model.
	Enabled bool `yaml:"enabled"`
	// Provider names a providers entry; empty uses llm.provider.
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
}

// Lookups are what the reply model may look up before answering (with replyFollowupLlm
// enabled); their results feed the follow-up pass. Each is switched, bounded and counted.
type Lookups struct {
	// MaxPerTurn caps the lookups run for one reply; further requests are ignored (logged).
	MaxPerTurn int `yaml:"maxPerTurn"`
	// TimeoutSeconds bounds each lookup; one that times out is reported to the follow-up pass
	// as failed.
	TimeoutSeconds int `yaml:"timeoutSeconds"`
	// MaxResultChars caps each lookup's result as the follow-up pass sees it.
	MaxResultChars int             `yaml:"maxResultChars"`
	WebSearch      WebSearchLookup `yaml:"webSearch"`
	Memory         MemoryLookup    `yaml:"memory"`
	Image          ImageLookup     `yaml:"image"`
}

// WebSearchLookup is web_search: the provider's hosted web search (Responses API only).
type WebSearchLookup struct {
	Enabled bool `yaml:"enabled"`
	// Provider names a providers entry whose api is responses; empty uses llm.provider.
	Provider string `yaml:"provider"`
	// Model runs the search; empty uses llm.model.
	Model string `yaml:"model"`
}

// MemoryLookup is memory_lookup: a full-text search of the messages the bot has stored.
type MemoryLookup struct {
	Enabled bool `yaml:"enabled"`
	// Scope is "channel" (the asker's channel only: the store cannot tell who may read
	// another channel) or "guild" (every stored channel of the guild).
	Scope string `yaml:"scope"`
	// MaxResults caps the messages returned.
	MaxResults int `yaml:"maxResults"`
}

// ImageLookup is image_lookup: a description, by the vision model, of an image posted in the
// channel that is not shown with the conversation (by message id). Needs images.enabled.
type ImageLookup struct {
	Enabled bool `yaml:"enabled"`
	// Provider names a providers entry; empty uses llm.provider.
	Provider string `yaml:"provider"`
	// Model describes the image; empty uses llm.model.
	Model string `yaml:"model"`
}

// Images are the pictures people post (attachments and image embeds) that the reply model is
// shown with the messages of its context.
type Images struct {
	Enabled bool `yaml:"enabled"`
	// Mode is "inline" (banter fetches the image and sends its bytes) or "url" (the provider
	// fetches Discord's URL itself).
	Mode string `yaml:"mode"`
	// MaxPerTurn caps the images shown with one reply's context, newest and the trigger's first.
	MaxPerTurn int `yaml:"maxPerTurn"`
	// MaxBytes skips larger images.
	MaxBytes int `yaml:"maxBytes"`
	// FetchTimeoutSeconds bounds each download (inline mode, image lookups).
	FetchTimeoutSeconds int `yaml:"fetchTimeoutSeconds"`
	// ExtraHosts may be fetched from besides Discord's CDN and media proxy (host or host:port;
	// discord.apiUrl's host is trusted too when it is not Discord's, e.g. the simulator).
	ExtraHosts []string `yaml:"extraHosts"`
	// VoiceChatMinutes, when above 0, shows a voice turn's model the last image posted in the
	// voice channel's text chat within this many minutes.
	VoiceChatMinutes int `yaml:"voiceChatMinutes"`
}

// Voice configures voice channels.
type Voice struct {
	// Enabled allows the bot to join voice channels.
	Enabled bool `yaml:"enabled"`
	// Mode is "stt_pipeline" (transcribe, generate, speak) or "realtime" (a realtime speech model).
	Mode string `yaml:"mode"`
	// RealtimeReplyStrategy is "brain" (local generation with [SKIP]) or "native" (the realtime
	// model answers admitted turns itself).
	RealtimeReplyStrategy string `yaml:"realtimeReplyStrategy"`
	// ReplyEagerness (0-100) is how readily the bot answers turns not addressed to it; 0 answers
	// only direct addresses.
	ReplyEagerness int `yaml:"replyEagerness"`
	// AutoJoin lists voice channels joined at start.
	AutoJoin []VoiceChannelRef `yaml:"autoJoin"`
	// LogChannelID, when set, receives a text log of what was said in voice.
	LogChannelID string `yaml:"logChannelId"`
	// InactivityLeaveSeconds: leave when alone this long.
	InactivityLeaveSeconds int `yaml:"inactivityLeaveSeconds"`
	// MaxSessionMinutes: leave after this long in any case.
	MaxSessionMinutes int `yaml:"maxSessionMinutes"`
	// FocusedSpeakerWindowSeconds: the speaker the bot is talking with may follow up without an
	// address within this window.
	FocusedSpeakerWindowSeconds int `yaml:"focusedSpeakerWindowSeconds"`
	// RecentReplyWindowSeconds: a continuation within this window after the bot spoke to a
	// speaker is admitted.
	RecentReplyWindowSeconds int `yaml:"recentReplyWindowSeconds"`
	// JoinGreetingWindowSeconds favours a short greeting right after joining; 0 disables it.
	JoinGreetingWindowSeconds int              `yaml:"joinGreetingWindowSeconds"`
	ReplyDecisionLLM          ReplyDecisionLLM `yaml:"replyDecisionLlm"`
	GenerationLLM             ModelRef         `yaml:"generationLlm"`
	STTPipeline               STTPipeline      `yaml:"sttPipeline"`
	Realtime                  Realtime         `yaml:"realtime"`
	OpenAIRealtime            OpenAIRealtime   `yaml:"openaiRealtime"`
	GeminiRealtime            GeminiRealtime   `yaml:"geminiRealtime"`
	Endpointing               Endpointing      `yaml:"endpointing"`
	Speculation               Speculation      `yaml:"speculation"`
	BargeIn                   BargeIn          `yaml:"bargeIn"`
	// HearBots makes other bots in the voice channel (a music bot, a soundboard) heard like
	// members: decoded, endpointed, able to start turns and to barge in. Off (the default),
	// a bot's packets are dropped undecoded.
	HearBots bool `yaml:"hearBots"`
	// HearBotIDs are bots heard even when HearBots is off, e.g. a text-to-speech bot that
	// speaks for a member who cannot.
	HearBotIDs []string `yaml:"hearBotIds"`
	// SendRealtimePriority, when above 0, paces outgoing voice frames from a SCHED_FIFO thread
	// at this priority (1-99), which keeps send jitter under 2 ms even on a busy machine. It
	// needs CAP_SYS_NICE; without it banter logs once and uses the normal pacer.
	SendRealtimePriority int `yaml:"sendRealtimePriority"`
	// SendSpinMs is how long before each 20 ms frame slot the sender yields instead of sleeping
	// (finer timing for a few sessions); 0 keeps the transport's default (1 ms), -1 turns it
	// off, which is better when one process hosts many voice sessions.
	SendSpinMs int `yaml:"sendSpinMs"`
	// SendClock is how outgoing voice frames are paced: "own" (default) sends every session's
	// frames on one process-wide clock (a 1 ms timer wheel, frames encoded and queued ahead of
	// their slot), each connection on its own UDP socket; "shared" also gives all connections
	// one UDP socket, so a slot's frames leave in one sendmmsg (Discord does not document one
	// socket for several voice connections); "off" paces each connection on its own timer,
	// the only mode SendRealtimePriority and SendSpinMs apply to.
	SendClock string `yaml:"sendClock"`
}

// HearsBot reports whether the bot user userID is heard in voice: with HearBots, or when
// HearBotIDs lists it. (Members who are not bots are always heard.)
func (v *Voice) HearsBot(userID string) bool {
	return v.HearBots || slices.Contains(v.HearBotIDs, userID)
}

// VoiceChannelRef names a voice channel in a guild.
type VoiceChannelRef struct {
	GuildID   string `yaml:"guildId"`
	ChannelID string `yaml:"channelId"`
}

// ReplyDecisionLLM is the YES/NO classifier asked whether to answer a voice turn.
type ReplyDecisionLLM struct {
	Enabled bool `yaml:"enabled"`
	// Provider names a providers entry; empty uses llm.provider.
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// MaxAttempts before failing closed.
	MaxAttempts int `yaml:"maxAttempts"`
	// TimeoutMs per attempt.
	TimeoutMs int `yaml:"timeoutMs"`
	// ReasoningEffort is sent with each classifier call to a reasoning model: "lowest" (the
	// lowest the model accepts: minimal for gpt-5, gpt-5-mini and gpt-5-nano), "default" (not
	// sent: the API's default, medium), or a value of the API's enum.
	ReasoningEffort string               `yaml:"reasoningEffort"`
	Prompts         ReplyDecisionPrompts `yaml:"prompts"`
}

// ReplyDecisionPrompts override the classifier's built-in prompts; empty keeps the built-in.
type ReplyDecisionPrompts struct {
	System string `yaml:"system"`
	User   string `yaml:"user"`
}

// ModelRef names a model and, optionally, its provider (empty uses llm.provider).
type ModelRef struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
}

// STTPipeline names the models of voice.mode stt_pipeline.
type STTPipeline struct {
	// TranscriptionProvider and TTSProvider name providers entries; empty uses llm.provider.
	TranscriptionProvider string `yaml:"transcriptionProvider"`
	TranscriptionModel    string `yaml:"transcriptionModel"`
	TTSProvider           string `yaml:"ttsProvider"`
	// Language is an ISO-639-1 hint for transcription; empty lets the model detect it.
	Language string `yaml:"language"`
	TTSModel string `yaml:"ttsModel"`
	TTSVoice string `yaml:"ttsVoice"`
	// StreamTranscription asks the transcription endpoint for streamed deltas (stream: true)
	// with the models that offer them (gpt-4o-transcribe, gpt-4o-mini-transcribe and their
	// snapshots, gpt-transcribe); other models (whisper-1) are asked without.
	StreamTranscription bool `yaml:"streamTranscription"`
}

// Realtime picks the realtime speech model's API for voice.mode realtime.
type Realtime struct {
	// Provider is "openai" (the OpenAI Realtime API, voice.openaiRealtime) or "gemini" (the
	// Gemini Live API, voice.geminiRealtime).
	Provider string `yaml:"provider"`
}

// GeminiRealtime configures voice.mode realtime on the Gemini Live API.
type GeminiRealtime struct {
	// Provider names a providers entry of kind gemini; empty uses the built-in "gemini"
	// (Google's endpoint, the key in GEMINI_API_KEY or GOOGLE_API_KEY).
	Provider string `yaml:"provider"`
	// Model is a Live model, e.g. gemini-3.8-live ("models/" is added on the wire).
	Model string `yaml:"model"`
	// Voice is a prebuilt voice name (Kore, Puck, …).
	Voice string `yaml:"voice"`
	// ServerTurnDetection lets Gemini's automatic activity detection find turns; off (the
	// default) banter's endpointing leads and marks each turn with activityStart/activityEnd.
	ServerTurnDetection bool `yaml:"serverTurnDetection"`
	// CompressionTriggerTokens turns context window compression on at this many tokens (a
	// sliding window to half of it), so a long session is not cut at the API's session limit;
	// 0 lets the server choose (80 % of the model's context).
	CompressionTriggerTokens int `yaml:"compressionTriggerTokens"`
}

// OpenAIRealtime configures voice.mode realtime on the OpenAI Realtime API.
type OpenAIRealtime struct {
	// Provider names a providers entry; empty uses llm.provider.
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	Voice    string `yaml:"voice"`
	// SessionMaxMinutes rolls the realtime session over before the provider's limit.
	SessionMaxMinutes int `yaml:"sessionMaxMinutes"`
	// ServerTurnDetection lets the provider detect turns; off keeps endpointing local.
	ServerTurnDetection bool `yaml:"serverTurnDetection"`
}

// Endpointing finds the end of each utterance.
type Endpointing struct {
	// SilenceMs of silence ends an utterance.
	SilenceMs int `yaml:"silenceMs"`
	// MinUtteranceMs: shorter sounds are ignored.
	MinUtteranceMs int `yaml:"minUtteranceMs"`
	// MaxUtteranceMs: longer speech is cut into chunks whose transcripts are merged.
	MaxUtteranceMs int `yaml:"maxUtteranceMs"`
	// RoomHoldMs holds a finished turn while another member is still talking (unless it
	// addresses the bot directly).
	RoomHoldMs int `yaml:"roomHoldMs"`
	// CompleteSilenceMs ends a turn whose words so far (transcribed at speculation.pauseMs)
	// are a complete question, sentence or address after this much silence instead of
	// SilenceMs (never more than SilenceMs); 0 keeps SilenceMs.
	CompleteSilenceMs int `yaml:"completeSilenceMs"`
	// TrailingSilenceMs waits this long instead of SilenceMs when the words so far trail off
	// mid-clause ("so I was thinking that…"; never less than SilenceMs); 0 keeps SilenceMs.
	TrailingSilenceMs int `yaml:"trailingSilenceMs"`
	// FalseEndMs is the false-end window: a member whose confirmed speech starts again within
	// this long after banter ended their turn, before the reply to that turn has been heard to
	// its end and before another member's turn came in, was not done. The reply is stopped and
	// dropped from the conversation, and the turn is answered again as a whole, its first part
	// and the new words together. 0 turns it off (the new words are a turn of their own).
	FalseEndMs int `yaml:"falseEndMs"`
	// Detector is the speech detector that judges each frame: "neural" (the default: a small
	// network trained on real speech, noise and music), "pitch" (the earlier hand-made detector:
	// periodicity and a moving pitch; a quarter of the CPU, but it misses unvoiced sounds and
	// some real voices and hears melodic music) or "energy" (level only; the cheapest, defeated
	// by music and noise). Read when a member starts speaking.
	Detector string `yaml:"detector"`
}

// Speculation starts a turn's work before its end is confirmed.
type Speculation struct {
	// Enabled: at a pause of PauseMs the words so far are transcribed and, when the bot is
	// free, Stage A, the generation and the first sentence's speech run ahead with the audio
	// held back; it plays when the end of the turn is confirmed with no speech since the
	// pause, and is discarded (never spoken, never in the conversation) when the speaker goes
	// on. Off: only the transcript is taken at the pause, and only when the adaptive end
	// (endpointing.completeSilenceMs / trailingSilenceMs) needs it.
	Enabled bool `yaml:"enabled"`
	// PauseMs of silence inside an utterance starts the work (100-5000; a pause as long as
	// the end of turn never comes: the turn ends first).
	PauseMs int `yaml:"pauseMs"`
	// Transcription is how the words at each pause are transcribed: "session" (default)
	// opens a realtime transcription session on the transcription provider when the member
	// starts talking and commits each span of speech at its pause, so no audio is sent twice
	// and an utterance costs one session; "upload" sends the utterance so far to the
	// transcription endpoint at every pause. A provider without the Realtime API refuses the
	// session, and banter uploads (for a minute before it tries a session again).
	Transcription string `yaml:"transcription"`
}

// BargeIn decides when the bot stops talking because someone speaks over it.
type BargeIn struct {
	// Policy is "reply_target" (only the person answered), "anyone", or "none".
	Policy string `yaml:"policy"`
	// MinSpeechMs of speech over the bot interrupts it.
	MinSpeechMs int `yaml:"minSpeechMs"`
	// EchoGuardMs after the bot starts speaking during which speech is not an interruption.
	EchoGuardMs int `yaml:"echoGuardMs"`
}

// Safety holds content rules.
type Safety struct {
	// BanWords: messages containing one are kept out of every model context (and not stored);
	// model output has them scrubbed.
	BanWords []string `yaml:"banWords"`
	// FilteredReplyText is sent instead of a model reply that holds a ban word: the reply is
	// never sent with the word starred.
	FilteredReplyText string `yaml:"filteredReplyText"`
}

// Metrics configures the Prometheus endpoint.
type Metrics struct {
	// Listen is the address of /metrics, /healthz and /readyz; empty disables the server.
	Listen string `yaml:"listen"`
}

// Store configures persistence.
type Store struct {
	// Driver is "sqlite" (embedded, one process) or "postgres" (shared by several processes).
	Driver string `yaml:"driver"`
	// DSN is the SQLite file path, or the Postgres connection string (postgres://user@host/db;
	// the password belongs in PGPASSWORD).
	DSN string `yaml:"dsn"`
	// RetentionDays prunes stored messages older than this; 0 keeps them forever.
	RetentionDays int `yaml:"retentionDays"`
	// ForgetRemovedGuildAfterDays is how long banter keeps what it stored about a server after
	// it was removed from it (docs/store.md, "Removed servers"): re-added within that many
	// days, the server keeps everything; after, every row of it is deleted. 0 deletes at
	// once; -1 never (then only the retention periods apply).
	ForgetRemovedGuildAfterDays int `yaml:"forgetRemovedGuildAfterDays"`
	// PGVector is how the postgres driver searches embeddings: "auto" uses the pgvector
	// extension when it can be created, else searches in process; "off" always searches in
	// process.
	PGVector string `yaml:"pgvector"`
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is json or text.
	Format string `yaml:"format"`
}

// Secrets are read from the environment only.
type Secrets struct {
	DiscordToken string
	OpenAIAPIKey string
	// ProviderKeys holds each providers entry's key, read from its apiKeyEnv, by provider name.
	ProviderKeys map[string]string
}
