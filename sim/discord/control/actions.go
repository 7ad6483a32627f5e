package control

import (
	"errors"
	"fmt"
	"net/http"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/world"
)

// actionRoutes are the routes for the rest of what people do in Discord's client: type, run a
// slash command (and read the application's answer), a server admin's per-command overrides,
// a moderator moving someone (the bot too) to another voice channel or out of voice.
func (c *Controller) actionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /typing", c.typing)
	mux.HandleFunc("POST /commands/{name}", c.invokeCommand)
	mux.HandleFunc("PUT /commands/{name}/permissions", c.setCommandPermissions)
	mux.HandleFunc("GET /interactions/{id}", c.interaction)
	mux.HandleFunc("POST /voice/move", c.moveVoice)
}

// asIn is a body naming a member and a channel.
type asIn struct {
	As      string `json:"as"`
	Channel string `json:"channel"`
}

// placeView is where a member is: typing, or in voice (no channel: out of voice).
type placeView struct {
	User    discordsim.UserID    `json:"user_id"`
	Channel discordsim.ChannelID `json:"channel_id,omitempty"`
}

// resolve resolves a.As and a.Channel, answering 400 when either is unknown.
func (c *Controller) resolve(w http.ResponseWriter, a asIn) (discordsim.UserID, discordsim.ChannelID, bool) {
	u, err := c.user(a.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return "", "", false
	}
	ch, err := c.channel(a.Channel)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return "", "", false
	}
	return u, ch, true
}

// decodeAs reads a body {"as", "channel"} and resolves both, answering 400 when it cannot.
func (c *Controller) decodeAs(w http.ResponseWriter, r *http.Request) (discordsim.UserID, discordsim.ChannelID, bool) {
	var in asIn
	if !decode(w, r, &in) {
		return "", "", false
	}
	return c.resolve(w, in)
}

// typing is POST /typing {"as", "channel"}: the member starts typing (TYPING_START).
func (c *Controller) typing(w http.ResponseWriter, r *http.Request) {
	u, ch, ok := c.decodeAs(w, r)
	if !ok {
		return
	}
	if err := c.sim.StartTyping(u, ch); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	reply(w, http.StatusOK, placeView{u, ch})
}

// interactionView is an interaction as the control API shows it: what was run, by whom, and
// the application's answer once it came.
type interactionView struct {
	ID        discordsim.InteractionID `json:"id"`
	Command   string                   `json:"command"`
	User      discordsim.UserID        `json:"user_id"`
	Channel   discordsim.ChannelID     `json:"channel_id"`
	Responded bool                     `json:"responded"`
	// ResponseType is the callback type (4 a message, 5 deferred); Message is the response
	// message once there is one (a deferred response's when the application edits it).
	ResponseType int          `json:"response_type,omitempty"`
	Message      *messageView `json:"message,omitempty"`
}

func (c *Controller) interactionView(it discordsim.Interaction) interactionView {
	v := interactionView{ID: it.ID, Command: it.Command, User: it.User, Channel: it.Channel}
	if resp := it.Response; resp != nil {
		v.Responded, v.ResponseType = true, int(resp.Type)
		if m, ok := c.sim.Message(resp.Message); ok && resp.Message != "" {
			mv := c.view(m)
			v.Message = &mv
		}
	}
	return v
}

// invokeCommand is POST /commands/{name} {"as", "channel", "options"}: the member runs the
// slash command (INTERACTION_CREATE to the bot). 403 when Discord's client would not offer it
// to the member, 409 while the guild is in an outage; GET /interactions/{id} reads the answer.
func (c *Controller) invokeCommand(w http.ResponseWriter, r *http.Request) {
	var in struct {
		asIn
		Options []world.CommandOption `json:"options"`
	}
	if !decode(w, r, &in) {
		return
	}
	u, ch, ok := c.resolve(w, in.asIn)
	if !ok {
		return
	}
	it, err := c.sim.InvokeCommand(u, ch, r.PathValue("name"), in.Options...)
	switch {
	case errors.Is(err, world.ErrCommandHidden):
		fail(w, http.StatusForbidden, err)
	case errors.Is(err, world.ErrGuildUnavailable):
		fail(w, http.StatusConflict, err)
	case err != nil:
		fail(w, http.StatusBadRequest, err)
	default:
		reply(w, http.StatusCreated, c.interactionView(it))
	}
}

