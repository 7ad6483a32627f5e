package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestBudgetValidation: each bad budget key is refused naming the field and what is allowed.
func TestBudgetValidation(t *testing.T) {
	cases := []struct {
		name string
		edit func(b *Budget)
		want string
	}{
		{"negative cap", func(b *Budget) { b.DailyUSD = -1 }, "budget.dailyUsd: -1 is not an amount"},
		{"NaN guild cap", func(b *Budget) { b.GuildDailyUSD = math.NaN() }, "budget.guildDailyUsd: NaN"},
		{"guild key", func(b *Budget) { b.Guilds = map[string]float64{"abc": 1} }, `budget.guilds key: "abc" is not a Discord id`},
		{"threshold 0", func(b *Budget) { b.SoftThreshold = 0 }, "budget.softThreshold: 0 is out of range"},
		{"threshold above 1", func(b *Budget) { b.SoftThreshold = 1.5 }, "budget.softThreshold: 1.5"},
		{"unknown slot", func(b *Budget) { b.FallbackModels = map[string]string{"llm.reply": "x"} }, `budget.fallbackModels key: "llm.reply" is not allowed (allowed values: llm,`},
		{"empty fallback", func(b *Budget) { b.FallbackModels = map[string]string{"llm": " "} }, "budget.fallbackModels.llm: must not be empty"},
		{"allowAtCap slot", func(b *Budget) { b.AllowAtCap = []string{"tts"} }, `budget.allowAtCap[0]: "tts" is not allowed`},
		{"reset hour", func(b *Budget) { b.ResetHour = 24 }, "budget.resetHour: 24 is out of range (allowed 0 to 23)"},
		{"time zone", func(b *Budget) { b.TimeZone = "Mars/Olympus" }, `budget.timeZone: "Mars/Olympus" is not a time zone`},
		{"notice", func(b *Budget) { b.CapNotice = "" }, "budget.capNotice: must not be empty"},
		{"keep days negative", func(b *Budget) { b.KeepDays = -1 }, "budget.keepDays: -1 is out of range (allowed 0 to 36500)"},
		{"keep days too many", func(b *Budget) { b.KeepDays = 36501 }, "budget.keepDays: 36501 is out of range (allowed 0 to 36500)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.edit(&c.Budget)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestBudgetDay: a budget day begins at resetHour in timeZone.
func TestBudgetDay(t *testing.T) {
	b := Budget{ResetHour: 6, TimeZone: "Europe/Paris"} // UTC+1 in November
	cases := []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 11, 27, 4, 59, 0, 0, time.UTC), "2026-11-26"},  // 05:59 in Paris
		{time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC), "2026-11-27"},   // 06:00 in Paris
		{time.Date(2026, 11, 27, 23, 30, 0, 0, time.UTC), "2026-11-27"}, // 00:30 on the 28th in Paris
	}
	for _, tc := range cases {
		if got := b.Day(tc.at); got != tc.want {
			t.Errorf("Day(%v) = %s, want %s", tc.at, got, tc.want)
		}
	}
}

// TestBudgetPruneBefore: keepDays counts the current budget day; 0 keeps every day.
func TestBudgetPruneBefore(t *testing.T) {
	cases := []struct {
		keep        int
		today, want string
	}{
		{400, "2026-11-27", "2025-10-24"},
		{1, "2026-11-27", "2026-11-27"},
		{2, "2026-03-01", "2026-02-28"},
		{0, "2026-11-27", ""},
	}
	for _, tc := range cases {
		b := Budget{KeepDays: tc.keep}
		if got := b.PruneBefore(tc.today); got != tc.want {
			t.Errorf("keepDays %d on %s: prune before %q, want %q", tc.keep, tc.today, got, tc.want)
		}
	}
	if Default().Budget.KeepDays != 400 {
		t.Errorf("default keepDays %d, want 400", Default().Budget.KeepDays)
	}
}
