package discordsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/banterbot/banter/sim/discord/world"
)

// REST routes for the gateway URL, users, guilds and channels.

// GET /gateway and GET /gateway/bot (§4 B). The URL is bare, with no path,
// so that discordgo and discord.js request the same "/?v=…".
func (a *restAPI) getGateway(*apiRequest) (int, any, error) {
	return http.StatusOK, map[string]string{"url": a.gatewayURL()}, nil
}

func (a *restAPI) getGatewayBot(*apiRequest) (int, any, error) {
	type limit struct {
		Total          int `json:"total"`
		Remaining      int `json:"remaining"`
		ResetAfter     int `json:"reset_after"`
		MaxConcurrency int `json:"max_concurrency"`
	}
	return http.StatusOK, struct {
		URL    string `json:"url"`
		Shards int    `json:"shards"`
		Limit  limit  `json:"session_start_limit"`
	}{a.gatewayURL(), max(a.cfg.shards, 1), limit{1000, 999, 14400000, max(a.cfg.maxConcurrency, 1)}}, nil
}

func (a *restAPI) getMe(q *apiRequest) (int, any, error) {
	return a.ok(func(v *world.View) any { return wireSelfUserOf(v, q.user) })
}

func (a *restAPI) getUser(q *apiRequest) (int, any, error) {
	id := UserID(q.PathValue("user_id"))
	var out any
	a.world.Read(func(v *world.View) {
		if _, ok := v.User(id); ok {
			out = wireUserOf(v, id)
		}
	})
	if out == nil {
		return 0, nil, world.ErrUnknownUser
	}
	return http.StatusOK, out, nil
}

func (a *restAPI) getApplication(*apiRequest) (int, any, error) {
	return a.ok(func(v *world.View) any {
		bot := wireUserOf(v, v.Bot())
		return struct {
			ID          UserID   `json:"id"`
			Name        string   `json:"name"`
			Icon        *string  `json:"icon"`
			Description string   `json:"description"`
			BotPublic   bool     `json:"bot_public"`
			Bot         wireUser `json:"bot"`
			Flags       int      `json:"flags"`
		}{v.Bot(), bot.Username, nil, "", true, bot, 0}
	})
}

