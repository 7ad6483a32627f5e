package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/banterbot/banter/redact"
)

// Allowed values of the enumerated settings.
var (
	// These are read-only tables, never modified.
	voiceModes         = []string{"stt_pipeline", "realtime"}
	realtimeStrategies = []string{"brain", "native"}
	realtimeProviders  = []string{KindOpenAI, KindGemini}
	providerKinds      = []string{KindOpenAI, KindGemini}
	llmAPIs            = []string{"responses", "chat_completions"}
	bargeInPolicies    = []string{"reply_target", "anyone", "none"}
	sendClocks         = []string{"off", "own", "shared"}
	// "" is read as "session".
	speculationTranscriptions = []string{"session", "upload"}
	storeDrivers              = []string{"sqlite", "postgres"}
	logLevels                 = []string{"debug", "info", "warn", "error"}
	logFormats                = []string{"json", "text"}
	forcedReplyModes          = []string{"placeholder", "silent"}
	// reasoningEfforts: "lowest" and "default" (not sent), then the API's ReasoningEffort enum.
	reasoningEfforts = []string{"lowest", "default", "none", "minimal", "low", "medium", "high", "xhigh", "max"}
	memoryScopes     = []string{"channel", "guild"}
	imageModes       = []string{"inline", "url"}
	speechDetectors  = []string{"neural", "pitch", "energy"}
)

// Validate checks every value and returns all problems at once, one per line, each naming the
// field path, the value and what is allowed.
func (c *Config) Validate() error {
	v := &validator{}
	v.validateBot(c)
	v.validateDiscord(c)
	v.validateActivity(c)
	v.validateText(c)
	v.validateLLM(c)
	v.validateVoice(c)
	v.validateOperations(c)
	return v.err()
}

// validateBot checks bot.*.
func (v *validator) validateBot(c *Config) {
	v.nonEmpty("bot.name", c.Bot.Name)
	for i, a := range c.Bot.Aliases {
		v.nonEmpty(fmt.Sprintf("bot.aliases[%d]", i), a)
	}
	if _, ok := c.Bot.Personas[c.Bot.Persona]; !ok {
		v.addf("bot.persona: %q is not one of bot.personas (defined: %s)", c.Bot.Persona, strings.Join(c.PersonaNames(), ", "))
	}
	for name, p := range c.Bot.Personas {
		if strings.TrimSpace(name) == "" {
			v.addf("bot.personas: a persona has an empty name")
		}
		v.nonEmpty("bot.personas."+name+".prompt", p.Prompt)
	}
	if strings.ContainsAny(c.Bot.CommandPrefix, " \t\n") || c.Bot.CommandPrefix == "" {
		v.addf("bot.commandPrefix: %q must be non-empty and contain no spaces (for example \"!\")", c.Bot.CommandPrefix)
	}
}

// validateDiscord checks discord.*.
func (v *validator) validateDiscord(c *Config) {
	v.url("discord.apiUrl", c.Discord.APIURL)
	v.intRange("discord.shutdownTimeoutSeconds", c.Discord.ShutdownTimeoutSeconds, 1, 300)
	v.floatRange("discord.sendAttemptTimeoutSeconds", c.Discord.SendAttemptTimeoutSeconds, 0.1, 120)
	if n, err := strconv.Atoi(c.Discord.Shards); c.Discord.Shards != "auto" && (err != nil || n < 1 || n > 100000) {
		v.addf("discord.shards: %q is not allowed (allowed values: auto, or a shard count from 1 to 100000)", c.Discord.Shards)
	}
	v.intRange("discord.processCount", c.Discord.ProcessCount, 1, 10000)
	v.intRange("discord.processIndex", c.Discord.ProcessIndex, 0, max(c.Discord.ProcessCount-1, 0))
	if c.Discord.ShardIDs != "" && strings.Trim(c.Discord.ShardIDs, "0123456789-, ") != "" {
		v.addf("discord.shardIds: %q is not a list of shard ids and ranges (for example 0-3 or 0,2,5-7)", c.Discord.ShardIDs)
	}
}

