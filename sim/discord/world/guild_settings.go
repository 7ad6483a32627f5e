package world

import "fmt"

// A guild's settings that a member with Manage Guild changes (PATCH /guilds/{g}): the AFK
// channel and its timeout, for now.
// https://discord.com/developers/docs/resources/guild#modify-guild

// PermManageGuild is the Manage Guild permission.
// https://discord.com/developers/docs/topics/permissions#permissions-bitwise-permission-flags
const PermManageGuild uint64 = 1 << 5

// DefaultAFKTimeout is a new guild's afk_timeout, in seconds.
const DefaultAFKTimeout = 300

// GuildEdit is a change to a guild's settings (PATCH /guilds/{g}): nil fields are left as
// they are.
type GuildEdit struct {
	// AFKChannel sets the guild's AFK channel, a voice channel of the guild; "" clears it.
	AFKChannel *ChannelID
	// AFKTimeout sets how many seconds a member idle in voice waits before Discord moves them
	// to the AFK channel: 60, 300, 900, 1800 or 3600.
	AFKTimeout *int
}

// validAFKTimeout reports whether s is one of afk_timeout's values.
func validAFKTimeout(s int) bool {
	switch s {
	case 60, 300, 900, 1800, 3600:
		return true
	}
	return false
}

// EditGuild applies e to guild g as by asks (by "" is the world's own scripting, which needs
// no permission), checked as Discord checks it:
//   - by must be a member (else 404 10004 Unknown Guild for a REST caller) with Manage Guild
//     (the owner and an Administrator hold it): else 403 50013;
//   - the AFK channel must be a voice channel of g: else 400 50035 naming afk_channel_id;
//   - afk_timeout must be 60, 300, 900, 1800 or 3600: else 400 50035 naming afk_timeout.
//
// A change emits GuildUpdated (GUILD_UPDATE to the members' sessions); an edit that changes
// nothing emits nothing. It returns the guild after the edit.
func (w *World) EditGuild(by UserID, g GuildID, e GuildEdit) (Guild, error) {
	v := w.lock()
	defer w.mu.Unlock()
	gd, err := w.guildLocked("edit guild", g)
	if err != nil {
		if by != "" {
			return Guild{}, ErrUnknownGuild
		}
		return Guild{}, err
	}
	if by != "" {
		if gd.members[by] == nil {
			return Guild{}, ErrUnknownGuild
		}
		if memberPermissionsLocked(gd, by)&PermManageGuild == 0 {
			return Guild{}, fmt.Errorf("edit guild: %s lacks Manage Guild: %w", by, ErrMissingPermissions)
		}
	}
	afk, timeout := gd.afkChannel, gd.afkTimeout
	if e.AFKChannel != nil {
		if ch := *e.AFKChannel; ch != "" {
			if c := w.st.channels[ch]; c == nil || c.guild != g || c.typ != ChannelVoice {
				return Guild{}, invalidBody("afk_channel_id", fmt.Sprintf("Channel %s is not a voice channel of the guild.", ch))
			}
		}
		afk = *e.AFKChannel
	}
	if e.AFKTimeout != nil {
		if !validAFKTimeout(*e.AFKTimeout) {
			return Guild{}, invalidBody("afk_timeout", "Value must be one of (60, 300, 900, 1800, 3600).")
		}
		timeout = *e.AFKTimeout
	}
	if afk != gd.afkChannel || timeout != gd.afkTimeout {
		gd.afkChannel, gd.afkTimeout = afk, timeout
		w.emitLocked(GuildUpdated{Guild: g})
	}
	snap, _ := v.Guild(g)
	return snap, nil
}
