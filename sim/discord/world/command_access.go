package world

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Who may use an application command: its default_member_permissions, unless a guild admin
// has set overrides for it in the guild (in the client: Server Settings, Integrations).
// https://discord.com/developers/docs/interactions/application-commands#permissions

// Permission bits the world reads.
const (
	permAdministrator = 1 << 3
	// AllPermissions is every permission bit: an owner's or Administrator's set.
	AllPermissions = 1<<53 - 1
)

// ErrCommandHidden is InvokeCommand's error when Discord's client would not offer the
// command to the member: it lacks the command's default_member_permissions (and no
// override allows it), or an override denies it.
var ErrCommandHidden = errors.New("the command is not shown to this member")

// CommandPermissionType says what a CommandPermission names, as on the wire.
type CommandPermissionType int

// Command permission targets.
const (
	CommandPermissionRole CommandPermissionType = 1
	CommandPermissionUser CommandPermissionType = 2
)

// CommandPermission is one override of a command in a guild: a role (the guild's id is
// @everyone) or a user, allowed or denied.
type CommandPermission struct {
	ID         string
	Type       CommandPermissionType
	Permission bool
}

// memberPermissionsLocked is u's permissions in g: @everyone's and those of u's roles
// together; the owner and an Administrator hold every one.
func memberPermissionsLocked(g *guild, u UserID) uint64 {
	var perms uint64
	m := g.members[u]
	for _, r := range g.roles {
		if r.ID == RoleID(g.id) || m != nil && slices.Contains(m.Roles, r.ID) {
			p, _ := strconv.ParseUint(r.Permissions, 10, 64)
			perms |= p
		}
	}
	if g.owner == u || perms&permAdministrator != 0 {
		perms = AllPermissions
	}
	return perms
}

// MemberPermissions returns u's permissions in guild g (0 for an unknown guild).
func (v *View) MemberPermissions(g GuildID, u UserID) uint64 {
	gd := v.st.guilds[g]
	if gd == nil {
		return 0
	}
	return memberPermissionsLocked(gd, u)
}

// SetCommandPermissions replaces guild g's overrides of command id, as a guild admin does
// in the client; nil removes them.
func (w *World) SetCommandPermissions(g GuildID, id CommandID, perms []CommandPermission) error {
	w.lock()
	defer w.mu.Unlock()
	gd := w.st.guilds[g]
	if gd == nil {
		return fmt.Errorf("set command permissions: unknown guild %s", g)
	}
	if c := w.st.commands[id]; c == nil || c.Guild != "" && c.Guild != g {
		return fmt.Errorf("set command permissions: unknown command %s in guild %s", id, g)
	}
	if gd.commandPerms == nil {
		gd.commandPerms = map[CommandID][]CommandPermission{}
	}
	if perms == nil {
		delete(gd.commandPerms, id)
	} else {
		gd.commandPerms[id] = slices.Clone(perms)
	}
	w.emitLocked(Changed{What: "command"})
	return nil
}

// mayUseLocked reports whether member u of g is offered command c. An override for the user
// decides; else those for u's roles (any allowed: allowed; else any denied: denied); else
// the one for @everyone; else default_member_permissions: absent lets every member, "0"
// only Administrators (and the owner), else the member must hold every bit of it.
// Channel and application-wide overrides are not modelled.
func mayUseLocked(g *guild, u UserID, c *Command) bool {
	overrides := g.commandPerms[c.ID]
	if p, ok := findOverride(overrides, CommandPermissionUser, string(u)); ok {
		return p
	}
	var allowed, denied bool
	if m := g.members[u]; m != nil {
		for _, r := range m.Roles {
			if p, ok := findOverride(overrides, CommandPermissionRole, string(r)); ok {
				allowed, denied = allowed || p, denied || !p
			}
		}
	}
	if allowed || denied {
		return allowed
	}
	if p, ok := findOverride(overrides, CommandPermissionRole, string(g.id)); ok {
		return p
	}
	if c.DefaultMemberPermissions == nil {
		return true
	}
	need, err := strconv.ParseUint(*c.DefaultMemberPermissions, 10, 64)
	if err != nil {
		return false
	}
	have := memberPermissionsLocked(g, u)
	if need == 0 {
		return have == AllPermissions
	}
	return have&need == need
}

func findOverride(ps []CommandPermission, t CommandPermissionType, id string) (allowed, found bool) {
	for _, p := range ps {
		if p.Type == t && p.ID == id {
			return p.Permission, true
		}
	}
	return false, false
}
