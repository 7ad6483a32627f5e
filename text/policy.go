package text

import (
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
)

// Policy maps the configuration onto text Stage A's policy.
func Policy(c *config.Config) decision.TextPolicy {
	p := decision.DefaultTextPolicy(c.Bot.Name)
	p.Aliases = c.Bot.Aliases
	p.AnswerToNickname = c.Bot.AnswerToNickname
	p.AllowInitiativeReplies = c.Permissions.AllowInitiativeReplies
	p.InitiativeChannelIDs = c.Permissions.InitiativeChannelIDs
	p.RecentWindow = time.Duration(c.Activity.RecentWindowSeconds) * time.Second
	p.ReplyLevelInitiative = c.Activity.ReplyLevelInitiative
	p.ReplyLevelNonInitiative = c.Activity.ReplyLevelNonInitiative
	dac := c.LLM.DirectAddressClassifier
	p.DirectAddress = decision.ClassifierPolicy{
		Enabled:   dac.Enabled,
		Model:     dac.Model,
		Threshold: dac.Threshold,
	}
	return p
}