// inGuild renders what fn builds from the guild_id path value, for a
// caller that must be a member.
func (a *restAPI) inGuild(q *apiRequest, fn func(v *world.View, g world.Guild) (any, error)) (int, any, error) {
	var out any
	var err error
	a.world.Read(func(v *world.View) {
		g, e := v.GuildFor(GuildID(q.PathValue("guild_id")), q.user)
		if e != nil {
			err = e
			return
		}
		out, err = fn(v, g)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

func (a *restAPI) getGuild(q *apiRequest) (int, any, error) {
	return a.inGuild(q, func(v *world.View, g world.Guild) (any, error) { return wireGuildOf(v, g), nil })
}

func (a *restAPI) getGuildChannels(q *apiRequest) (int, any, error) {
	return a.inGuild(q, func(v *world.View, g world.Guild) (any, error) {
		out := []wireChannel{}
		for _, c := range v.Channels(g.ID) {
			if !c.Type.IsThread() {
				out = append(out, wireChannelOf(c))
			}
		}
		return out, nil
	})
}

func (a *restAPI) getGuildRoles(q *apiRequest) (int, any, error) {
	return a.inGuild(q, func(_ *world.View, g world.Guild) (any, error) { return wireRolesOf(g), nil })
}

func (a *restAPI) getActiveThreads(q *apiRequest) (int, any, error) {
	return a.inGuild(q, func(v *world.View, g world.Guild) (any, error) {
		threads := []wireChannel{}
		for _, c := range v.Channels(g.ID) {
			if c.Type.IsThread() {
				threads = append(threads, wireChannelOf(c))
			}
		}
		return struct {
			Threads []wireChannel     `json:"threads"`
			Members []json.RawMessage `json:"members"`
		}{threads, []json.RawMessage{}}, nil
	})
}

func (a *restAPI) getMember(q *apiRequest) (int, any, error) {
	return a.inGuild(q, func(v *world.View, g world.Guild) (any, error) {
		u := UserID(q.PathValue("user_id"))
		if !v.IsMember(g.ID, u) {
			return nil, world.ErrUnknownMember
		}
		return wireMemberOf(v, g, u, true), nil
	})
}

// GET /guilds/{id}/members?limit=&after= lists members by user id.
func (a *restAPI) listMembers(q *apiRequest) (int, any, error) {
	limit, err := intParam(q, "limit", 1, 1, 1000)
	if err != nil {
		return 0, nil, err
	}
	after := q.URL.Query().Get("after")
	return a.inGuild(q, func(v *world.View, g world.Guild) (any, error) {
		ids := slices.Clone(g.Members)
		slices.SortFunc(ids, func(a, b UserID) int {
			switch {
			case world.SnowflakeLess(string(a), string(b)):
				return -1
			case a == b:
				return 0
			}
			return 1
		})
		out := []wireMember{}
		for _, u := range ids {
			if after != "" && !world.SnowflakeLess(after, string(u)) {
				continue
			}
			if len(out) == limit {
				break
			}
			out = append(out, wireMemberOf(v, g, u, true))
		}
		return out, nil
	})
}

// inChannel renders what fn builds from the channel_id path value, for a
// caller that must be a member of its guild.
func (a *restAPI) inChannel(q *apiRequest, fn func(v *world.View, c world.Channel) (any, error)) (int, any, error) {
	var out any
	var err error
	a.world.Read(func(v *world.View) {
		c, e := v.ChannelFor(ChannelID(q.PathValue("channel_id")), q.user)
		if e != nil {
			err = e
			return
		}
		out, err = fn(v, c)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

func (a *restAPI) getChannel(q *apiRequest) (int, any, error) {
	return a.inChannel(q, func(_ *world.View, c world.Channel) (any, error) { return wireChannelOf(c), nil })
}

// intParam reads an integer query parameter within [lo, hi].
func intParam(q *apiRequest, name string, def, lo, hi int) (int, error) {
	v := q.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &world.Error{Status: 400, Code: world.CodeInvalidBody,
			Message: fmt.Sprintf("Invalid Form Body: %s: must be between %d and %d", name, lo, hi)}
	}
	return n, nil
}

// snowflakeParam reads a snowflake query parameter ("" when absent).
func snowflakeParam(q *apiRequest, name string) (string, error) {
	v := q.URL.Query().Get(name)
	if v == "" {
		return "", nil
	}
	if _, err := strconv.ParseUint(v, 10, 64); err != nil {
		return "", &world.Error{Status: 400, Code: world.CodeInvalidBody,
			Message: fmt.Sprintf("Invalid Form Body: %s: Value %q is not snowflake.", name, v)}
	}
	return v, nil
}

// PUT and DELETE /guilds/{g}/members/{u}/roles/{r}: give or take one role (204), as the
// caller; Discord's checks in world.ChangeMemberRoles (a managed role is 403 50013).
// https://discord.com/developers/docs/resources/guild#add-guild-member-role
func (a *restAPI) addMemberRole(q *apiRequest) (int, any, error) {
	return a.memberRoles(q, world.MemberRoleChange{Add: RoleID(q.PathValue("role_id"))})
}

// https://discord.com/developers/docs/resources/guild#remove-guild-member-role
func (a *restAPI) removeMemberRole(q *apiRequest) (int, any, error) {
	return a.memberRoles(q, world.MemberRoleChange{Remove: RoleID(q.PathValue("role_id"))})
}

func (a *restAPI) memberRoles(q *apiRequest, c world.MemberRoleChange) (int, any, error) {
	c.Guild, c.User, c.By = GuildID(q.PathValue("guild_id")), UserID(q.PathValue("user_id")), q.user
	if err := a.callerInGuild(c.Guild, q.user); err != nil {
		return 0, nil, err
	}
	if err := a.world.ChangeMemberRoles(c); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// callerInGuild refuses a caller who is not a member of g (404 Unknown Guild for an unknown
// guild, 403 Missing Access for a stranger), as inGuild does.
func (a *restAPI) callerInGuild(g GuildID, u UserID) error {
	var err error
	a.world.Read(func(v *world.View) { _, err = v.GuildFor(g, u) })
	return err
}

// PATCH /guilds/{g}/members/{u} (Modify Guild Member) with "roles" (the member's whole list
// of roles, as discord.js's member.roles.set sends it), "nick" (a string, or null or "" to
// clear it), and the voice fields a moderator's client sends: "channel_id" (move the member
// to that voice channel, or null to disconnect them), "mute" and "deaf" (server mute and
// deafen; null leaves them). The whole request is checked before anything changes, and
// applies entirely or not at all (world.ModifyMember): 200 with the member. Other fields are
// not simulated yet: 400 50035 naming them, rather than silently ignored.
//
// PATCH /guilds/{g}/members/@me (Modify Current Member) takes "nick" alone, which needs
// Change Nickname; its other fields (avatar, bio, banner) are not simulated, and a field of
// Modify Guild Member there is 400 50035 too.
// https://discord.com/developers/docs/resources/guild#modify-guild-member
// https://discord.com/developers/docs/resources/guild#modify-current-member
func (a *restAPI) modifyMember(q *apiRequest) (int, any, error) {
	var body map[string]json.RawMessage
	if err := decodeBody(q, &body); err != nil {
		return 0, nil, err
	}
	g, u := GuildID(q.PathValue("guild_id")), UserID(q.PathValue("user_id"))
	current := u == "@me"
	edit, err := parseModifyMember(body, current)
	if err != nil {
		return 0, nil, err
	}
	if current {
		u = q.user
	}
	if err := a.callerInGuild(g, q.user); err != nil {
		return 0, nil, err
	}
	if err := a.applyMemberEdit(q.user, g, u, edit); err != nil {
		return 0, nil, err
	}
	return a.inGuild(q, func(v *world.View, gd world.Guild) (any, error) {
		if !v.IsMember(gd.ID, u) {
			return nil, world.ErrUnknownMember
		}
		return wireMemberOf(v, gd, u, true), nil
	})
}

// parseModifyMember reads a Modify Guild Member body (Modify Current Member's with current),
// or 400 50035 naming a field that is not simulated, not the route's, or of the wrong shape.
func parseModifyMember(body map[string]json.RawMessage, current bool) (world.MemberEdit, error) {
	var e world.MemberEdit
	bad := func(msg string) (world.MemberEdit, error) {
		return world.MemberEdit{}, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: "Invalid Form Body: " + msg}
	}
	for k, raw := range body {
		if current && k != "nick" {
			switch k {
			case "avatar", "bio", "banner":
				return bad(fmt.Sprintf("%s: not simulated (only nick is, for @me)", k))
			}
			return bad(fmt.Sprintf("%s: not a field of Modify Current Member (@me takes nick, avatar, bio, banner)", k))
		}
		switch k {
		case "roles":
			if err := json.Unmarshal(raw, &e.Roles); err != nil || e.Roles == nil {
				return bad("roles: must be an array of role ids")
			}
		case "nick":
			var n *string
			if err := json.Unmarshal(raw, &n); err != nil {
				return bad("nick: must be a string or null")
			}
			if n == nil {
				n = new(string)
			}
			if utf8.RuneCountInString(*n) > world.MaxNick {
				return bad(fmt.Sprintf("nick: Must be %d or fewer in length.", world.MaxNick))
			}
			e.Nick = n
		case "channel_id":
			target, msg := nullableChannel(raw, k)
			if msg != "" {
				return bad(msg)
			}
			e.Voice.Channel = &target
		case "mute", "deaf":
			var b *bool
			if err := json.Unmarshal(raw, &b); err != nil {
				return bad(k + ": must be a boolean or null")
			}
			if k == "mute" {
				e.Voice.Mute = b
			} else {
				e.Voice.Deaf = b
			}
		default:
			return bad(fmt.Sprintf("%s: not simulated (only roles, nick, channel_id, mute and deaf are)", k))
		}
	}
	return e, nil
}
