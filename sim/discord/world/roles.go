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

// maxNick is the longest nickname Discord takes (in characters).
const maxNick = 32

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

// addRoleLocked appends r to gd's roles (at the next position) and reports it.
func (w *World) addRoleLocked(gd *guild, r Role) Role {
	r.Position = len(gd.roles)
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
// as is.
func (w *World) GiveRole(g GuildID, u UserID, r RoleID) error {
	return w.setMemberRole("give role", g, u, r, true)
}

// TakeRole removes a role from a member (GUILD_MEMBER_UPDATE); a member without it is left as
// is.
func (w *World) TakeRole(g GuildID, u UserID, r RoleID) error {
	return w.setMemberRole("take role", g, u, r, false)
}

// setMemberRole gives (hold) or takes role r from member u of g, reporting a change.
// @everyone is everyone's: giving it changes nothing.
func (w *World) setMemberRole(op string, g GuildID, u UserID, r RoleID, hold bool) error {
	w.lock()
	defer w.mu.Unlock()
	_, m, err := w.memberLocked(op, g, u)
	if err != nil {
		return err
	}
	if _, _, err := w.roleLocked(op, g, r); err != nil {
		return err
	}
	if r == RoleID(g) || slices.Contains(m.Roles, r) == hold {
		return nil
	}
	if hold {
		m.Roles = append(m.Roles, r)
	} else {
		m.Roles = slices.DeleteFunc(m.Roles, func(x RoleID) bool { return x == r })
	}
	w.emitLocked(MemberUpdated{Guild: g, User: u})
	return nil
}

// SetNick sets a member's nickname in a guild ("" clears it; GUILD_MEMBER_UPDATE).
func (w *World) SetNick(g GuildID, u UserID, nick string) error {
	w.lock()
	defer w.mu.Unlock()
	_, m, err := w.memberLocked("set nick", g, u)
	if err != nil {
		return err
	}
	if utf8.RuneCountInString(nick) > maxNick {
		return fmt.Errorf("set nick: nick %q: at most %d characters", nick, maxNick)
	}
	if m.Nick == nick {
		return nil
	}
	m.Nick = nick
	w.emitLocked(MemberUpdated{Guild: g, User: u})
	return nil
}
