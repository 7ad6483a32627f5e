package text

import (
	"fmt"
	"time"

	"github.com/banterbot/banter/config"
)

// Quiet hours (text.quietHours) are a per-guild window in which only turns that address the
// bot are answered: Stage A denies the rest (quiet_hours), and the reply model is told.

// inQuietHours reports whether guildID's quiet hours are in force at now (never in a DM).
func inQuietHours(cfg *config.Config, guildID string, now time.Time) bool {
	if guildID == "" {
		return false
	}
	_, ok := cfg.Text.QuietNow(guildID, now)
	return ok
}

// quietHoursLine is the constraint the reply model's instructions carry about the guild's quiet
// hours: that it respects them, and whether they are in force now.
func quietHoursLine(cfg *config.Config, guildID string, now time.Time) string {
	if q, ok := cfg.Text.QuietNow(guildID, now); ok && guildID != "" {
		return fmt.Sprintf("- Respect quiet hours: it is quiet hours in this server now (%s-%s %s). Answer only the person "+
			"who addressed you, briefly, and do not start or widen a conversation.", q.Start, q.End, q.TimeZone)
	}
	return "- Respect quiet hours: when it is quiet hours in a server, answer only people who address you."
}
