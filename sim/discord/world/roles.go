package world

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Roles and members' roles and nicknames. Each change is an event the gateway turns into what
// Discord sends: GUILD_ROLE_CREATE, GUILD_ROLE_UPDATE and GUILD_ROLE_DELETE (RoleCreated,
// RoleUpdated, RoleDeleted) and GUILD_MEMBER_UPDATE (MemberUpdated).
// https://discord.com/developers/docs/events/gateway-events#guild-role-create

// MaxNick is the longest nickname Discord takes (in characters).
const MaxNick = 32

// maxRoleName is the longest role name Discord takes (in characters).
const maxRoleName = 100

// roleLocked returns guild g and the index of its role r, or an error naming op. w.mu must be
// held.
func (w *World) roleLocked(op string, g GuildID, r RoleID) (*guild, int, error) {
	gd, err := w.guildLocked(op, g)
	if err != nil {
		return nil, 0, err
	}
	i := slices.IndexFunc(gd.roles, func(x Role) bool { return x.ID == r })
	if i < 0 {
		return nil, 0, fmt.Errorf("%s: unknown role %s in guild %s", op, r, g)
	}
	return gd, i, nil
}

// memberLocked returns guild g and u's membership of it, or an error naming op. w.mu must be
// held.
func (w *World) memberLocked(op string, g GuildID, u UserID) (*guild, *Member, error) {
	gd, err := w.guildLocked(op, g)
	if err != nil {
		return nil, nil, err
	}
	m := gd.members[u]
	if m == nil {
		return nil, nil, fmt.Errorf("%s: %s is not a member of %s", op, u, g)
	}
	return gd, m, nil
}

func checkRoleName(name string) error {
	if name == "" || utf8.RuneCountInString(name) > maxRoleName {
		return fmt.Errorf("role name %q: must be 1 to %d characters", name, maxRoleName)
	}
	return nil
}

func checkPermissions(permissions string) error {
	if _, err := strconv.ParseUint(permissions, 10, 64); err != nil {
		return fmt.Errorf("permissions %q: want a decimal bit set, e.g. \"8\"", permissions)
	}
	return nil
}

// newRolePosition is where Discord puts a new role, a bot's managed role included: position 1,
// just above @everyone (0). No other role moves, so several roles may share position 1; among
// roles of equal position the older (lower id) is the higher, so a new role is the lowest but
// @everyone. The role object's doc: "roles with the same position are sorted by id"; a
// discord.js maintainer: "Roles will only change the position when actually moved. In other
// words: If you create multiple roles they will have the same position."
// (discordjs/discord.js#3308); discord.js's RoleManager.comparePositions breaks a tie for the
// lower id.
// https://discord.com/developers/docs/topics/permissions#role-object
const newRolePosition = 1

// addRoleLocked appends r to gd's roles (at position 1) and reports it.
func (w *World) addRoleLocked(gd *guild, r Role) Role {
	r.Position = newRolePosition
	gd.roles = append(gd.roles, r)
	w.emitLocked(RoleCreated{Guild: gd.id, Role: r})
	return r
}

// CreateRole creates a mentionable role with no permissions in a guild (GUILD_ROLE_CREATE).
func (w *World) CreateRole(g GuildID, name string) (RoleID, error) {
	return w.CreateRoleWithPermissions(g, name, "0")
}

// CreateRoleWithPermissions creates a mentionable role with permissions (a decimal bit set, as
// on the wire) in a guild (one GUILD_ROLE_CREATE, as Discord's POST /guilds/{id}/roles).
func (w *World) CreateRoleWithPermissions(g GuildID, name, permissions string) (RoleID, error) {
	w.lock()
	defer w.mu.Unlock()
	gd, err := w.guildLocked("create role", g)
	if err != nil {
		return "", err
	}
	if err := errors.Join(checkRoleName(name), checkPermissions(permissions)); err != nil {
		return "", fmt.Errorf("create role: %w", err)
	}
	r := w.addRoleLocked(gd, Role{ID: RoleID(w.ids.nextString()), Name: name, Permissions: permissions})
	return r.ID, nil
}

