// Package voice is banter in voice channels: sessions, turns, speech to text, admission,
// generation, speech, barge-in and the realtime strategies.
package voice

import (
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
)

// Policy maps the configuration onto voice Stage A's policy.
func Policy(c *config.Config) decision.VoicePolicy {
	p := decision.DefaultVoicePolicy(c.Bot.Name)
	p.Aliases = c.Bot.Aliases
	p.ReplyEagerness = c.Voice.ReplyEagerness
	p.FocusedSpeakerWindow = time.Duration(c.Voice.FocusedSpeakerWindowSeconds) * time.Second
	p.RecentReplyWindow = time.Duration(c.Voice.RecentReplyWindowSeconds) * time.Second
	rd := c.Voice.ReplyDecisionLLM
	p.Classifier = decision.ClassifierPolicy{
		Enabled:      rd.Enabled,
		Model:        rd.Model,
		MaxAttempts:  rd.MaxAttempts,
		Timeout:      time.Duration(rd.TimeoutMs) * time.Millisecond,
		SystemPrompt: rd.Prompts.System,
		UserPrompt:   rd.Prompts.User,
	}
	return p
}
