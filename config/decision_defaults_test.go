package config_test

import (
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
)

// TestDecisionDefaultsMatchConfig: the decision engine's built-in policy defaults (used by
// tools and tests that build a policy without a configuration) are the configuration's
// defaults, so that neither documents a different default than the bot runs with.
func TestDecisionDefaultsMatchConfig(t *testing.T) {
	c := config.Default()
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	vp := decision.DefaultVoicePolicy(c.Bot.Name)
	tp := decision.DefaultTextPolicy(c.Bot.Name)
	tests := []struct {
		name         string
		engine, conf any
	}{
		{"voice.replyEagerness", vp.ReplyEagerness, c.Voice.ReplyEagerness},
		{"voice.focusedSpeakerWindowSeconds", vp.FocusedSpeakerWindow, sec(c.Voice.FocusedSpeakerWindowSeconds)},
		{"voice.recentReplyWindowSeconds", vp.RecentReplyWindow, sec(c.Voice.RecentReplyWindowSeconds)},
		{"activity.recentWindowSeconds", tp.RecentWindow, sec(c.Activity.RecentWindowSeconds)},
		{"activity.replyLevelInitiative", tp.ReplyLevelInitiative, c.Activity.ReplyLevelInitiative},
		{"activity.replyLevelNonInitiative", tp.ReplyLevelNonInitiative, c.Activity.ReplyLevelNonInitiative},
	}
	for _, tt := range tests {
		if tt.engine != tt.conf {
			t.Errorf("%s: decision default %v, config default %v", tt.name, tt.engine, tt.conf)
		}
	}
}