// validateActivity checks permissions.*, activity.* and context.*.
func (v *validator) validateActivity(c *Config) {
	v.snowflakes("permissions.initiativeChannelIds", c.Permissions.InitiativeChannelIDs)
	v.snowflakes("permissions.allowedChannelIds", c.Permissions.AllowedChannelIDs)
	v.snowflakes("permissions.blockedUserIds", c.Permissions.BlockedUserIDs)

	a := c.Activity
	v.intRange("activity.replyLevelInitiative", a.ReplyLevelInitiative, 0, 100)
	v.intRange("activity.replyLevelNonInitiative", a.ReplyLevelNonInitiative, 0, 100)
	v.floatRange("activity.replyCoalesceWindowSeconds", a.ReplyCoalesceWindowSeconds, 0, 60)
	v.intRange("activity.replyCoalesceMaxMessages", a.ReplyCoalesceMaxMessages, 1, 100)
	v.intRange("activity.maxPromptsPerHour", a.MaxPromptsPerHour, 1, 100000)
	v.intRange("activity.explicitReservePromptsPerHour", a.ExplicitReservePromptsPerHour, 0, a.MaxPromptsPerHour)
	v.floatRange("activity.perUserPromptShare", a.PerUserPromptShare, 0.01, 1)
	v.floatRange("activity.initiativeReplyShare", a.InitiativeReplyShare, 0, 1)
	v.intRange("activity.recentWindowSeconds", a.RecentWindowSeconds, 0, 86400)
	v.intRange("activity.queueCapacity", a.QueueCapacity, 1, 10000)

	x := c.Context
	v.intRange("context.replyChainDepth", x.ReplyChainDepth, 1, 200)
	v.intRange("context.historyLimit", x.HistoryLimit, 1, 100)
	v.intRange("context.clusterGapMinutes", x.ClusterGapMinutes, 1, 10080)
	v.intRange("context.clusterLookback", x.ClusterLookback, 1, 100)
	v.intRange("context.maxCharsPerMessage", x.MaxCharsPerMessage, 50, 4000)
	v.intRange("context.tokenBudget", x.TokenBudget, 500, 200000)
	v.intRange("context.maxParticipants", x.MaxParticipants, 1, 100)
}

// validateText checks text.*.
func (v *validator) validateText(c *Config) {
	v.enum("text.forcedReplyOnSkip", c.Text.ForcedReplyOnSkip, forcedReplyModes)
	if c.Text.ForcedReplyOnSkip == "placeholder" {
		v.nonEmpty("text.forcedReplyPlaceholder", c.Text.ForcedReplyPlaceholder)
	}
	if n := utf8.RuneCountInString(c.Text.ForcedReplyPlaceholder); n > 2000 {
		v.addf("text.forcedReplyPlaceholder: %d characters is too long (allowed up to 2000, one Discord message)", n)
	}
	v.intRange("text.catchUpMaxAgeMinutes", c.Text.CatchUpMaxAgeMinutes, 1, 10080)
	v.intRange("text.targetMaxAgeMinutes", c.Text.TargetMaxAgeMinutes, 1, 10080)
	v.validateQuietHours(c.Text.QuietHours)
	v.nonEmpty("safety.filteredReplyText", c.Safety.FilteredReplyText)
	if n := utf8.RuneCountInString(c.Safety.FilteredReplyText); n > 2000 {
		v.addf("safety.filteredReplyText: %d characters is too long (allowed up to 2000, one Discord message)", n)
	}
}