// CreateBotRole makes the bot's own managed role in a guild, as Discord does when the bot is
// invited with permissions: named after the bot, managed, tagged with its id, mentionable (so
// a member's "@banter" may pick it instead of the bot user) and held by the bot. Connected
// sessions get GUILD_ROLE_CREATE, then GUILD_MEMBER_UPDATE for the bot (the bot's own sessions
// whatever their intents). The bot has one such role per guild.
func (w *World) CreateBotRole(g GuildID) (RoleID, error) {
	w.lock()
	defer w.mu.Unlock()
	gd, self, err := w.memberLocked("create bot role", g, w.st.bot)
	if err != nil {
		return "", err
	}
	if i := slices.IndexFunc(gd.roles, func(x Role) bool { return x.BotID == w.st.bot }); i >= 0 {
		return "", fmt.Errorf("create bot role: the bot already has its role %s in %s", gd.roles[i].ID, g)
	}
	name := "bot"
	if u := w.st.users[w.st.bot]; u != nil {
		name = u.name
	}
	r := w.addRoleLocked(gd, Role{ID: RoleID(w.ids.nextString()), Name: name, Permissions: "0", Managed: true, BotID: w.st.bot})
	self.Roles = append(self.Roles, r.ID)
	w.emitLocked(MemberUpdated{Guild: g, User: w.st.bot})
	return r.ID, nil
}

// editRole changes role r of guild g with edit and reports it (GUILD_ROLE_UPDATE).
func (w *World) editRole(op string, g GuildID, r RoleID, edit func(*Role) error) error {
	w.lock()
	defer w.mu.Unlock()
	gd, i, err := w.roleLocked(op, g, r)
	if err != nil {
		return err
	}
	changed := gd.roles[i]
	if err := edit(&changed); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	gd.roles[i] = changed
	w.emitLocked(RoleUpdated{Guild: g, Role: changed})
	return nil
}

// SetRolePermissions sets a role's permissions (a decimal bit set, as on the wire): the
// members holding it get them (GUILD_ROLE_UPDATE).
func (w *World) SetRolePermissions(g GuildID, r RoleID, permissions string) error {
	return w.editRole("set role permissions", g, r, func(x *Role) error {
		if err := checkPermissions(permissions); err != nil {
			return err
		}
		x.Permissions = permissions
		return nil
	})
}

// RenameRole renames a role (GUILD_ROLE_UPDATE); @everyone keeps its name.
func (w *World) RenameRole(g GuildID, r RoleID, name string) error {
	return w.editRole("rename role", g, r, func(x *Role) error {
		if x.ID == RoleID(g) {
			return errors.New("@everyone cannot be renamed")
		}
		if err := checkRoleName(name); err != nil {
			return err
		}
		x.Name = name
		return nil
	})
}

// DeleteRole deletes a role (GUILD_ROLE_DELETE): its holders lose it, as on Discord, with no
// GUILD_MEMBER_UPDATE each (clients drop it from their members themselves). @everyone and a
// managed role (a bot's, which goes when its bot leaves) cannot be deleted.
func (w *World) DeleteRole(g GuildID, r RoleID) error {
	w.lock()
	defer w.mu.Unlock()
	gd, i, err := w.roleLocked("delete role", g, r)
	if err != nil {
		return err
	}
	switch {
	case r == RoleID(g):
		return fmt.Errorf("delete role: @everyone cannot be deleted")
	case gd.roles[i].Managed:
		return fmt.Errorf("delete role: %s is managed by an integration", r)
	}
	w.deleteRoleLocked(gd, i)
	return nil
}

// deleteRoleLocked removes gd's i-th role from the guild and its holders and reports it.
func (w *World) deleteRoleLocked(gd *guild, i int) {
	r := gd.roles[i].ID
	gd.roles = slices.Delete(gd.roles, i, i+1)
	for _, m := range gd.members {
		m.Roles = slices.DeleteFunc(m.Roles, func(x RoleID) bool { return x == r })
	}
	w.emitLocked(RoleDeleted{Guild: gd.id, Role: r})
}

