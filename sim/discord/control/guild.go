package control

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/world"
)

// guildRoutes are the routes for what a server admin does to the guild: remove and add back
// members, nicknames, roles and who holds them, channel permission overwrites, an outage.
// Each is one change of the world, which the gateway sends as Discord does (GUILD_ROLE_*,
// GUILD_MEMBER_UPDATE, GUILD_MEMBER_REMOVE, CHANNEL_UPDATE, GUILD_DELETE/GUILD_CREATE).
func (c *Controller) guildRoutes(mux *http.ServeMux) {
	mux.HandleFunc("PUT /members/{member}", c.addMember)
	mux.HandleFunc("DELETE /members/{member}", c.removeMember)
	mux.HandleFunc("PATCH /members/{member}", c.editMember)
	mux.HandleFunc("PUT /members/{member}/roles/{role}", c.giveRole)
	mux.HandleFunc("DELETE /members/{member}/roles/{role}", c.takeRole)
	mux.HandleFunc("GET /roles", c.listRoles)
	mux.HandleFunc("POST /roles", c.createRole)
	mux.HandleFunc("POST /roles/bot", c.createBotRole)
	mux.HandleFunc("PATCH /roles/{role}", c.editRole)
	mux.HandleFunc("DELETE /roles/{role}", c.deleteRole)
	mux.HandleFunc("PUT /channels/{channel}/permissions/{target}", c.setOverwrite)
	mux.HandleFunc("PATCH /guild", c.editGuild)
	mux.HandleFunc("POST /guild/availability", c.setAvailability)
}

// roleView is a role as the control API shows it.
type roleView struct {
	ID          discordsim.RoleID `json:"id"`
	Name        string            `json:"name"`
	Permissions string            `json:"permissions"`
	Position    int               `json:"position"`
	Managed     bool              `json:"managed"`
	// BotID is the bot a managed role was made for (tags.bot_id).
	BotID discordsim.UserID `json:"bot_id,omitempty"`
}

func (c *Controller) roles() []roleView {
	out := []roleView{}
	c.sim.Read(func(v *world.View) {
		g, _ := v.Guild(c.guild)
		for _, r := range g.Roles {
			out = append(out, roleView{r.ID, r.Name, r.Permissions, r.Position, r.Managed, r.BotID})
		}
	})
	return out
}

// role resolves a role given by id or name ("@everyone" is the guild's).
func (c *Controller) role(name string) (roleView, error) {
	for _, r := range c.roles() {
		if string(r.ID) == name || r.Name == name {
			return r, nil
		}
	}
	return roleView{}, fmt.Errorf("unknown role %q (GET /roles lists them)", name)
}

// memberAndRole resolves the {member} and {role} of a request, answering 404 when either is
// unknown.
func (c *Controller) memberAndRole(w http.ResponseWriter, r *http.Request) (discordsim.UserID, discordsim.RoleID, bool) {
	u, err := c.user(r.PathValue("member"))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return "", "", false
	}
	role, err := c.role(r.PathValue("role"))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return "", "", false
	}
	return u, role.ID, true
}

// done answers a change: when the world refused it, the status Discord answers that refusal
// with (a world.Error's, e.g. 403 for a managed role given by hand) or else 400, with the
// world's reason; otherwise the state now.
func done(w http.ResponseWriter, err error, view func() any) {
	if err != nil {
		status := http.StatusBadRequest
		var we *world.Error
		if errors.As(err, &we) {
			status = we.Status
		}
		fail(w, status, err)
		return
	}
	reply(w, http.StatusOK, view())
}

// memberDetail is the control API's view of one member with its roles and nickname.
type memberDetail struct {
	memberView
	Nick  string              `json:"nick,omitempty"`
	Roles []discordsim.RoleID `json:"roles"`
	// InGuild is false for a user the API knows who is not (or no longer) a member.
	InGuild bool `json:"in_guild"`
}

// memberDetail is u's memberDetail under the name the API knows it by.
func (c *Controller) memberDetail(u discordsim.UserID) any {
	name := ""
	c.mu.Lock()
	for n, id := range c.names {
		if id == u && (name == "" || n < name) {
			name = n
		}
	}
	c.mu.Unlock()
	return c.detailOf(c.memberView(name, u))
}

