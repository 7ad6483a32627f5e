package control

import (
	"encoding/json"
	"net/http"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/world"
)

// guildSettingsView is the guild's settings as the control API shows them.
type guildSettingsView struct {
	AFKChannel discordsim.ChannelID `json:"afk_channel"`
	AFKTimeout int                  `json:"afk_timeout"`
}

// editGuild is PATCH /guild {"afk_channel": a voice channel's name or id, or null to clear
// it; "afk_timeout": 60, 300, 900, 1800 or 3600}: what an admin sets in the server's settings
// (Discord's PATCH /guilds/{g}, checked as world.EditGuild checks it); GUILD_UPDATE follows a
// change.
func (c *Controller) editGuild(w http.ResponseWriter, r *http.Request) {
	var in struct {
		AFKChannel json.RawMessage `json:"afk_channel"`
		AFKTimeout *int            `json:"afk_timeout"`
	}
	if !decode(w, r, &in) {
		return
	}
	e := world.GuildEdit{AFKTimeout: in.AFKTimeout}
	if len(in.AFKChannel) > 0 {
		var name *string
		if err := json.Unmarshal(in.AFKChannel, &name); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		afk := discordsim.ChannelID("")
		if name != nil {
			ch, err := c.channel(*name)
			if err != nil {
				fail(w, http.StatusNotFound, err)
				return
			}
			afk = ch
		}
		e.AFKChannel = &afk
	}
	g, err := c.sim.EditGuild("", c.guild, e)
	done(w, err, func() any { return guildSettingsView{g.AFKChannel, g.AFKTimeout} })
}