// deleteBotRolesLocked deletes the managed roles made for bot u in gd, as Discord does when the
// bot leaves or is removed from a guild.
func (w *World) deleteBotRolesLocked(gd *guild, u UserID) {
	for i := len(gd.roles) - 1; i >= 0; i-- {
		if gd.roles[i].Managed && gd.roles[i].BotID == u {
			w.deleteRoleLocked(gd, i)
		}
	}
}

// GiveRole adds a role to a member (GUILD_MEMBER_UPDATE); a member holding it already is left
// as is. A managed role is refused as Discord refuses it (ErrManagedRole).
func (w *World) GiveRole(g GuildID, u UserID, r RoleID) error {
	return w.changeRoles("give role", "", g, u, func(cur []RoleID) []RoleID {
		return append(cur, r)
	}, []RoleID{r})
}

// TakeRole removes a role from a member (GUILD_MEMBER_UPDATE); a member without it is left as
// is. A managed role is refused as Discord refuses it (ErrManagedRole).
func (w *World) TakeRole(g GuildID, u UserID, r RoleID) error {
	return w.changeRoles("take role", "", g, u, func(cur []RoleID) []RoleID {
		return slices.DeleteFunc(cur, func(x RoleID) bool { return x == r })
	}, []RoleID{r})
}

// MemberRoleChange is a change of a member's roles through Discord's REST API, by the user By:
// Add or Remove one role (PUT or DELETE /guilds/{g}/members/{u}/roles/{r}), or Set the member's
// whole list (Set non-nil; the REST PATCH /guilds/{g}/members/{u} goes through ModifyMember,
// which checks "roles" the same way along with the request's other fields).
type MemberRoleChange struct {
	Guild  GuildID
	User   UserID
	By     UserID
	Add    RoleID
	Remove RoleID
	Set    []RoleID
}

// ChangeMemberRoles applies a REST change of a member's roles (one GUILD_MEMBER_UPDATE if the
// roles changed), with Discord's checks and answers: an unknown member 404 10007, an unknown
// role 404 10011, a caller without Manage Roles, or a role not below the
// caller's highest role (unless the caller owns the guild), 403 50013, and a managed role
// added or removed 403 50013 (ErrManagedRole).
// https://discord.com/developers/docs/resources/guild#add-guild-member-role
func (w *World) ChangeMemberRoles(c MemberRoleChange) error {
	op, named := "change member roles", []RoleID{c.Add}
	switch {
	case c.Set != nil:
		named = c.Set
	case c.Remove != "":
		named = []RoleID{c.Remove}
	}
	if c.By == "" {
		return fmt.Errorf("%s: no caller", op)
	}
	return w.changeRoles(op, c.By, c.Guild, c.User, func(cur []RoleID) []RoleID {
		switch {
		case c.Set != nil:
			return slices.Clone(c.Set)
		case c.Remove != "":
			return slices.DeleteFunc(cur, func(x RoleID) bool { return x == c.Remove })
		}
		return append(cur, c.Add)
	}, named)
}

// changeRoles replaces member u's roles in g with what next makes of them, reporting a change
// (GUILD_MEMBER_UPDATE). named are the roles the request names, each of which must exist. by
// is the REST caller whose permissions are checked, or "" for the world's own scripting (an
// administrator in the playground or a test), which only the managed-role rule binds.
// @everyone is everyone's: it is never held explicitly.
func (w *World) changeRoles(op string, by UserID, g GuildID, u UserID, next func([]RoleID) []RoleID, named []RoleID) error {
	w.lock()
	defer w.mu.Unlock()
	gd, err := w.guildLocked(op, g)
	if err != nil {
		if by != "" {
			return ErrUnknownGuild
		}
		return err
	}
	m := gd.members[u]
	if m == nil {
		if by != "" {
			return ErrUnknownMember
		}
		return fmt.Errorf("%s: %s is not a member of %s", op, u, g)
	}
	roles, changed, err := w.planRolesLocked(op, by, gd, m, next, named)
	if err != nil || !changed {
		return err
	}
	m.Roles = roles
	w.emitLocked(MemberUpdated{Guild: g, User: u})
	return nil
}

