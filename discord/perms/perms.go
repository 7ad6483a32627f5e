// Package perms computes what a member may do in a guild channel from a gateway session's
// state (the guild's roles, the channel's overwrites, the member's roles), as Discord does:
// the guild's owner and an Administrator hold every permission; otherwise @everyone's and the
// member's roles' permissions together, then the channel's overwrites: @everyone's, the
// member's roles' (their denies, then their allows), the member's own. A thread takes its
// parent's overwrites.
// https://discord.com/developers/docs/topics/permissions#permission-overwrites
//
// discordgo's State.UserChannelPermissions differs in two ways that matter here: it applies
// overwrites on top of Administrator, and reads a thread's own (empty) overwrites.
package perms

import (
	"slices"

	"github.com/bwmarrin/discordgo"
)

// The permissions banter needs to read a channel and to post in it.
const (
	// Read is what reading a channel's history takes.
	Read = discordgo.PermissionViewChannel | discordgo.PermissionReadMessageHistory
	// all is every permission bit (the owner's, an Administrator's).
	all int64 = 1<<53 - 1
)

// InChannel returns what user userID may do in channel channelID according to st. ok is false
// when st cannot tell: the channel, its guild (or the guild's roles: a guild not yet available
// after READY) or the member is unknown to it.
func InChannel(st *discordgo.State, userID, channelID string) (perms int64, ok bool) {
	perms, _, ok = inChannel(st, userID, channelID)
	return perms, ok
}

// inChannel is InChannel, also telling whether the channel is a thread. The state changes its
// objects in place as events arrive: their fields are read under its lock (which its lookups
// take too, so never while holding it).
func inChannel(st *discordgo.State, userID, channelID string) (perms int64, thread, ok bool) {
	if st == nil || userID == "" {
		return 0, false, false
	}
	ch, err := st.Channel(channelID)
	if err != nil {
		return 0, false, false
	}
	st.RLock()
	guildID, parentID, thread := ch.GuildID, ch.ParentID, ch.IsThread()
	st.RUnlock()
	if guildID == "" {
		return 0, thread, false
	}
	g, err := st.Guild(guildID)
	if err != nil {
		return 0, thread, false
	}
	member, err := st.Member(guildID, userID)
	if err != nil {
		return 0, thread, false
	}
	withOverwrites := ch
	if thread {
		if withOverwrites, err = st.Channel(parentID); err != nil {
			return 0, thread, false
		}
	}
	st.RLock()
	defer st.RUnlock()
	if g.Unavailable || len(g.Roles) == 0 {
		return 0, thread, false
	}
	return compute(g, withOverwrites.PermissionOverwrites, userID, member.Roles), thread, true
}

// compute is Discord's permission algorithm for a member of g holding roles, in a channel with
// overwrites.
func compute(g *discordgo.Guild, overwrites []*discordgo.PermissionOverwrite, userID string, roles []string) int64 {
	if g.OwnerID == userID {
		return all
	}
	var perms int64
	for _, r := range g.Roles {
		if r != nil && (r.ID == g.ID || slices.Contains(roles, r.ID)) {
			perms |= r.Permissions
		}
	}
	if perms&discordgo.PermissionAdministrator != 0 {
		return all
	}
	for _, o := range overwrites {
		if o != nil && o.Type == discordgo.PermissionOverwriteTypeRole && o.ID == g.ID {
			perms = perms&^o.Deny | o.Allow
		}
	}
	var allow, deny int64
	for _, o := range overwrites {
		if o != nil && o.Type == discordgo.PermissionOverwriteTypeRole && o.ID != g.ID && slices.Contains(roles, o.ID) {
			allow, deny = allow|o.Allow, deny|o.Deny
		}
	}
	perms = perms&^deny | allow
	for _, o := range overwrites {
		if o != nil && o.Type == discordgo.PermissionOverwriteTypeMember && o.ID == userID {
			perms = perms&^o.Deny | o.Allow
		}
	}
	return perms
}

// SendRefusal says why userID may not post in channelID according to st: "missing_access"
// (no View Channel), "missing_permissions" (no Send Messages, or Send Messages in Threads in a
// thread), or "" when it may, or when st cannot tell (Discord's answer decides then).
func SendRefusal(st *discordgo.State, userID, channelID string) string {
	p, thread, ok := inChannel(st, userID, channelID)
	if !ok {
		return ""
	}
	send := int64(discordgo.PermissionSendMessages)
	if thread {
		send = discordgo.PermissionSendMessagesInThreads
	}
	switch {
	case p&discordgo.PermissionViewChannel == 0:
		return "missing_access"
	case p&send == 0:
		return "missing_permissions"
	}
	return ""
}

// Readable reports whether userID may read channelID's history according to st (View Channel
// and Read Message History); ok is false when st cannot tell.
func Readable(st *discordgo.State, userID, channelID string) (readable, ok bool) {
	p, ok := InChannel(st, userID, channelID)
	return ok && p&Read == Read, ok
}

// MayReference reports whether userID may reference (reply to) a message of channelID
// according to st: a message_reference needs View Channel and Read Message History, else
// Discord refuses the create (160009). ok is false when st cannot tell.
func MayReference(st *discordgo.State, userID, channelID string) (may, ok bool) {
	return Readable(st, userID, channelID)
}

// GuildAvailable reports whether st holds guildID's roles and channels: false for a guild only
// listed by READY (an unavailable stub) until its GUILD_CREATE arrives, or one st never saw.
func GuildAvailable(st *discordgo.State, guildID string) bool {
	if st == nil {
		return false
	}
	g, err := st.Guild(guildID)
	if err != nil {
		return false
	}
	st.RLock()
	defer st.RUnlock()
	return !g.Unavailable && len(g.Roles) > 0
}