// detailOf adds m's roles, nickname and membership.
func (c *Controller) detailOf(m memberView) memberDetail {
	d := memberDetail{memberView: m, Roles: []discordsim.RoleID{}}
	c.sim.Read(func(v *world.View) {
		if gm, ok := v.Member(c.guild, m.ID); ok {
			d.InGuild, d.Nick = true, gm.Nick
			d.Roles = append(d.Roles, gm.Roles...)
		}
	})
	return d
}

// rolesDiff adds to out the "role" events of roles new or changed since st and the
// "role_delete" events of roles gone, and updates st.
func (c *Controller) rolesDiff(st *watchState, out *[]event) {
	seen := map[discordsim.RoleID]bool{}
	for _, r := range c.roles() {
		seen[r.ID] = true
		if key := r.Name + "\x00" + r.Permissions; st.roles[r.ID] != key {
			st.roles[r.ID] = key
			*out = append(*out, event{Type: "role", Role: &r})
		}
	}
	for id := range st.roles {
		if !seen[id] {
			delete(st.roles, id)
			*out = append(*out, event{Type: "role_delete", RoleID: id})
		}
	}
}

// pathMember resolves {member}, answering 404 when it is unknown.
func (c *Controller) pathMember(w http.ResponseWriter, r *http.Request) (discordsim.UserID, bool) {
	u, err := c.user(r.PathValue("member"))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return "", false
	}
	return u, true
}

// addMember is PUT /members/{member}: a user the API knows (one removed, or "bot") joins the
// guild again.
func (c *Controller) addMember(w http.ResponseWriter, r *http.Request) {
	if u, ok := c.pathMember(w, r); ok {
		done(w, c.sim.AddMember(c.guild, u), func() any { return c.memberDetail(u) })
	}
}

// removeMember is DELETE /members/{member}: a kick (the bot too: it is removed from the
// server). The name stays known, for PUT /members/{member}.
func (c *Controller) removeMember(w http.ResponseWriter, r *http.Request) {
	if u, ok := c.pathMember(w, r); ok {
		done(w, c.sim.RemoveMember(c.guild, u), func() any { return c.memberDetail(u) })
	}
}

// editMember is PATCH /members/{member} {"nick": "..."} ("" clears it).
func (c *Controller) editMember(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Nick *string `json:"nick"`
	}
	u, ok := c.pathMember(w, r)
	if !ok || !decode(w, r, &in) {
		return
	}
	if in.Nick == nil {
		fail(w, http.StatusBadRequest, errors.New(`"nick" is required (a nickname, or "" to clear it)`))
		return
	}
	done(w, c.sim.SetNick(c.guild, u, *in.Nick), func() any { return c.memberDetail(u) })
}

func (c *Controller) giveRole(w http.ResponseWriter, r *http.Request) {
	if u, role, ok := c.memberAndRole(w, r); ok {
		done(w, c.sim.GiveRole(c.guild, u, role), func() any { return c.memberDetail(u) })
	}
}

func (c *Controller) takeRole(w http.ResponseWriter, r *http.Request) {
	if u, role, ok := c.memberAndRole(w, r); ok {
		done(w, c.sim.TakeRole(c.guild, u, role), func() any { return c.memberDetail(u) })
	}
}

func (c *Controller) listRoles(w http.ResponseWriter, _ *http.Request) {
	reply(w, http.StatusOK, c.roles())
}

// roleEdit is the body of POST /roles and PATCH /roles/{role}.
type roleEdit struct {
	Name        *string `json:"name"`
	Permissions *string `json:"permissions"`
}

// apply applies the edit's fields to role id.
func (c *Controller) apply(id discordsim.RoleID, e roleEdit) error {
	if e.Name != nil {
		if err := c.sim.RenameRole(c.guild, id, *e.Name); err != nil {
			return err
		}
	}
	if e.Permissions != nil {
		return c.sim.SetRolePermissions(c.guild, id, *e.Permissions)
	}
	return nil
}

// roleAnswer answers with role id as it is now.
func (c *Controller) roleAnswer(w http.ResponseWriter, status int, id discordsim.RoleID) {
	role, err := c.role(string(id))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return
	}
	reply(w, status, role)
}

// createRole is POST /roles {"name", "permissions"}: a mentionable role (permissions "0"
// unless given, a decimal bit set).
func (c *Controller) createRole(w http.ResponseWriter, r *http.Request) {
	var in roleEdit
	if !decode(w, r, &in) {
		return
	}
	if in.Name == nil {
		fail(w, http.StatusBadRequest, errors.New(`"name" is required`))
		return
	}
	perms := "0"
	if in.Permissions != nil {
		perms = *in.Permissions
	}
	id, err := c.sim.CreateRoleWithPermissions(c.guild, *in.Name, perms)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	c.roleAnswer(w, http.StatusCreated, id)
}

