package world

import (
	"fmt"
	"slices"
	"strconv"
)

// Channel permissions, computed as Discord does: the guild's owner and an Administrator hold
// every permission; otherwise @everyone's and the member's roles' permissions together, then
// the channel's overwrites: @everyone's, the member's roles' (their denies, then their
// allows), the member's own. A thread takes its parent's overwrites.
// https://discord.com/developers/docs/topics/permissions#permission-overwrites

// Permission bits the simulator checks.
// https://discord.com/developers/docs/topics/permissions#permissions-bitwise-permission-flags
const (
	PermAdministrator         uint64 = 1 << 3
	PermViewChannel           uint64 = 1 << 10
	PermSendMessages          uint64 = 1 << 11
	PermEmbedLinks            uint64 = 1 << 14
	PermAttachFiles           uint64 = 1 << 15
	PermReadMessageHistory    uint64 = 1 << 16
	PermMentionEveryone       uint64 = 1 << 17
	PermConnect               uint64 = 1 << 20
	PermSpeak                 uint64 = 1 << 21
	PermMuteMembers           uint64 = 1 << 22
	PermDeafenMembers         uint64 = 1 << 23
	PermMoveMembers           uint64 = 1 << 24
	PermChangeNickname        uint64 = 1 << 26
	PermManageNicknames       uint64 = 1 << 27
	PermManageRoles           uint64 = 1 << 28
	PermSendMessagesInThreads uint64 = 1 << 38
	permAll                   uint64 = 1<<53 - 1
)

// Overwrite types, as on the wire.
const (
	OverwriteRole   = 0
	OverwriteMember = 1
)

// Overwrite is one of a channel's permission overwrites: for a role (the guild's id is
// @everyone's) or a member, the permissions it allows and denies (decimal bit sets, as on the
// wire).
type Overwrite struct {
	ID    string
	Type  int
	Allow string
	Deny  string
}

// SetChannelOverwrite adds a channel's overwrite for a role or member, or replaces the one it
// has (CHANNEL_UPDATE).
func (w *World) SetChannelOverwrite(ch ChannelID, o Overwrite) error {
	v := w.lock()
	defer w.mu.Unlock()
	c := w.st.channels[ch]
	if c == nil || c.guild == "" || c.typ.IsThread() {
		return fmt.Errorf("set channel overwrite: %s is not a guild channel with overwrites", ch)
	}
	if o.Type != OverwriteRole && o.Type != OverwriteMember {
		return fmt.Errorf("set channel overwrite: type %d (want %d, a role, or %d, a member)", o.Type, OverwriteRole, OverwriteMember)
	}
	for _, bits := range []string{o.Allow, o.Deny} {
		if _, err := strconv.ParseUint(bits, 10, 64); err != nil {
			return fmt.Errorf("set channel overwrite: permissions %q: %w", bits, err)
		}
	}
	i := slices.IndexFunc(c.overwrites, func(x Overwrite) bool { return x.ID == o.ID })
	if i < 0 {
		c.overwrites = append(c.overwrites, o)
	} else {
		c.overwrites[i] = o
	}
	w.emitLocked(ChannelUpdated{Channel: v.channel(c)})
	return nil
}

// ChannelPermissions is what user u may do in channel ch (0 for a non-member or an unknown
// channel; every permission in a channel outside guilds).
func (v *View) ChannelPermissions(ch ChannelID, u UserID) uint64 {
	c := v.st.channels[ch]
	if c == nil {
		return 0
	}
	if c.guild == "" {
		return permAll
	}
	gd := v.st.guilds[c.guild]
	if gd == nil || gd.members[u] == nil {
		return 0
	}
	if gd.owner == u {
		return permAll
	}
	member := gd.members[u]
	var perms uint64
	for _, r := range gd.roles {
		if r.ID == RoleID(gd.id) || slices.Contains(member.Roles, r.ID) {
			perms |= bits(r.Permissions)
		}
	}
	if perms&PermAdministrator != 0 {
		return permAll
	}
	if c.typ.IsThread() && v.st.channels[c.parent] != nil {
		c = v.st.channels[c.parent]
	}
	return applyOverwrites(perms, c.overwrites, string(gd.id), u, member.Roles)
}

// applyOverwrites applies a channel's overwrites to a member's guild permissions.
func applyOverwrites(perms uint64, ows []Overwrite, everyone string, u UserID, roles []RoleID) uint64 {
	for _, o := range ows {
		if o.Type == OverwriteRole && o.ID == everyone {
			perms = perms&^bits(o.Deny) | bits(o.Allow)
		}
	}
	var allow, deny uint64
	for _, o := range ows {
		if o.Type == OverwriteRole && o.ID != everyone && slices.Contains(roles, RoleID(o.ID)) {
			allow, deny = allow|bits(o.Allow), deny|bits(o.Deny)
		}
	}
	perms = perms&^deny | allow
	for _, o := range ows {
		if o.Type == OverwriteMember && o.ID == string(u) {
			perms = perms&^bits(o.Deny) | bits(o.Allow)
		}
	}
	return perms
}

// bits parses a decimal permission set (0 when it does not parse).
func bits(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// checkSendLocked refuses a message its author may not create in c, as Discord does:
// without View Channel 403 Missing Access (50001); without Send Messages (Send Messages in
// Threads in a thread) or Attach Files for files, 403 Missing Permissions (50013); a reply
// (message_reference) without Read Message History, 160009 "Cannot reference a message without
// permission to read message history" (ErrCannotReference). Without Embed Links the embeds are
// dropped, not refused (the message may then be empty: 400 50006). Interaction responses and follow-ups (the
// application's webhook) need none of the bot's permissions, nor does a message outside guilds.
func (w *World) checkSendLocked(c *channel, n *NewMessage) error {
	if n.WebhookID != "" || c.guild == "" {
		return nil
	}
	perms := (&View{st: &w.st}).ChannelPermissions(c.id, n.Author)
	send := PermSendMessages
	if c.typ.IsThread() {
		send = PermSendMessagesInThreads
	}
	switch {
	case perms&PermViewChannel == 0:
		return ErrMissingAccess
	case perms&send == 0, len(n.Files) > 0 && perms&PermAttachFiles == 0:
		return ErrMissingPermissions
	case n.Reference != nil && n.Reference.MessageID != "" && perms&PermReadMessageHistory == 0:
		return ErrCannotReference
	}
	if perms&PermEmbedLinks == 0 {
		n.Embeds = nil
	}
	return nil
}

// checkEditLocked refuses an edit its author may not make in c: without View Channel 403
// Missing Access (50001). An edit needs no Send Messages on Discord (an author who lost it may
// still edit); without Embed Links the edit's embeds are dropped. The interaction webhook
// needs no permission.
func (w *World) checkEditLocked(c *channel, e *MessageEdit) error {
	if e.ViaWebhook || c.guild == "" {
		return nil
	}
	perms := (&View{st: &w.st}).ChannelPermissions(c.id, e.Editor)
	if perms&PermViewChannel == 0 {
		return ErrMissingAccess
	}
	if perms&PermEmbedLinks == 0 {
		e.Embeds = nil // the message keeps the embeds it had
	}
	return nil
}

// mayMentionEveryoneLocked reports whether m's author may ping @everyone and @here in its
// channel (Mention Everyone; an interaction response, through the webhook, may).
func (w *World) mayMentionEveryoneLocked(m *Message) bool {
	if m.WebhookID != "" || m.GuildID == "" {
		return true
	}
	return (&View{st: &w.st}).ChannelPermissions(m.ChannelID, m.Author)&PermMentionEveryone != 0
}
