package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Budget is the daily spending budgets (docs/cost.md): a cap per guild and one for all of
// them together, in US dollars at the prices: table. Past SoftThreshold of a cap the slots
// named in FallbackModels call their cheaper model; at a cap only the slots of AllowAtCap are
// called, the bot answers only direct addresses in text, and voice stops speaking. Days begin
// at ResetHour in TimeZone. Live.
type Budget struct {
	// DailyUSD caps every guild's spend together (DMs included); 0: no global cap.
	DailyUSD float64 `yaml:"dailyUsd"`
	// GuildDailyUSD caps each guild's spend; 0: no per-guild cap.
	GuildDailyUSD float64 `yaml:"guildDailyUsd"`
	// Guilds overrides GuildDailyUSD for some guilds, by guild id (0: no cap for that guild).
	Guilds map[string]float64 `yaml:"guilds"`
	// SoftThreshold is the share of a cap (0 < x <= 1) past which FallbackModels apply.
	SoftThreshold float64 `yaml:"softThreshold"`
	// FallbackModels names, by model slot, the cheaper model called past the soft threshold.
	FallbackModels map[string]string `yaml:"fallbackModels"`
	// AllowAtCap lists the model slots still called at the cap (the default keeps voice
	// transcribing, for the session's timeline; empty stops every call).
	AllowAtCap []string `yaml:"allowAtCap"`
	// ResetHour (0-23) is the hour, in TimeZone, at which a budget day begins.
	ResetHour int `yaml:"resetHour"`
	// TimeZone is an IANA name (UTC, Europe/Paris, …).
	TimeZone string `yaml:"timeZone"`
	// CapNotice is said once a day per guild, to the first direct address after the cap.
	CapNotice string `yaml:"capNotice"`
	// KeepDays is how many budget days of the spend ledger are kept, the current one
	// included; older days are deleted; 0 keeps every day.
	KeepDays int `yaml:"keepDays"`
}

// ModelSlots are the config sections that name a model, as the usage metrics label them.
var ModelSlots = []string{
	"llm", "llm.directAddressClassifier", "replyFollowupLlm", "lookups.webSearch", "lookups.image",
	"voice.sttPipeline.transcription", "voice.replyDecisionLlm", "voice.generationLlm",
	"voice.sttPipeline.tts", "voice.openaiRealtime", "voice.geminiRealtime", "memoryLlm", "embeddings",
}

// DefaultCapNotice is budget.capNotice's default.
const DefaultCapNotice = "I've used up today's budget, so I'm keeping quiet until it resets. I'll still answer when you talk to me directly, as best I can."

// DefaultBudgetKeepDays is budget.keepDays' default: 400 days, a year with a month to spare,
// so last year's same month can be compared with this one.
const DefaultBudgetKeepDays = 400

// defaultBudget has no cap: budgets are opt-in.
func defaultBudget() Budget {
	return Budget{SoftThreshold: 0.8, AllowAtCap: []string{"voice.sttPipeline.transcription"},
		TimeZone: "UTC", CapNotice: DefaultCapNotice, KeepDays: DefaultBudgetKeepDays}
}

// Enabled reports whether any cap is set.
func (b *Budget) Enabled() bool {
	if b.DailyUSD > 0 || b.GuildDailyUSD > 0 {
		return true
	}
	for _, usd := range b.Guilds {
		if usd > 0 {
			return true
		}
	}
	return false
}

// GuildCap returns the cap of guild ("" outside a guild: none), 0 when it has none.
func (b *Budget) GuildCap(guild string) float64 {
	if guild == "" {
		return 0
	}
	if usd, ok := b.Guilds[guild]; ok {
		return usd
	}
	return b.GuildDailyUSD
}

// Day names the budget day that t falls in ("2006-01-02"): days begin at ResetHour in
// TimeZone (an invalid zone, which validation refuses, counts as UTC).
func (b *Budget) Day(t time.Time) string {
	loc, err := time.LoadLocation(b.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Add(-time.Duration(b.ResetHour) * time.Hour).Format(time.DateOnly)
}

// validateBudget checks budget.*.
func (v *validator) validateBudget(c *Config) {
	b := &c.Budget
	usd := func(path string, f float64) {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			v.addf("%s: %v is not an amount (want US dollars >= 0; 0: no cap)", path, f)
		}
	}
	usd("budget.dailyUsd", b.DailyUSD)
	usd("budget.guildDailyUsd", b.GuildDailyUSD)
	for _, id := range slices.Sorted(maps.Keys(b.Guilds)) {
		v.snowflake("budget.guilds key", id)
		usd("budget.guilds."+id, b.Guilds[id])
	}
	if !(b.SoftThreshold > 0 && b.SoftThreshold <= 1) {
		v.addf("budget.softThreshold: %v is out of range (allowed: above 0 up to 1, a share of the cap)", b.SoftThreshold)
	}
	for _, slot := range slices.Sorted(maps.Keys(b.FallbackModels)) {
		v.enum("budget.fallbackModels key", slot, ModelSlots)
		v.nonEmpty("budget.fallbackModels."+slot, b.FallbackModels[slot])
	}
	for i, slot := range b.AllowAtCap {
		v.enum(fmt.Sprintf("budget.allowAtCap[%d]", i), slot, ModelSlots)
	}
	v.intRange("budget.resetHour", b.ResetHour, 0, 23)
	if _, err := time.LoadLocation(b.TimeZone); err != nil || strings.TrimSpace(b.TimeZone) == "" {
		v.addf("budget.timeZone: %q is not a time zone (want an IANA name such as UTC or Europe/Paris)", b.TimeZone)
	}
	v.nonEmpty("budget.capNotice", b.CapNotice)
	v.intRange("budget.keepDays", b.KeepDays, 0, 36500)
}

// PruneBefore names the first budget day that budget.keepDays keeps when today is the
// budget day today ("2006-01-02"); "" when every day is kept.
func (b *Budget) PruneBefore(today string) string {
	if b.KeepDays <= 0 {
		return ""
	}
	t, err := time.Parse(time.DateOnly, today)
	if err != nil {
		return ""
	}
	return t.AddDate(0, 0, 1-b.KeepDays).Format(time.DateOnly)
}
