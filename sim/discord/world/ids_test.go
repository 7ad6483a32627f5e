package world

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

func TestSnowflakes(t *testing.T) {
	tests := []struct {
		name string
		at   time.Time
	}{
		{"now", time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)},
		{"just after the discord epoch", time.UnixMilli(discordEpoch + 1000).UTC()},
		{"before the epoch", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := snowflakes{now: func() time.Time { return tc.at }} // a frozen clock
			prev := uint64(0)
			for range 1000 {
				id := g.next()
				if id <= prev {
					t.Fatalf("id %d after %d: not increasing", id, prev)
				}
				prev = id
			}
			s := strconv.FormatUint(prev, 10)
			if !tc.at.Before(time.UnixMilli(discordEpoch)) {
				if got := SnowflakeTime(s); !got.Equal(tc.at) {
					t.Errorf("SnowflakeTime = %v, want %v", got, tc.at)
				}
			}
			if tc.name == "now" && !reSnowflake.MatchString(s) {
				t.Errorf("%s is not a 17-19 digit snowflake", s)
			}
		})
	}
	if !SnowflakeTime("x").IsZero() {
		t.Error("SnowflakeTime of garbage must be zero")
	}
}

var reSnowflake = regexp.MustCompile(`^\d{17,19}$`)
