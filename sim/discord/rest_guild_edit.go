package discordsim

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/banterbot/banter/sim/discord/world"
)

// PATCH /guilds/{g} with "afk_channel_id" (a voice channel of the guild, or null to clear
// it) and "afk_timeout" (60, 300, 900, 1800 or 3600; null leaves it), checked by
// world.EditGuild (Manage Guild). 200 with the guild; a change sends GUILD_UPDATE to the
// members' sessions. Other fields are not simulated yet: 400 50035 naming them, rather than
// silently ignored.
// https://discord.com/developers/docs/resources/guild#modify-guild
func (a *restAPI) modifyGuild(q *apiRequest) (int, any, error) {
	var body map[string]json.RawMessage
	if err := decodeBody(q, &body); err != nil {
		return 0, nil, err
	}
	edit, err := parseModifyGuild(body)
	if err != nil {
		return 0, nil, err
	}
	g := GuildID(q.PathValue("guild_id"))
	if err := a.callerInGuild(g, q.user); err != nil {
		return 0, nil, err
	}
	if _, err := a.world.EditGuild(q.user, g, edit); err != nil {
		return 0, nil, err
	}
	return a.inGuild(q, func(v *world.View, g world.Guild) (any, error) { return wireGuildOf(v, g), nil })
}

// parseModifyGuild reads a PATCH /guilds/{g} body, or 400 50035 naming a field that is not
// simulated or one of the wrong shape.
func parseModifyGuild(body map[string]json.RawMessage) (world.GuildEdit, error) {
	var e world.GuildEdit
	bad := func(msg string) (world.GuildEdit, error) {
		return world.GuildEdit{}, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: "Invalid Form Body: " + msg}
	}
	for k, raw := range body {
		switch k {
		case "afk_channel_id":
			target, msg := nullableChannel(raw, k)
			if msg != "" {
				return bad(msg)
			}
			e.AFKChannel = &target
		case "afk_timeout":
			var s *int
			if err := json.Unmarshal(raw, &s); err != nil {
				return bad("afk_timeout: must be an integer or null")
			}
			e.AFKTimeout = s
		default:
			return bad(fmt.Sprintf("%s: not simulated (only afk_channel_id and afk_timeout are)", k))
		}
	}
	return e, nil
}

// nullableChannel reads a body field that is a channel's snowflake or null ("" for null), or
// returns the Invalid Form Body message naming field.
func nullableChannel(raw json.RawMessage, field string) (ChannelID, string) {
	var ch *string
	if err := json.Unmarshal(raw, &ch); err != nil {
		return "", field + ": must be a snowflake or null"
	}
	if ch == nil {
		return "", ""
	}
	if _, err := strconv.ParseUint(*ch, 10, 64); err != nil {
		return "", fmt.Sprintf("%s: Value %q is not snowflake.", field, *ch)
	}
	return ChannelID(*ch), ""
}