// validateLLM checks llm.* and replyFollowupLlm.*.
func (v *validator) validateLLM(c *Config) {
	v.nonEmpty("llm.model", c.LLM.Model)
	v.enum("llm.api", c.LLM.API, llmAPIs)
	v.url("llm.baseUrl", c.LLM.BaseURL)
	v.intRange("llm.timeoutSeconds", c.LLM.TimeoutSeconds, 1, 600)
	v.intRange("llm.maxRetries", c.LLM.MaxRetries, 0, 10)
	v.intRange("llm.requestsPerMinute", c.LLM.RequestsPerMinute, 0, MaxRequestsPerMinute)
	if c.LLM.DirectAddressClassifier.Enabled {
		v.nonEmpty("llm.directAddressClassifier.model", c.LLM.DirectAddressClassifier.Model)
	}
	v.floatRange("llm.directAddressClassifier.threshold", c.LLM.DirectAddressClassifier.Threshold, 0, 1)
	v.enum("llm.directAddressClassifier.reasoningEffort", c.LLM.DirectAddressClassifier.ReasoningEffort, reasoningEfforts)
	if c.ReplyFollowupLLM.Enabled {
		v.nonEmpty("replyFollowupLlm.model", c.ReplyFollowupLLM.Model)
	}
	v.validateLookups(c)
	v.validateMemory(c)
	v.validateEmbeddings(c)
}

// validateLookups checks the lookups and images sections.
func (v *validator) validateLookups(c *Config) {
	l := c.Lookups
	v.intRange("lookups.maxPerTurn", l.MaxPerTurn, 1, 5)
	v.intRange("lookups.timeoutSeconds", l.TimeoutSeconds, 1, 120)
	v.intRange("lookups.maxResultChars", l.MaxResultChars, 200, 20000)
	v.enum("lookups.memory.scope", l.Memory.Scope, memoryScopes)
	v.intRange("lookups.memory.maxResults", l.Memory.MaxResults, 1, 20)
	if c.ReplyFollowupLLM.Enabled && l.WebSearch.Enabled {
		// A provider that speaks chat completions has no hosted web search.
		if p, err := c.Provider(l.WebSearch.Provider); err == nil && p.API == "chat_completions" {
			v.addf("lookups.webSearch.enabled: provider %s speaks chat_completions, which has no hosted web search (use a provider with api: responses in lookups.webSearch.provider, or set enabled: false)", p.Name)
		}
	}
	im := c.Images
	v.enum("images.mode", im.Mode, imageModes)
	v.intRange("images.maxPerTurn", im.MaxPerTurn, 1, 10)
	v.intRange("images.maxBytes", im.MaxBytes, 1024, 20<<20)
	v.intRange("images.fetchTimeoutSeconds", im.FetchTimeoutSeconds, 1, 60)
	v.intRange("images.voiceChatMinutes", im.VoiceChatMinutes, 0, 1440)
	for i, h := range im.ExtraHosts {
		if u, err := url.Parse("http://" + h); h == "" || err != nil || u.Host != h || u.User != nil {
			v.addf("images.extraHosts[%d]: %q is not a host or host:port (for example 127.0.0.1:8080; no scheme or path)", i, h)
		}
	}
}