// interaction is GET /interactions/{id}: the interaction and the application's answer so far;
// with ?wait=1 it answers once the application has responded (or the client gives up).
func (c *Controller) interaction(w http.ResponseWriter, r *http.Request) {
	id := discordsim.InteractionID(r.PathValue("id"))
	if _, ok := c.sim.InteractionOf(id); !ok {
		fail(w, http.StatusNotFound, fmt.Errorf("unknown interaction %q", id))
		return
	}
	if r.URL.Query().Get("wait") == "1" {
		err := c.sim.Await(r.Context(), func() bool {
			it, _ := c.sim.InteractionOf(id)
			return it.Response != nil
		})
		if err != nil {
			return // the client went away
		}
	}
	it, _ := c.sim.InteractionOf(id)
	reply(w, http.StatusOK, c.interactionView(it))
}

// commandID finds the slash command called name (the guild's first, then global).
func (c *Controller) commandID(name string) (discordsim.CommandID, error) {
	for _, scope := range []discordsim.GuildID{c.guild, ""} {
		for _, cmd := range c.sim.Commands(scope) {
			if cmd.Name == name {
				return cmd.ID, nil
			}
		}
	}
	return "", fmt.Errorf("no command %q is registered", name)
}

// commandPermissionView is one override as set: the role's or member's id.
type commandPermissionView struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Permission bool   `json:"permission"`
}

// setCommandPermissions is PUT /commands/{name}/permissions {"permissions": [{"type": "role"
// | "member", "target": NAME or ID, "permission": true | false}]}: a server admin's overrides
// of who is offered the command in the guild (an empty list removes them).
func (c *Controller) setCommandPermissions(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Permissions []struct {
			Type       string `json:"type"`
			Target     string `json:"target"`
			Permission bool   `json:"permission"`
		} `json:"permissions"`
	}
	id, err := c.commandID(r.PathValue("name"))
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return
	}
	if !decode(w, r, &in) {
		return
	}
	perms, views := []world.CommandPermission{}, []commandPermissionView{}
	for i, p := range in.Permissions {
		who, isRole, err := c.target(p.Type, p.Target)
		if err != nil {
			fail(w, http.StatusBadRequest, fmt.Errorf("permissions[%d]: %w", i, err))
			return
		}
		cp := world.CommandPermission{ID: who, Type: world.CommandPermissionUser, Permission: p.Permission}
		if isRole {
			cp.Type = world.CommandPermissionRole
		}
		perms = append(perms, cp)
		views = append(views, commandPermissionView{cp.ID, p.Type, p.Permission})
	}
	if err := c.sim.SetCommandPermissions(c.guild, id, perms); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	reply(w, http.StatusOK, struct {
		Command     discordsim.CommandID    `json:"command_id"`
		Permissions []commandPermissionView `json:"permissions"`
	}{id, views})
}

// moveVoice is POST /voice/move {"as", "channel"}: a moderator moves the member (or the bot,
// "as": "bot") to another voice channel, or with "channel": "" disconnects it from voice.
func (c *Controller) moveVoice(w http.ResponseWriter, r *http.Request) {
	var in asIn
	if !decode(w, r, &in) {
		return
	}
	u, err := c.user(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	var ch discordsim.ChannelID
	if in.Channel != "" {
		if ch, err = c.channel(in.Channel); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
	}
	if err := c.sim.MoveVoice(c.guild, u, ch); err != nil {
		fail(w, http.StatusConflict, err)
		return
	}
	reply(w, http.StatusOK, placeView{u, ch})
}