// createBotRole is POST /roles/bot: the bot's managed role, held by the bot, as Discord makes
// it when the bot is invited with permissions (409 when the bot has it already).
func (c *Controller) createBotRole(w http.ResponseWriter, _ *http.Request) {
	id, err := c.sim.CreateBotRole(c.guild)
	if err != nil {
		fail(w, http.StatusConflict, err)
		return
	}
	c.roleAnswer(w, http.StatusCreated, id)
}

// editRole is PATCH /roles/{role} {"name", "permissions"} (fields left out stay).
func (c *Controller) editRole(w http.ResponseWriter, r *http.Request) {
	role, err := c.role(r.PathValue("role"))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return
	}
	var in roleEdit
	if !decode(w, r, &in) {
		return
	}
	if err := c.apply(role.ID, in); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	c.roleAnswer(w, http.StatusOK, role.ID)
}

func (c *Controller) deleteRole(w http.ResponseWriter, r *http.Request) {
	role, err := c.role(r.PathValue("role"))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return
	}
	done(w, c.sim.DeleteRole(c.guild, role.ID), func() any { return c.roles() })
}

// setOverwrite is PUT /channels/{channel}/permissions/{target} {"type": "role" | "member",
// "allow", "deny"}: the channel's overwrite for a role or member (by name or id), as Discord's
// route of the same shape; CHANNEL_UPDATE follows.
func (c *Controller) setOverwrite(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Type  string `json:"type"`
		Allow string `json:"allow"`
		Deny  string `json:"deny"`
	}
	ch, err := c.channel(r.PathValue("channel"))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return
	}
	if !decode(w, r, &in) {
		return
	}
	o := world.Overwrite{Allow: orZero(in.Allow), Deny: orZero(in.Deny)}
	id, isRole, err := c.target(in.Type, r.PathValue("target"))
	if err != nil {
		status := http.StatusNotFound // an unknown role or member
		if in.Type != "role" && in.Type != "member" {
			status = http.StatusBadRequest
		}
		fail(w, status, err)
		return
	}
	o.ID, o.Type = id, world.OverwriteMember
	if isRole {
		o.Type = world.OverwriteRole
	}
	done(w, c.sim.SetChannelOverwrite(ch, o), func() any { return c.overwrites(ch) })
}

// target resolves what an overwrite or a command override is for: a role (typ "role") or a
// member ("member"), by name or id.
func (c *Controller) target(typ, name string) (id string, isRole bool, err error) {
	switch typ {
	case "role":
		r, err := c.role(name)
		return string(r.ID), true, err
	case "member":
		u, err := c.user(name)
		return string(u), false, err
	}
	return "", false, fmt.Errorf(`"type" %q: allowed values are role, member`, typ)
}

func orZero(bits string) string {
	if strings.TrimSpace(bits) == "" {
		return "0"
	}
	return bits
}

type overwriteView struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Allow string `json:"allow"`
	Deny  string `json:"deny"`
}

// overwrites is channel ch's overwrites now.
func (c *Controller) overwrites(ch discordsim.ChannelID) any {
	out := []overwriteView{}
	c.sim.Read(func(v *world.View) {
		x, _ := v.Channel(ch)
		for _, o := range x.Overwrites {
			typ := "role"
			if o.Type == world.OverwriteMember {
				typ = "member"
			}
			out = append(out, overwriteView{o.ID, typ, o.Allow, o.Deny})
		}
	})
	return struct {
		Channel    discordsim.ChannelID `json:"channel_id"`
		Overwrites []overwriteView      `json:"overwrites"`
	}{ch, out}
}

// setAvailability is POST /guild/availability {"available": false | true}: an outage of the
// guild starts (GUILD_DELETE with unavailable true to its members' sessions) or ends
// (GUILD_CREATE).
func (c *Controller) setAvailability(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Available *bool `json:"available"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Available == nil {
		fail(w, http.StatusBadRequest, errors.New(`"available" is required (true or false)`))
		return
	}
	done(w, c.sim.SetGuildAvailable(c.guild, *in.Available), func() any {
		return struct {
			Guild     discordsim.GuildID `json:"guild_id"`
			Available bool               `json:"available"`
		}{c.guild, *in.Available}
	})
}