// validateVoice checks voice.*.
func (v *validator) validateVoice(c *Config) {
	vo := c.Voice
	v.enum("voice.mode", vo.Mode, voiceModes)
	v.enum("voice.realtimeReplyStrategy", vo.RealtimeReplyStrategy, realtimeStrategies)
	v.intRange("voice.replyEagerness", vo.ReplyEagerness, 0, 100)
	for i, ref := range vo.AutoJoin {
		v.snowflake(fmt.Sprintf("voice.autoJoin[%d].guildId", i), ref.GuildID)
		v.snowflake(fmt.Sprintf("voice.autoJoin[%d].channelId", i), ref.ChannelID)
	}
	if vo.LogChannelID != "" {
		v.snowflake("voice.logChannelId", vo.LogChannelID)
	}
	v.intRange("voice.inactivityLeaveSeconds", vo.InactivityLeaveSeconds, 10, 86400)
	v.intRange("voice.maxSessionMinutes", vo.MaxSessionMinutes, 1, 10080)
	v.intRange("voice.focusedSpeakerWindowSeconds", vo.FocusedSpeakerWindowSeconds, 0, 600)
	v.intRange("voice.recentReplyWindowSeconds", vo.RecentReplyWindowSeconds, 0, 600)
	v.intRange("voice.joinGreetingWindowSeconds", vo.JoinGreetingWindowSeconds, 0, 120)
	if vo.ReplyDecisionLLM.Enabled {
		v.nonEmpty("voice.replyDecisionLlm.model", vo.ReplyDecisionLLM.Model)
	}
	v.intRange("voice.replyDecisionLlm.maxAttempts", vo.ReplyDecisionLLM.MaxAttempts, 1, 5)
	v.intRange("voice.replyDecisionLlm.timeoutMs", vo.ReplyDecisionLLM.TimeoutMs, 100, 30000)
	v.enum("voice.replyDecisionLlm.reasoningEffort", vo.ReplyDecisionLLM.ReasoningEffort, reasoningEfforts)
	v.nonEmpty("voice.generationLlm.model", vo.GenerationLLM.Model)
	v.nonEmpty("voice.sttPipeline.transcriptionModel", vo.STTPipeline.TranscriptionModel)
	v.nonEmpty("voice.sttPipeline.ttsModel", vo.STTPipeline.TTSModel)
	v.nonEmpty("voice.sttPipeline.ttsVoice", vo.STTPipeline.TTSVoice)
	v.nonEmpty("voice.openaiRealtime.model", vo.OpenAIRealtime.Model)
	v.nonEmpty("voice.openaiRealtime.voice", vo.OpenAIRealtime.Voice)
	v.intRange("voice.openaiRealtime.sessionMaxMinutes", vo.OpenAIRealtime.SessionMaxMinutes, 1, 120)
	v.enum("voice.realtime.provider", vo.Realtime.Provider, realtimeProviders)
	v.nonEmpty("voice.geminiRealtime.model", vo.GeminiRealtime.Model)
	v.nonEmpty("voice.geminiRealtime.voice", vo.GeminiRealtime.Voice)
	v.intRange("voice.geminiRealtime.compressionTriggerTokens", vo.GeminiRealtime.CompressionTriggerTokens, 0, 10_000_000)
	if vo.Mode == "realtime" && vo.Realtime.Provider == KindGemini && vo.OpenAIRealtime.Provider != "" {
		v.addf("voice.openaiRealtime.provider: set while voice.realtime.provider is gemini (the Gemini Live API uses voice.geminiRealtime.provider)")
	}
	e := vo.Endpointing
	v.intRange("voice.endpointing.silenceMs", e.SilenceMs, 100, 5000)
	v.intRange("voice.endpointing.minUtteranceMs", e.MinUtteranceMs, 0, 5000)
	v.intRange("voice.endpointing.maxUtteranceMs", e.MaxUtteranceMs, max(e.MinUtteranceMs, 1000), 120000)
	v.intRange("voice.endpointing.roomHoldMs", e.RoomHoldMs, 0, 10000)
	v.enum("voice.endpointing.detector", e.Detector, speechDetectors)
	// The adaptive silences apply only in their direction (a complete turn never waits longer
	// than silenceMs, a trailing one never less), so a lower silenceMs needs no other change.
	if e.CompleteSilenceMs != 0 {
		v.intRange("voice.endpointing.completeSilenceMs", e.CompleteSilenceMs, 100, 5000)
	}
	if e.TrailingSilenceMs != 0 {
		v.intRange("voice.endpointing.trailingSilenceMs", e.TrailingSilenceMs, 100, 5000)
	}
	if e.FalseEndMs != 0 {
		v.intRange("voice.endpointing.falseEndMs", e.FalseEndMs, 100, 10000)
	}
	if sp := vo.Speculation; sp.Enabled || e.CompleteSilenceMs != 0 || e.TrailingSilenceMs != 0 {
		v.intRange("voice.speculation.pauseMs", sp.PauseMs, 100, 5000)
		if sp.Transcription != "" {
			v.enum("voice.speculation.transcription", sp.Transcription, speculationTranscriptions)
		}
	}
	v.enum("voice.bargeIn.policy", vo.BargeIn.Policy, bargeInPolicies)
	v.snowflakes("voice.hearBotIds", vo.HearBotIDs)
	v.intRange("voice.bargeIn.minSpeechMs", vo.BargeIn.MinSpeechMs, 0, 5000)
	v.intRange("voice.bargeIn.echoGuardMs", vo.BargeIn.EchoGuardMs, 0, 5000)
	v.intRange("voice.sendRealtimePriority", vo.SendRealtimePriority, 0, 99)
	v.intRange("voice.sendSpinMs", vo.SendSpinMs, -1, 5)
	v.enum("voice.sendClock", vo.SendClock, sendClocks)
}

