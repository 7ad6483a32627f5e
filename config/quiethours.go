package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // quiet hours name IANA zones; the image may have no zoneinfo
)

// QuietHours is one guild's quiet window (text.quietHours): while it lasts, only turns that
// address the bot directly are answered.
type QuietHours struct {
	// GuildID is the guild the window applies to.
	GuildID string `yaml:"guildId"`
	// TimeZone is an IANA zone name (Europe/Berlin, America/New_York, UTC).
	TimeZone string `yaml:"timeZone"`
	// Start and End are local times "HH:MM"; a window whose end is before its start runs over
	// midnight (23:00-07:00). Start equal to End is refused.
	Start string `yaml:"start"`
	End   string `yaml:"end"`
}

// QuietNow returns the quiet window of guildID that is in force at now, if one is.
func (t Text) QuietNow(guildID string, now time.Time) (QuietHours, bool) {
	for _, q := range t.QuietHours {
		if q.GuildID == guildID && q.active(now) {
			return q, true
		}
	}
	return QuietHours{}, false
}

// active reports whether now falls in the window (a window that does not parse never does:
// Validate refuses it).
func (q QuietHours) active(now time.Time) bool {
	loc, err := time.LoadLocation(q.TimeZone)
	start, errS := clockMinutes(q.Start)
	end, errE := clockMinutes(q.End)
	if err != nil || errS != nil || errE != nil {
		return false
	}
	local := now.In(loc)
	m := local.Hour()*60 + local.Minute()
	if start < end {
		return m >= start && m < end
	}
	return m >= start || m < end
}

// clockMinutes parses "HH:MM" (00:00-23:59) as minutes after midnight.
func clockMinutes(s string) (int, error) {
	hh, mm, ok := strings.Cut(s, ":")
	h, errH := strconv.Atoi(hh)
	m, errM := strconv.Atoi(mm)
	if !ok || len(hh) != 2 || len(mm) != 2 || errH != nil || errM != nil || h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, fmt.Errorf("%q is not a time of day (allowed: HH:MM from 00:00 to 23:59)", s)
	}
	return h*60 + m, nil
}

// validateQuietHours checks text.quietHours.
func (v *validator) validateQuietHours(qs []QuietHours) {
	seen := map[string]bool{}
	for i, q := range qs {
		field := fmt.Sprintf("text.quietHours[%d]", i)
		v.snowflake(field+".guildId", q.GuildID)
		if seen[q.GuildID] && q.GuildID != "" {
			v.addf("%s.guildId: %q already has quiet hours (one window per guild)", field, q.GuildID)
		}
		seen[q.GuildID] = true
		if _, err := time.LoadLocation(q.TimeZone); err != nil || q.TimeZone == "" {
			v.addf("%s.timeZone: %q is not a time zone (allowed: an IANA name such as Europe/Berlin, or UTC)", field, q.TimeZone)
		}
		start, errS := clockMinutes(q.Start)
		if errS != nil {
			v.addf("%s.start: %v", field, errS)
		}
		end, errE := clockMinutes(q.End)
		if errE != nil {
			v.addf("%s.end: %v", field, errE)
		}
		if errS == nil && errE == nil && start == end {
			v.addf("%s: start and end are both %s (allowed: different times; a window may run over midnight)", field, q.Start)
		}
	}
}
