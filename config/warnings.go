package config

import (
	"fmt"
	"log/slog"
)

// Warnings are settings the configuration accepts (they validate) but that an admin may not
// expect. banter logs each (config_warning, level WARN) when it loads the file at start and at
// every reload; none stops it.

// Warnings returns c's warnings, each as the attributes of its log event: "warning" names it,
// then the fields concerned with their values, then "detail" says what it means.
func (c *Config) Warnings() [][]any {
	var out [][]any
	if w := c.memoryOutlivesMessages(); w != nil {
		out = append(out, w)
	}
	if w := c.pauseMayEndTurn(); w != nil {
		out = append(out, w)
	}
	return out
}

// LogWarnings logs c's warnings (config_warning).
func (c *Config) LogWarnings(logger *slog.Logger) {
	for _, w := range c.Warnings() {
		logger.Warn("config_warning", w...)
	}
}

// memoryOutlivesMessages warns when, with memory on, facts are kept longer than the stored
// messages they were extracted from (docs/memory.md, "For how long"): by design memory
// remembers longer than the chat log (the defaults keep facts 180 days, messages 90), but an
// admin who shortened store.retentionDays may expect the facts to go with the messages.
func (c *Config) memoryOutlivesMessages() []any {
	m, s := c.Memory.RetentionDays, c.Store.RetentionDays
	if !c.Memory.Enabled || s == 0 || (m != 0 && m <= s) {
		return nil
	}
	detail := fmt.Sprintf("facts are kept up to %d days longer than the stored messages they came from", m-s)
	if m == 0 {
		detail = fmt.Sprintf("facts are kept until someone deletes them, the stored messages they came from %d days", s)
	}
	return []any{"warning", "memory_outlives_messages", "memory.retentionDays", m, "store.retentionDays", s,
		"detail", detail + "; set memory.retentionDays to at most store.retentionDays if facts must not outlive their sources"}
}

// pauseMayEndTurn warns when an end silence is short enough that a pause of up to 700 ms
// inside a sentence may end the turn, so that the first half is answered (docs/voice.md,
// "Where a turn ends"): the neural detector hears such a pause as up to 740 ms, the pitch and
// energy detectors as up to 880 ms. The shipped 800 ms is safe with the neural detector; a
// document that picks pitch or energy gets PitchEndSilenceMs where it sets no end silence.
func (c *Config) pauseMayEndTurn() []any {
	e := c.Voice.Endpointing
	if !c.Voice.Enabled {
		return nil
	}
	need, heard := 760, 740
	if e.Detector == "pitch" || e.Detector == "energy" {
		need, heard = PitchEndSilenceMs, 880
	}
	field, ms := "voice.endpointing.silenceMs", e.SilenceMs
	if e.CompleteSilenceMs != 0 && e.CompleteSilenceMs < ms {
		field, ms = "voice.endpointing.completeSilenceMs", e.CompleteSilenceMs
	}
	if ms >= need {
		return nil
	}
	return []any{"warning", "pause_may_end_turn", field, ms, "voice.endpointing.detector", e.Detector,
		"detail", fmt.Sprintf("the %s detector hears a 700 ms pause inside a sentence as up to %d ms, so a member who pauses that long "+
			"may be answered half a sentence (then cut off by the false end); %d ms or more keeps such a turn whole", e.Detector, heard, need)}
}