// planRolesLocked works out member m's roles after next, checked as changeRoles says, and
// changes nothing: it returns the new list and whether it differs from m's. w.mu must be
// held.
func (w *World) planRolesLocked(op string, by UserID, gd *guild, m *Member, next func([]RoleID) []RoleID, named []RoleID) ([]RoleID, bool, error) {
	for _, r := range named {
		if !slices.ContainsFunc(gd.roles, func(x Role) bool { return x.ID == r }) {
			if by != "" {
				return nil, false, ErrUnknownRole
			}
			return nil, false, fmt.Errorf("%s: unknown role %s in guild %s", op, r, gd.id)
		}
	}
	want := next(slices.Clone(m.Roles))
	want = slices.DeleteFunc(want, func(x RoleID) bool { return x == RoleID(gd.id) })
	slices.Sort(want)
	want = slices.Compact(want)
	var changed []RoleID
	for _, r := range want {
		if !slices.Contains(m.Roles, r) {
			changed = append(changed, r)
		}
	}
	for _, r := range m.Roles {
		if !slices.Contains(want, r) {
			changed = append(changed, r)
		}
	}
	if len(changed) == 0 {
		return m.Roles, false, nil
	}
	for _, r := range changed {
		role := gd.roles[slices.IndexFunc(gd.roles, func(x Role) bool { return x.ID == r })]
		if role.Managed {
			return nil, false, fmt.Errorf("%s: %s (%s) is managed by an integration: %w", op, r, role.Name, ErrManagedRole)
		}
		if by != "" {
			if err := w.mayAssignLocked(gd, by, role); err != nil {
				return nil, false, fmt.Errorf("%s: %w", op, err)
			}
		}
	}
	// Keep the member's order: the roles held before, then the new ones in the order given.
	kept := slices.DeleteFunc(slices.Clone(m.Roles), func(x RoleID) bool { return !slices.Contains(want, x) })
	for _, r := range changed {
		if slices.Contains(want, r) && !slices.Contains(kept, r) {
			kept = append(kept, r)
		}
	}
	return kept, true, nil
}

// mayAssignLocked checks that by may give or take role r in gd, as Discord does: the owner
// may; anyone else needs Manage Roles (Administrator grants it) and a highest role above r.
// https://discord.com/developers/docs/topics/permissions#permission-hierarchy
func (w *World) mayAssignLocked(gd *guild, by UserID, r Role) error {
	if gd.owner == by {
		return nil
	}
	v := &View{st: &w.st}
	perms := v.MemberPermissions(gd.id, by)
	if perms&(PermManageRoles|PermAdministrator) == 0 {
		return fmt.Errorf("%s lacks Manage Roles: %w", by, ErrMissingPermissions)
	}
	top := topRoleLocked(gd, by)
	if !roleAbove(top, r) {
		return fmt.Errorf("%s's highest role %s is not above %s: %w", by, top.ID, r.ID, ErrMissingPermissions)
	}
	return nil
}

// topRoleLocked returns u's highest role in gd, @everyone for a member holding none. w.mu must
// be held.
func topRoleLocked(gd *guild, u UserID) Role {
	top := gd.roles[0] // @everyone
	if m := gd.members[u]; m != nil {
		for _, id := range m.Roles {
			if i := slices.IndexFunc(gd.roles, func(x Role) bool { return x.ID == id }); i >= 0 && roleAbove(gd.roles[i], top) {
				top = gd.roles[i]
			}
		}
	}
	return top
}

// roleAbove reports whether a is higher than b in the role hierarchy: a higher position, or
// the same position and a lower (older) id, as Discord and discord.js sort them.
func roleAbove(a, b Role) bool {
	if a.Position != b.Position {
		return a.Position > b.Position
	}
	return SnowflakeLess(string(a.ID), string(b.ID))
}
