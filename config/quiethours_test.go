package config

import (
	"strings"
	"testing"
	"time"
)

func TestQuietNow(t *testing.T) {
	overnight := QuietHours{GuildID: "1", TimeZone: "America/New_York", Start: "23:00", End: "07:00"}
	daytime := QuietHours{GuildID: "2", TimeZone: "UTC", Start: "09:00", End: "17:30"}
	text := Text{QuietHours: []QuietHours{overnight, daytime}}
	tests := []struct {
		name  string
		guild string
		at    time.Time
		want  bool
	}{
		{"overnight, before midnight local", "1", time.Date(2026, 11, 21, 4, 30, 0, 0, time.UTC), true}, // 23:30 EST
		{"overnight, after midnight local", "1", time.Date(2026, 11, 21, 11, 59, 0, 0, time.UTC), true}, // 06:59 EST
		{"overnight ends at end", "1", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), false},           // 07:00 EST
		{"overnight, afternoon", "1", time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC), false},
		{"daytime starts at start", "2", time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), true},
		{"daytime, evening", "2", time.Date(2026, 11, 21, 17, 30, 0, 0, time.UTC), false},
		{"another guild", "3", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := text.QuietNow(tt.guild, tt.at); got != tt.want {
				t.Errorf("QuietNow(%s, %v) = %v, want %v", tt.guild, tt.at, got, tt.want)
			}
		})
	}
}

func TestQuietHoursValidation(t *testing.T) {
	tests := []struct {
		name string
		q    QuietHours
		want string // "" for valid
	}{
		{"valid", QuietHours{GuildID: "123", TimeZone: "Europe/Berlin", Start: "23:00", End: "07:00"}, ""},
		{"bad guild", QuietHours{GuildID: "general", TimeZone: "UTC", Start: "23:00", End: "07:00"}, "text.quietHours[0].guildId"},
		{"bad zone", QuietHours{GuildID: "123", TimeZone: "Mars/Olympus", Start: "23:00", End: "07:00"}, "text.quietHours[0].timeZone"},
		{"empty zone", QuietHours{GuildID: "123", Start: "23:00", End: "07:00"}, "text.quietHours[0].timeZone"},
		{"bad start", QuietHours{GuildID: "123", TimeZone: "UTC", Start: "25:00", End: "07:00"}, "text.quietHours[0].start"},
		{"bad end", QuietHours{GuildID: "123", TimeZone: "UTC", Start: "23:00", End: "7pm"}, "text.quietHours[0].end"},
		{"empty window", QuietHours{GuildID: "123", TimeZone: "UTC", Start: "08:00", End: "08:00"}, "start and end are both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Text.QuietHours = []QuietHours{tt.q}
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want an error naming %q", err, tt.want)
			}
		})
	}
	c := Default()
	c.Text.QuietHours = []QuietHours{{GuildID: "123", TimeZone: "UTC", Start: "01:00", End: "02:00"}, {GuildID: "123", TimeZone: "UTC", Start: "03:00", End: "04:00"}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "already has quiet hours") {
		t.Errorf("two windows for one guild: %v", err)
	}
	c = Default()
	c.Text.TargetMaxAgeMinutes = 0
	c.Safety.FilteredReplyText = ""
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "text.targetMaxAgeMinutes") || !strings.Contains(err.Error(), "safety.filteredReplyText") {
		t.Errorf("Validate = %v, want errors naming text.targetMaxAgeMinutes and safety.filteredReplyText", err)
	}
}