// validateOperations checks safety.*, metrics.*, providers.*, prices.*, store.* and log.*.
func (v *validator) validateOperations(c *Config) {
	for i, w := range c.Safety.BanWords {
		v.nonEmpty(fmt.Sprintf("safety.banWords[%d]", i), w)
	}

	if c.Metrics.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Metrics.Listen); err != nil {
			v.addf("metrics.listen: %q is not host:port (for example 127.0.0.1:9090; empty disables metrics)", c.Metrics.Listen)
		}
	}
	v.validateProviders(c)
	v.validatePrices(c)
	v.validateBudget(c)
	v.enum("store.driver", c.Store.Driver, storeDrivers)
	v.nonEmpty("store.dsn", c.Store.DSN)
	if c.Store.Driver == "postgres" && c.Store.DSN != "" && !looksLikePostgresDSN(c.Store.DSN) {
		v.addf("store.dsn: with store.driver postgres, want a connection string such as postgres://banter@db:5432/banter or host=db dbname=banter (put the password in PGPASSWORD, not the file)")
	}
	v.intRange("store.retentionDays", c.Store.RetentionDays, 0, 36500)
	v.intRange("store.forgetRemovedGuildAfterDays", c.Store.ForgetRemovedGuildAfterDays, -1, 36500)
	v.enum("store.pgvector", c.Store.PGVector, []string{"auto", "off"})
	v.enum("log.level", c.Log.Level, logLevels)
	v.enum("log.format", c.Log.Format, logFormats)
}

// PersonaNames lists the configured persona names, sorted.
func (c *Config) PersonaNames() []string {
	names := make([]string, 0, len(c.Bot.Personas))
	for n := range c.Bot.Personas {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

type validator struct{ problems []string }

func (v *validator) addf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	slices.Sort(v.problems)
	return errors.New("invalid configuration:\n  " + strings.Join(v.problems, "\n  "))
}

func (v *validator) nonEmpty(path, s string) {
	if strings.TrimSpace(s) == "" {
		v.addf("%s: must not be empty", path)
	}
}

func (v *validator) intRange(path string, n, lo, hi int) {
	if n < lo || n > hi {
		v.addf("%s: %d is out of range (allowed %d to %d)", path, n, lo, hi)
	}
}

func (v *validator) floatRange(path string, f, lo, hi float64) {
	if f < lo || f > hi || f != f {
		v.addf("%s: %g is out of range (allowed %g to %g)", path, f, lo, hi)
	}
}

func (v *validator) enum(path, s string, allowed []string) {
	if !slices.Contains(allowed, s) {
		v.addf("%s: %q is not allowed (allowed values: %s)", path, s, strings.Join(allowed, ", "))
	}
}

func (v *validator) url(path, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.addf("%s: %q is not an http(s) URL (for example https://api.openai.com/v1)", path, redact.URL(s))
	}
}

func (v *validator) snowflake(path, s string) {
	if _, err := strconv.ParseUint(s, 10, 64); err != nil || s == "" {
		v.addf("%s: %q is not a Discord id (a number such as 123456789012345678, quoted)", path, s)
	}
}

func (v *validator) snowflakes(path string, ids []string) {
	for i, id := range ids {
		v.snowflake(fmt.Sprintf("%s[%d]", path, i), id)
	}
}

// looksLikePostgresDSN accepts the two forms pgx parses: a postgres:// or postgresql:// URL, or
// space-separated key=value pairs.
func looksLikePostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || strings.Contains(dsn, "=")
}
