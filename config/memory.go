package config

// MemoryLLM is the memory model slot: it extracts facts from what people say, on ingest, off
// the reply path (docs/memory.md).
type MemoryLLM struct {
	// Provider names a providers entry; empty uses llm.provider.
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
}

// Memory is long-term memory: facts about the members of a guild, extracted by memoryLlm,
// shown in the prompts of their turns, and deleted on request (/memory).
type Memory struct {
	// Enabled turns memory on; off, nothing is extracted and no fact is shown.
	Enabled bool `yaml:"enabled"`
	// GuildIDs, when not empty, limits memory to these guilds.
	GuildIDs []string `yaml:"guildIds"`
	// BatchMessages is how many messages of a channel are extracted in one call.
	BatchMessages int `yaml:"batchMessages"`
	// QuietSeconds extracts a channel's smaller batch after this long without a new message.
	QuietSeconds int `yaml:"quietSeconds"`
	// RetentionDays deletes facts older than this; 0 keeps them until deleted.
	RetentionDays int `yaml:"retentionDays"`
	// PromptTokens bounds the facts shown with one turn (about four characters a token).
	PromptTokens int `yaml:"promptTokens"`
	// MaxFactsPerSubject bounds the current facts the extraction model is shown per subject.
	MaxFactsPerSubject int `yaml:"maxFactsPerSubject"`
}

// EnabledFor reports whether memory is on for a guild.
func (m Memory) EnabledFor(guildID string) bool {
	if !m.Enabled || guildID == "" {
		return false
	}
	if len(m.GuildIDs) == 0 {
		return true
	}
	for _, g := range m.GuildIDs {
		if g == guildID {
			return true
		}
	}
	return false
}

// defaultMemory is the memory section of Default: off.
func defaultMemory() Memory {
	return Memory{BatchMessages: 8, QuietSeconds: 60, RetentionDays: 180, PromptTokens: 300, MaxFactsPerSubject: 30}
}

// validateMemory checks memory.* and memoryLlm.*.
func (v *validator) validateMemory(c *Config) {
	m := c.Memory
	if m.Enabled {
		v.nonEmpty("memoryLlm.model", c.MemoryLLM.Model)
	}
	v.snowflakes("memory.guildIds", m.GuildIDs)
	v.intRange("memory.batchMessages", m.BatchMessages, 1, 100)
	v.intRange("memory.quietSeconds", m.QuietSeconds, 1, 86400)
	v.intRange("memory.retentionDays", m.RetentionDays, 0, 36500)
	v.intRange("memory.promptTokens", m.PromptTokens, 0, 4000)
	v.intRange("memory.maxFactsPerSubject", m.MaxFactsPerSubject, 1, 200)
}
