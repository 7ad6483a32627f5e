package voice

import (
	"encoding/json"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// FuzzJoinChannelOption decodes any INTERACTION_CREATE payload as discordgo
// does and reads /join's channel option from it, as HandleInteraction does.
// The options come from Discord users: whatever their types and values,
// reading them must not panic, and the channel read is the string value of
// a "channel" option of type channel (or none).
func FuzzJoinChannelOption(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","type":2,"guild_id":"9","data":{"name":"join","options":[{"name":"channel","type":7,"value":"1100000000000000003"}]}}`,
		`{"id":"2","type":2,"guild_id":"9","data":{"name":"join"}}`,
		`{"id":"3","type":2,"guild_id":"9","data":{"name":"join","options":[{"name":"channel","type":7,"value":42}]}}`,
		`{"id":"4","type":2,"guild_id":"9","data":{"name":"join","options":[{"name":"channel","type":3,"value":"1"}]}}`,
		`{"id":"5","type":2,"guild_id":"9","data":{"name":"join","options":[null,{"name":"channel","type":7,"value":null}]}}`,
		`{"id":"6","type":2,"guild_id":"9","data":{"name":"join","options":[{"name":"go","type":1,"options":[{"name":"channel","type":7,"value":"2"}]}]}}`,
		`{"id":"7","type":2,"guild_id":"9","data":{"name":"leave","options":[{"name":"channel","type":7,"value":"3"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var i discordgo.Interaction
		if json.Unmarshal(payload, &i) != nil || i.Type != discordgo.InteractionApplicationCommand {
			return // HandleInteraction leaves other interactions alone
		}
		opts := i.ApplicationCommandData().Options
		got := channelOption(opts)
		if got == "" {
			return
		}
		for _, o := range opts {
			if o != nil && o.Name == "channel" && o.Type == discordgo.ApplicationCommandOptionChannel && o.Value == got {
				return
			}
		}
		t.Fatalf("channel %q is not the value of a channel option in %s", got, payload)
	})
}
